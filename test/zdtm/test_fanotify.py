"""fanotify groups criu can't save are refused by name, before anything is
changed: a mark on a file that was deleted (fanotify_marks "deleted"). The
task runs on as it was. (fanotify_marks itself, in every flavour, is the
round trip.)"""
from __future__ import annotations

import pytest

import zdtm
from test_shapes import refused

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")


def test_mark_on_deleted_file_refused() -> None:
    with zdtm.Run("fanotify_marks", "deleted", args=["deleted"]) as r:
        r.start()
        snap = r.snapshot()
        refused(r, r.dump(r.imgdir("img")), ("fanotify", "deleted"))
        r.check_running("after the refused dump", snap)
        r.finish()
