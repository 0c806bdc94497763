"""Open files criu refuses to dump: a listening TCP socket, listening and
bound unix sockets, a socket pair whose peer is outside the tree, an epoll
watching an fd the task closed. criu must fail cleanly (non-zero exit, one
stderr line with "Error" that names the task and the object) and the task
must go on untouched and pass its own check (test_errors.py's contract)."""
from __future__ import annotations

import pytest

import zdtm
from test_errors import check_clean_error

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")

REFUSED = {
    # argument of static/files_refused -> words one of which the line must hold
    "tcp-listen": ("listening tcp",),
    "unix-listen": ("listening unix",),
    "unix-bound": ("bound to files_refused.sock",),
    "unix-outside": ("outside the dumped tree",),
    "epoll-closed": ("closed",),
}


@pytest.fixture(autouse=True)
def _need_criu():
    if not zdtm.criu_available():
        pytest.fail(f"criu not found at {zdtm.CRIU} (build it or set CRIU)")


@pytest.mark.parametrize("what", list(REFUSED))
def test_dump_refused_file(what):
    with zdtm.Run("files_refused", f"refused-{what}", args=[what]) as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        res = r.dump(img)
        line = check_clean_error(r, res, f"dump of a task holding {what}", REFUSED[what],
                                 r.pid)
        r.note(f"refused: {line}")
        r.check_running(f"after the refused dump ({what})", snap)
        r.finish()
