"""A fanotify mark on a file deleted while the task holds it open
(fanotify_marks "deleted"): the dump saves the file (a ghost) and the mark
goes on the one the restore makes; writing through the task's fd fires it.
(fanotify_marks itself, in every flavour, is the round trip; a mark on a
file gone otherwise is refused as test_irmap.py's inotify watch is.)
Events queued and not read are not saved: the dump says so, naming the
task, the fd and the bytes (inotify_watches "unread")."""
from __future__ import annotations

import pytest

import zdtm

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")


def test_mark_on_deleted_file() -> None:
    with zdtm.Run("fanotify_marks", "deleted", args=["deleted"]) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        if "is the deleted file" not in (img / "dump.log").read_text(errors="replace"):
            r.fail("the dump did not take the mark as one on a deleted file")
        r.restore_ok(img)
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
