"""Open files criu refuses to dump: a listening TCP socket, listening and
bound unix sockets, a socket pair whose peer is outside the tree, an epoll
watching an fd the task closed. criu must fail cleanly (non-zero exit, one
stderr line with "Error" that names the task and the object) and the task
must go on untouched and pass its own check (test_errors.py's contract)."""
from __future__ import annotations

import pytest

import zdtm
from test_errors import check_refused_dump

pytestmark = pytest.mark.usefixtures("need_criu")

REFUSED = {
    # argument of static/files_refused -> words one of which the line must hold
    "tcp-listen": ("listening tcp",),
    "unix-listen": ("listening unix",),
    "unix-bound": ("bound to files_refused.sock",),
    "unix-outside": ("outside the dumped tree",),
    "epoll-closed": ("closed",),
}


@pytest.mark.parametrize("what", list(REFUSED))
def test_dump_refused_file(what):
    with zdtm.Run("files_refused", f"refused-{what}", args=[what]) as r:
        check_refused_dump(r, f"a task holding {what}", REFUSED[what])
