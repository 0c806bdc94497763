"""fanotify groups criu can't save are refused by name, before anything is
changed: a mark on a file that was deleted (fanotify_marks "deleted"). The
task runs on as it was. (fanotify_marks itself, in every flavour, is the
round trip.) Events queued and not read are not saved: the dump says so,
naming the task, the fd and the bytes (inotify_watches "unread")."""
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


def test_unread_events_warned() -> None:
    with zdtm.Run("inotify_watches", "unread", args=["unread"]) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        log = (img / "dump.log").read_text()
        warned = [ln for ln in log.splitlines() if "not read yet" in ln]
        assert len(warned) == 1 and f"Task {r.pid}: inotify fd" in warned[0] and \
            "bytes of events" in warned[0], warned or log[-2000:]
        r.restore_ok(img)
        r.finish()
