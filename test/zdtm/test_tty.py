"""Terminals criu refuses to dump (static/tty_refused): data queued unread
on either end of a pty, a slave whose master is outside the tree (without
--inherit-fd), the system console. criu must fail cleanly (one stderr line
with "Error" that names the task and the reason) and the task must go on
untouched, its queued data still there (test_errors.py's contract)."""
from __future__ import annotations

import pytest

import zdtm
from test_errors import check_refused_dump

pytestmark = pytest.mark.usefixtures("need_criu")

REFUSED = {
    # argument of static/tty_refused -> words one of which the line must hold
    "queued-master": ("queued unread",),
    "queued-slave": ("queued unread",),
    "outside": ("outside the tree",),
    "console": ("system console",),
}


@pytest.mark.parametrize("what", list(REFUSED))
def test_dump_refused_tty(what: str) -> None:
    with zdtm.Run("tty_refused", f"refused-{what}", args=[what]) as r:
        check_refused_dump(r, f"a task holding {what}", REFUSED[what])
