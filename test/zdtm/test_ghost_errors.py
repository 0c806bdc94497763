"""Deleted files ("ghost files") criu refuses to dump: bigger than
--ghost-limit (held open, or only mapped), or still linked under another
name, without --link-remap. criu must fail cleanly with one
line naming the task, the fd or area, the path, and the size and option
(test_errors.py's contract), and the task goes on untouched. A restore
killed while it makes a ghost again leaves nothing behind."""
from __future__ import annotations

import hashlib
import os
import signal
from pathlib import Path

import pytest

import rpcclient as rpc
import zdtm
from test_errors import check_clean_error, check_refused_dump

pytestmark = pytest.mark.usefixtures("need_criu")

REFUSED: dict[str, tuple[list[str], tuple[str, ...]]] = {
    # argument of static/file_ghost_refused -> dump options, words the line must hold
    "big": ([], ("fd 3: deleted file", "2097152 bytes, over --ghost-limit 1048576")),
    "big-mapped": ([], ("the area at 0x", "2097152 bytes, over --ghost-limit 1048576")),
    "linked": ([], ("other link(s)", "--link-remap")),
    "small-limit": (["--ghost-limit", "4K"], ("over --ghost-limit 4096",)),
}


@pytest.mark.parametrize("what", list(REFUSED))
def test_dump_refused_ghost(what: str) -> None:
    opts, words = REFUSED[what]
    arg = "big" if what == "small-limit" else what
    with zdtm.Run("file_ghost_refused", f"refused-{what}", args=[arg]) as r:
        line = check_refused_dump(r, f"a task holding a {what} ghost", words[:1], opts=opts)
        for w in words[1:]:
            assert w in line, f"'{w}' is not in: {line}"
        assert "file_ghost_refused.ghost (deleted)" in line, line


def _image_sums(img: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in img.iterdir()
            if p.is_file() and p.suffix == ".img"}


def test_restore_killed_leaves_no_ghost() -> None:
    """criu killed while it fills a ghost file (CRIU_FAULT=ghost-filled):
    nothing is left in the ghost's directory and the images are unchanged;
    a restore after it brings the task back as it was."""
    with zdtm.Run("file_ghost", "ghost-killed") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img)
        before = set(os.listdir(r.dir))
        sums = _image_sums(img)
        res, _ = r.restore(img, env=dict(os.environ, CRIU_FAULT="ghost-filled"))
        if res.returncode != -signal.SIGKILL:
            r.fail(f"CRIU_FAULT=ghost-filled: criu exited with {res.returncode}", res)
        left = sorted(n for n in set(os.listdir(r.dir)) - before if "ghost" in n)
        if left:
            r.fail(f"the killed restore left {left} in {r.dir}", res)
        if _image_sums(img) != sums:
            r.fail("the killed restore changed the images", res)
        r.restore_ok(img)
        r.check_running("after the restore that followed the killed one", snap)
        r.finish()


def test_rpc_ghost_limit() -> None:
    """The RPC field ghost_limit is --ghost-limit: a 2 MiB ghost is refused
    with CRIU's default (1 MiB) and dumped with 4 MiB (leave_running, so
    the task then checks its file)."""
    with zdtm.Run("file_ghost_refused", "rpc-ghost-limit", args=["big"]) as r:
        r.start()
        snap = r.snapshot()
        for n, limit in enumerate((1 << 20, 4 << 20)):
            img = r.imgdir(f"img{n}")
            fd = os.open(img, os.O_RDONLY | os.O_DIRECTORY)
            try:
                s = rpc.Swrk(zdtm.CRIU, log=r.dir / f"swrk{n}.out")
                resp = s.call(rpc.request("DUMP", images_dir_fd=fd, pid=r.pid,
                                          log_file="dump.log", leave_running=True,
                                          ghost_limit=limit))
                s.wait()
            finally:
                os.close(fd)
            if n == 0:
                assert not resp.success, "a 2 MiB ghost was dumped with ghost_limit 1 MiB"
                log = (img / "dump.log").read_text(errors="replace")
                assert "over --ghost-limit 1048576" in log, log[-2000:]
            else:
                assert resp.success, (img / "dump.log").read_text(errors="replace")[-2000:]
            r.check_running(f"after the RPC dump with ghost_limit {limit}", snap)
        r.finish()


def test_restore_ghost_dir_gone() -> None:
    """The directory a ghost was in is gone at restore: one line says so,
    nothing is left behind, the images are unchanged; with the directory
    back the restore works."""
    with zdtm.Run("file_ghost_refused", "ghost-dir-gone", args=["in-dir"]) as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img)
        gone = r.dir / "file_ghost_refused.dir"
        gone.rmdir()
        sums = _image_sums(img)
        res, _ = r.restore(img)
        if res.returncode == 0:
            r.ours = False
            r.fail("the restore worked without the ghost's directory", res)
        line = check_clean_error(r, res, "restore of a ghost whose directory is gone",
                                 ("is gone",), 0)
        assert str(gone) in line, line
        if _image_sums(img) != sums:
            r.fail("the failed restore changed the images", res)
        if zdtm.pid_exists(r.pid):
            r.fail(f"pid {r.pid} exists after the failed restore", res)
        gone.mkdir()
        r.restore_ok(img)
        r.check_running("after the restore with the directory back", snap)
        r.finish()


def test_restore_ghost_name_taken() -> None:
    """A file of the ghost's name exists again at restore: the ghost is made
    under a name of criu's in the same directory (its fd shows that name,
    deleted), the new file is left as it is, and nothing else is left."""
    with zdtm.Run("file_ghost_refused", "ghost-name-taken", args=["in-dir"]) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        d = r.dir / "file_ghost_refused.dir"
        taken = d / "file_ghost_refused.ghost"
        taken.write_text("someone else's")
        r.restore_ok(img)
        links = [os.readlink(f"/proc/{r.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{r.pid}/fd")]
        ghosts = [ln for ln in links if ln.startswith(str(d) + "/")]
        assert len(ghosts) == 1 and ghosts[0].startswith(f"{d}/.criu-ghost.") and \
            ghosts[0].endswith(" (deleted)"), links
        assert taken.read_text() == "someone else's"
        assert sorted(os.listdir(d)) == [taken.name], os.listdir(d)
        taken.unlink()
        r.finish()
