"""pidfds criu refuses to dump (static/pidfd_refused.c): of a process
outside the tree, and of a thread other than the leader. The dump fails
cleanly, naming the task, the fd and the process, and the task goes on
with its pidfd (test_errors.py's contract). What is dumped is in
static/pidfd_tree.c."""
from __future__ import annotations

import pytest

import zdtm
from test_errors import check_refused_dump

pytestmark = pytest.mark.usefixtures("need_criu")

REFUSED = {
    # argument of static/pidfd_refused -> words one of which the line must hold
    "outside": ("outside the dumped tree",),
    "thread": ("pidfd_thread",),
}


@pytest.mark.parametrize("what", list(REFUSED))
def test_dump_refused_pidfd(what):
    with zdtm.Run("pidfd_refused", f"refused-{what}", args=[what]) as r:
        line = check_refused_dump(r, f"a pidfd {what}", REFUSED[what])
        assert "pidfd" in line and "fd " in line, line
