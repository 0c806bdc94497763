"""pidfds criu refuses to dump (static/pidfd_refused.c): of a process
outside the tree, and of a thread other than the leader. The dump fails
cleanly, naming the task, the fd and the process, and the task goes on
with its pidfd (test_errors.py's contract); and a files.img whose pidfd
names a process the tree lacks is refused at restore. What is dumped is
in static/pidfd_tree.c."""
from __future__ import annotations

import shutil
import sys

import pytest

import buildpaths
import zdtm
from test_errors import check_refused_dump
from test_file_locks import restore_refused

sys.path.insert(0, str(buildpaths.CRIT.parent))
import crit  # noqa: E402

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


def test_pidfd_image_checked():
    """A files.img whose pidfd names a process that is not a task of the
    tree: the restore fails in one line naming it, before anything is
    created, and changes no image; the good images still restore."""
    with zdtm.Run("pidfd_tree", "bad-pidfd-image") as r:
        r.start()
        good = r.imgdir("img")
        r.dump_ok(good)
        bad = r.dir / "bad"
        shutil.copytree(good, bad)
        doc = crit.read_image(bad / "files.img", full_bytes=True)
        pidfds = [f for f in doc["entry"]["files"] if "pidfd" in f]
        assert pidfds, "no pidfd in files.img"
        pidfds[0]["pidfd"]["pid"] = 4000000
        (bad / "files.img").write_bytes(crit.encode_image(doc))
        restore_refused(r, bad, "restore of a pidfd of a process not in the tree",
                        ("4000000",))
        r.restore_ok(good)
        r.finish()
