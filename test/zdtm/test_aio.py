"""aio rings criu refuses, and refuses clearly (static/aio_refused.c,
static/aio_ring.c): a ring with a request in flight (a poll of an empty
pipe), a ring holding more unreaped events than a restore can
queue again, and a ring whose header the task wrote over, are refused at
the dump naming the task and the ring, and the task goes on with its ring
as it was (test_errors.py's contract); an aio-PID.img edited with crit
(a ring whose size is not its area's, events that are not those from head
to tail, a head beyond the ring) is refused at restore before
any task exists, leaving nothing and changing no image, and the good
images still restore. What is kept is in static/aio_ring.c."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

import buildpaths
import zdtm
from test_errors import check_refused_dump, cycle_with
from test_file_locks import restore_refused

sys.path.insert(0, str(buildpaths.CRIT.parent))
import crit  # noqa: E402

pytestmark = pytest.mark.usefixtures("need_criu")

REFUSED = {
    # argument of static/aio_refused -> words one of which the line must hold
    "full": ("more completed events",),
    "damaged": ("not an aio ring",),
    "inflight": ("in flight",),
}


@pytest.mark.parametrize("what", list(REFUSED))
def test_dump_refused_aio(what):
    with zdtm.Run("aio_refused", f"refused-{what}", args=[what]) as r:
        line = check_refused_dump(r, f"an aio ring {what}", REFUSED[what])
        assert "aio ring at 0x" in line, line


@pytest.mark.parametrize("point", ["memory", "written"])
def test_dump_killed_aio(point):
    """criu SIGKILLs itself once the batch has put its fillers in the ring
    and the aio part took them out (the first part to dump): the task goes
    on and reaps its own event, and only it. (Killed between the batch and
    the first part's dump, at "infected", it would find the fillers'
    events: design.md.)"""
    with zdtm.Run("aio_refused", f"fault-{point}", args=["idle"]) as r:
        r.start()
        snap = r.snapshot()
        res = r.dump(r.imgdir("img"), env=dict(os.environ, CRIU_FAULT=point))
        if res.returncode != -signal.SIGKILL:
            r.fail(f"CRIU_FAULT={point}: criu exited with {res.returncode}, "
                   "not by SIGKILL", res)
        r.check_running(f"after criu was killed at '{point}'", snap)
        r.finish()


def edit_aio(src: Path, dst: Path, pid: int, change: Callable[[Any], None]) -> None:
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    name = dst / f"aio-{pid}.img"
    doc = crit.read_image(name, full_bytes=True)
    change(doc["entry"]["rings"][0])
    name.write_bytes(crit.encode_image(doc))


BAD: dict[str, Callable[[Any], None]] = {
    # what is wrong -> the change to the first ring
    "size": lambda ring: ring.update(nr=ring["nr"] + 1),
    "events": lambda ring: ring.update(events=ring["events"][:-64]),
    "head": lambda ring: ring.update(head=ring["nr"]),
}


@pytest.mark.parametrize("what", list(BAD))
def test_aio_image_checked(what):
    with zdtm.Run("aio_ring", f"bad-image-{what}") as r:
        r.start()
        good = r.imgdir("img")
        r.dump_ok(good)
        bad = r.dir / "bad"
        edit_aio(good, bad, r.pid, BAD[what])
        restore_refused(r, bad, f"restore with an aio ring whose {what} is wrong",
                        ("aio",), r.pid)
        r.restore_ok(good)
        r.finish()


def test_check_feature_aio_remap():
    """criu check --feature aio_remap says yes: criu moves rings with mremap."""
    p = subprocess.run([zdtm.CRIU, "check", "--feature", "aio_remap"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and "aio_remap" in p.stdout, p


@pytest.mark.parametrize("what", ["thread", "child"])
def test_aio_with(what):
    """aio_rings with a second thread (the rings are the mm's, made again
    by the leader while the thread waits) or a child (which has copies of
    the areas and no context: fork copies the area only; each comes back
    as a ring of the child's own): dump, restore, and the rings and the
    extra are there when the program checks itself."""
    cycle_with("aio_rings", what)
