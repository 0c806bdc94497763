"""Iterative dumps: criu pre-dump --track-mem, rounds with --prev-images-dir,
the final dump, and restore through the chain of parent images.

The tracking is userfaultfd write-protection in asynchronous mode read with
PAGEMAP_SCAN (Documentation/pre-dump.md); where the kernel lacks it, every
test here is skipped with the reason criu check gives.

static/mem_predump writes known patterns between the rounds (SIGUSR1: the
next phase), drops pages, maps a new area over an old one and moves one
with mremap; at SIGTERM it recomputes every page from the number of phases
alone, so the restored memory is checked page by page.

Run: python3 -m pytest -q test/zdtm/test_predump.py
"""
from __future__ import annotations

import ctypes
import errno
import json
import os
import signal
import struct
import subprocess
import sys
import time

import pytest

import buildpaths
import zdtm
from test_shapes import criu_limited, refused, restore_limited, room_named

pytestmark = pytest.mark.usefixtures("need_criu")

CRIT = buildpaths.CRIT
PROG = "mem_predump"


# the kernel's interfaces, asked here and not through criu: a criu that
# can't track must fail these tests where the kernel can
NR_USERFAULTFD = 323                    # x86_64
UFFDIO_API = 0xC018AA3F
UFFD_API = 0xAA
WP_UNPOPULATED, WP_ASYNC = 1 << 13, 1 << 15     # Linux 6.6, 6.7
PAGEMAP_SCAN = 0xC0606610               # _IOWR('f', 16, struct pm_scan_arg), Linux 6.7


def kernel_lacks() -> str:
    """Why this kernel can't track writes for pre-dumps; '' when it can."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.syscall(NR_USERFAULTFD, os.O_CLOEXEC | 1)
    if fd < 0:
        return f"no userfaultfd ({os.strerror(ctypes.get_errno())})"
    arg = ctypes.create_string_buffer(struct.pack("QQQ", UFFD_API, 0, 0))
    ret = libc.ioctl(fd, UFFDIO_API, arg)
    os.close(fd)
    features = struct.unpack("QQQ", arg.raw[:24])[1]
    if ret or (features & (WP_ASYNC | WP_UNPOPULATED)) != WP_ASYNC | WP_UNPOPULATED:
        return "userfaultfd lacks UFFD_FEATURE_WP_ASYNC (Linux 6.7)"
    pm = os.open("/proc/self/pagemap", os.O_RDONLY)
    ret = libc.ioctl(pm, PAGEMAP_SCAN, ctypes.create_string_buffer(96))
    err = ctypes.get_errno()
    os.close(pm)
    if ret < 0 and err != errno.EINVAL:
        return "no PAGEMAP_SCAN ioctl (Linux 6.7)"
    return ""


@pytest.fixture(autouse=True)
def need_tracking() -> None:
    why = kernel_lacks()
    if why:
        pytest.skip(f"no dirty-page tracking on this kernel: {why}")


def test_check_feature() -> None:
    """criu check --feature mem_dirty_track says yes where the kernel can."""
    p = subprocess.run([zdtm.CRIU, "check", "--feature", "mem_dirty_track"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and "mem_dirty_track is supported" in p.stdout, p


def phase(r: zdtm.Run, n: int) -> None:
    """Runs the program's phase n and waits for it to be done."""
    os.kill(r.pid, signal.SIGUSR1)
    done = r.dir / "phase.done"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if done.read_text().strip() == str(n):
                r.note(f"phase {n}")
                return
        except OSError:
            pass
        time.sleep(0.01)
    r.fail(f"phase {n} not done in time")


def round_(r: zdtm.Run, cmd: str, img: zdtm.Path, prev: str | None,
           extra: list[str] = [], env: dict[str, str] | None = None) -> zdtm.CriuResult:
    args = [cmd, "-t", str(r.pid), "-D", str(img), "-o", "dump.log", "-v4", "--track-mem"]
    if prev:
        args += ["--prev-images-dir", prev]
    return r.criu(args + extra, img / "dump.log", env=env)


def round_ok(r: zdtm.Run, cmd: str, img: zdtm.Path, prev: str | None,
             extra: list[str] = []) -> None:
    res = round_(r, cmd, img, prev, extra)
    if res.returncode:
        r.fail(f"criu {cmd} failed", res)


def pagemap(r: zdtm.Run, img: zdtm.Path, pid: int = 0) -> dict:
    p = subprocess.run([sys.executable, str(CRIT), "decode", "-i",
                        str(img / f"pagemap-{pid or r.pid}.img")],
                       capture_output=True, text=True)
    if p.returncode:
        r.fail(f"crit decode pagemap: {p.stderr.strip()}")
    return json.loads(p.stdout)["entry"]


def in_parent_pages(r: zdtm.Run, img: zdtm.Path, pid: int = 0) -> int:
    return sum(run["nr_pages"] for run in pagemap(r, img, pid).get("runs", [])
               if run.get("in_parent"))


def ours(d: zdtm.Path) -> bool:
    """A criu process but a lazy-pages daemon (a tracker is one), or one of
    the test programs: not another test's restored tree, which may hold a
    userfaultfd of its own (test_lazy.py)."""
    try:
        exe = os.readlink(d / "exe")
        cmd = (d / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if exe == os.path.realpath(zdtm.CRIU):
        return b"lazy-pages" not in cmd
    return exe == os.path.realpath(zdtm.BUILD / "static" / PROG)


def uffd_holders() -> list[int]:
    """Our processes (ours()) holding a userfaultfd."""
    out = []
    for d in zdtm.Path("/proc").iterdir():
        if not d.name.isdigit() or not ours(d):
            continue
        try:
            for fd in (d / "fd").iterdir():
                if "userfaultfd" in os.readlink(fd):
                    out.append(int(d.name))
                    break
        except OSError:
            continue
    return out


def wp_areas(pid: int) -> int:
    """Areas of pid registered for userfaultfd write-protection (smaps 'uw')."""
    n = 0
    for line in zdtm.Path(f"/proc/{pid}/smaps").read_text().splitlines():
        if line.startswith("VmFlags:") and " uw" in line:
            n += 1
    return n


def check_untracked(r: zdtm.Run, what: str) -> None:
    left = wp_areas(r.pid)
    if left:
        r.fail(f"{what}: {left} areas of the task are still write-protect registered")
    holders = uffd_holders()
    if holders:
        r.fail(f"{what}: processes {holders} still hold a userfaultfd")


def test_chain_restores_every_page():
    """Three pre-dumps and a dump, phases of writes in between (one pair of
    phases in one gap); each round after the first stores only what was
    written and leaves the rest in its parent; the child forked in phase 2
    is saved whole by the round after, and tracked from then on; the
    restore through the chain gives every page of both what the phases
    wrote last, holes and dropped pages zero, the area mapped over its old
    one without its old pages, the moved area at its new place."""
    with zdtm.Run(PROG, "chain") as r:
        r.start()
        d = [r.imgdir(f"d{i}") for i in range(1, 5)]
        round_ok(r, "pre-dump", d[0], None)
        r.check_running("after the first pre-dump")
        if not wp_areas(r.pid):
            r.fail("the first pre-dump left no area write-protect registered")
        phase(r, 1)
        round_ok(r, "pre-dump", d[1], "../d1")
        r.check_running("after the second pre-dump")
        phase(r, 2)
        kids = zdtm.Path(f"/proc/{r.pid}/task/{r.pid}/children").read_text().split()
        if len(kids) != 1:
            r.fail(f"phase 2 should have forked one child, found {kids}")
        kid = int(kids[0])
        round_ok(r, "pre-dump", d[2], "../d2")
        if in_parent_pages(r, d[2], kid):
            r.fail("the child forked since the previous round left pages in the parent")
        phase(r, 3)
        phase(r, 4)
        res = round_(r, "dump", d[3], "../d3")
        if res.returncode:
            r.fail("the final dump failed", res)
        r.gone_after_dump(res)
        sizes = [(x / f"pages-{r.pid}.img").stat().st_size for x in d]
        for i in (1, 2, 3):
            if not in_parent_pages(r, d[i]):
                r.fail(f"round {i + 1} left no page in its parent")
            if sizes[i] >= sizes[0]:
                r.fail(f"round {i + 1} stored {sizes[i]} bytes, the first {sizes[0]}")
            if os.readlink(d[i] / "parent") != f"../d{i}":
                r.fail(f"round {i + 1}: no parent link to ../d{i}")
        if not in_parent_pages(r, d[3], kid):
            r.fail("the child, tracked since the third round, left nothing in the parent")
        if uffd_holders():
            r.fail(f"a userfaultfd is held after the final dump: {uffd_holders()}")
        (r.dir / "phases").write_text("4\n")
        r.restore_ok(d[3])
        r.finish()


def test_final_dump_leaves_task_untracked():
    """dump --leave-running at the end of a chain: the task runs on with no
    area registered and no tracker holding anything."""
    with zdtm.Run(PROG, "untrack") as r:
        r.start()
        d1, d2 = r.imgdir("d1"), r.imgdir("d2")
        round_ok(r, "pre-dump", d1, None)
        if not wp_areas(r.pid) or not uffd_holders():
            r.fail("the pre-dump left nothing tracked")
        phase(r, 1)
        round_ok(r, "dump", d2, "../d1", ["--leave-running"])
        r.check_running("after the final dump --leave-running")
        check_untracked(r, "after the final dump")
        (r.dir / "phases").write_text("1\n")
        r.finish()


def test_killed_round_leaves_task_untracked():
    """criu killed in the middle of a round that took the tracking over:
    the task runs on, untracked (the kernel dropped the registrations with
    the last fd), and its memory is as the phases left it."""
    with zdtm.Run(PROG, "killed") as r:
        r.start()
        d1, d2 = r.imgdir("d1"), r.imgdir("d2")
        round_ok(r, "pre-dump", d1, None)
        phase(r, 1)
        res = round_(r, "pre-dump", d2, "../d1", env=dict(os.environ, CRIU_FAULT="memory"))
        if res.returncode != -signal.SIGKILL:
            r.fail(f"CRIU_FAULT=memory: criu exited with {res.returncode}", res)
        r.check_running("after criu was killed in a round")
        check_untracked(r, "after criu was killed in a round")
        phase(r, 2)
        (r.dir / "phases").write_text("2\n")
        r.finish()


def test_lost_tracker_saves_everything():
    """The tracker of the previous round is gone (killed): the next round
    says so and saves every page again, and the chain still restores."""
    with zdtm.Run(PROG, "lost") as r:
        r.start()
        d1, d2 = r.imgdir("d1"), r.imgdir("d2")
        round_ok(r, "pre-dump", d1, None)
        for pid in uffd_holders():
            if pid != r.pid:
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while wp_areas(r.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        phase(r, 1)
        res = round_(r, "dump", d2, "../d1")
        if res.returncode:
            r.fail("the dump after a lost tracker failed", res)
        r.gone_after_dump(res)
        if in_parent_pages(r, d2):
            r.fail("pages were left in the parent with no tracking between the rounds")
        (r.dir / "phases").write_text("1\n")
        r.restore_ok(d2)
        r.finish()


@pytest.mark.parametrize("cmd,args,word", [
    ("dump", ["--prev-images-dir", "../d1"], "--track-mem"),
    ("pre-dump", ["--prev-images-dir", "../nonexistent"], "nonexistent"),
    ("pre-dump", ["--auto-dedup"], "--prev-images-dir"),
])
def test_refused(cmd: str, args: list[str], word: str) -> None:
    """A round that can't be done is refused with one line naming why, and
    the task runs on untouched (a dump needs --track-mem to use a previous
    round; a pre-dump implies it)."""
    with zdtm.Run(PROG, "refused") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("d2")
        r.imgdir("d1")
        res = r.criu([cmd, "-t", str(r.pid), "-D", str(img)] + args)
        errs = zdtm.error_lines(res.stderr)
        if res.returncode == 0 or len(errs) != 1 or word not in errs[0]:
            r.fail(f"expected one error line naming {word}", res)
        r.check_running("after a refused pre-dump", snap)
        check_untracked(r, "after a refused pre-dump")
        (r.dir / "phases").write_text("0\n")
        r.finish()


def test_round_again_into_same_dir():
    """A pre-dump done again into the same directory stops the tracker the
    first one left there: one tracker is left, holding the tracking, and
    the chain goes on from that directory."""
    with zdtm.Run(PROG, "again") as r:
        r.start()
        d1, d2 = r.imgdir("d1"), r.imgdir("d2")
        round_ok(r, "pre-dump", d1, None)
        phase(r, 1)
        round_ok(r, "pre-dump", d1, None)
        holders = [p for p in uffd_holders() if p != r.pid]
        if len(holders) != 1:
            r.fail(f"expected one tracker after the second round into d1, found {holders}")
        phase(r, 2)
        res = round_(r, "dump", d2, "../d1")
        if res.returncode:
            r.fail("the dump after a round done again failed", res)
        r.gone_after_dump(res)
        if not in_parent_pages(r, d2):
            r.fail("the dump left nothing in the parent: the tracking was lost")
        (r.dir / "phases").write_text("2\n")
        r.restore_ok(d2)
        r.finish()


# programs whose state the chain must keep too: threads (shapes), a tree
# sharing pages copy-on-write (mem_cow_tree: in_pid and in_parent together),
# private file mappings, guard regions, a growing stack, sparse areas
CHAIN_PROGRAMS = ["shapes", "mem_cow_tree", "mem_file_private", "mem_guard_region",
                  "mem_growsdown", "mem_sparse", "mem_brk", "mem_shared_tree"]


@pytest.mark.parametrize("name,dedup", [(n, False) for n in CHAIN_PROGRAMS] +
                         [("mem_cow_tree", True), ("shapes", True)])
def test_chain_flavour(name: str, dedup: bool) -> None:
    """pre-dump, pre-dump --prev-images-dir, dump --prev-images-dir, restore
    from the last: the program's own check passes, as after a plain dump;
    with --auto-dedup too (the copy-on-write tree: pages a child still
    shares in a parent round are not freed)."""
    desc = zdtm.load_desc(name)
    more = ["--auto-dedup"] if dedup else []
    with zdtm.Run(name, "predump-chain", args=desc.args) as r:
        r.start()
        snap = r.snapshot()
        d = [r.imgdir(f"d{i}") for i in range(1, 4)]
        round_ok(r, "pre-dump", d[0], None, desc.dump_opts)
        r.check_running("after the first pre-dump", snap)
        round_ok(r, "pre-dump", d[1], "../d1", desc.dump_opts + more)
        res = round_(r, "dump", d[2], "../d2", desc.dump_opts + more)
        if res.returncode:
            r.fail("the final dump failed", res)
        r.gone_after_dump(res)
        if uffd_holders():
            r.fail(f"a userfaultfd is held after the final dump: {uffd_holders()}")
        r.restore_ok(d[2], desc.restore_opts)
        r.finish(desc.expect)


def stored_blocks(img: zdtm.Path, pid: int) -> int:
    """Bytes the store of pid in img takes on disk (holes not counted)."""
    return (img / f"pages-{pid}.img").stat().st_blocks * 512


def test_auto_dedup_frees_parent_pages():
    """--auto-dedup: each round frees in its parents the pages it stored
    again (holes, the stores keep their size), but not those another task
    of a parent round points at (the child forked in phase 2 shares pages
    its parent stored in d3 and rewrites in phase 3); the restore from the
    last round still gives both tasks every page the phases wrote last."""
    with zdtm.Run(PROG, "dedup") as r:
        r.start()
        d = [r.imgdir(f"d{i}") for i in range(1, 5)]
        round_ok(r, "pre-dump", d[0], None)
        size = (d[0] / f"pages-{r.pid}.img").stat().st_size
        before = stored_blocks(d[0], r.pid)
        phase(r, 1)
        round_ok(r, "pre-dump", d[1], "../d1", ["--auto-dedup"])
        after = stored_blocks(d[0], r.pid)
        if after >= before or (d[0] / f"pages-{r.pid}.img").stat().st_size != size:
            r.fail(f"d1's store: {before} bytes on disk before the round, {after} after "
                   f"(size {size})")
        phase(r, 2)
        round_ok(r, "pre-dump", d[2], "../d2", ["--auto-dedup"])
        d3 = stored_blocks(d[2], r.pid)
        phase(r, 3)
        res = round_(r, "dump", d[3], "../d3", ["--auto-dedup"])
        if res.returncode:
            r.fail("the final dump --auto-dedup failed", res)
        r.gone_after_dump(res)
        if stored_blocks(d[2], r.pid) >= d3:
            r.fail("the final dump freed nothing in d3")
        (r.dir / "phases").write_text("3\n")
        r.restore_ok(d[3])
        r.finish()


def test_fd_room_with_a_chain() -> None:
    """test_shapes' fd-room edge at the end of a pre-dump chain: the task's
    fd table full (RLIMIT_NOFILE 1,000), two pre-dumps, then the dump. The
    pages of the chain's every level are read through fds of criu's in the
    task at restore: the dump counts them as the restore will, so with
    exactly the room it names, the dump and the restore both succeed; one
    slot short, the dump refuses. A refused dump ends the tracking (its
    scan may have re-armed what the next round needs): each try gets a
    chain of its own."""
    with zdtm.Run("shapes", "fd-room-chain", args=["nofile=1000"]) as r:
        r.start()
        snap = r.snapshot()

        def chain(n: int, nofile: int) -> tuple[zdtm.Path, list[str], zdtm.CriuResult]:
            d = [r.imgdir(f"c{n}d{i}") for i in (1, 2, 3)]
            round_ok(r, "pre-dump", d[0], None)
            round_ok(r, "pre-dump", d[1], f"../{d[0].name}")
            args = ["dump", "-t", str(r.pid), "-D", str(d[2]), "-o", "dump.log", "-v4",
                    "--track-mem", "--prev-images-dir", f"../{d[1].name}"]
            return d[2], args, criu_limited(r, args, d[2] / "dump.log", nofile)

        _, _, res = chain(1, 1000)
        line = refused(r, res, ("RLIMIT_NOFILE",))
        room = room_named(r, line)
        refused(r, chain(2, room - 1)[2], ("RLIMIT_NOFILE",))
        r.check_running("after the refused dumps", snap)
        img, _, res = chain(3, room)
        if res.returncode:
            r.fail(f"dump with room for {room} fds failed", res)
        r.gone_after_dump(res)
        if not in_parent_pages(r, img):
            r.fail("the dump left no page to its parents: the chain is not read")
        restore_limited(r, img, room, snap)


def test_chain_over_the_page_server() -> None:
    """Pre-dumps and the dump sent to page servers, one per round, each
    server given the previous round's directory (--prev-images-dir): the
    server's images link to their parent, each round after the first
    stores only what was written since, and the restore from the last
    server's directory gives every page (mem_predump checks them all).
    The dump side keeps only each round's pagemap, for the next round."""
    from test_pagesrv import Server, ps_opts
    with zdtm.Run(PROG, "pagesrv-chain") as r:
        r.start()
        loc = [r.imgdir(f"l{i}") for i in (1, 2, 3)]
        dst = [r.imgdir(f"s{i}") for i in (1, 2, 3)]
        for i in range(3):
            if i:
                phase(r, i)
            prev = ["--prev-images-dir", f"../s{i}"] if i else []
            srv = Server(dst[i], r.dir / f"pslog{i}", address="127.0.0.1", opts=prev)
            try:
                res = round_(r, "pre-dump" if i < 2 else "dump", loc[i],
                             f"../l{i}" if i else None, ps_opts("127.0.0.1", srv.port))
                if res.returncode:
                    r.fail(f"round {i + 1} over the page server failed", res)
                rc, err = srv.wait()
                if rc:
                    r.fail(f"page server {i + 1} exited {rc}: {err}")
            finally:
                srv.stop()
            if i < 2:
                r.check_running(f"after round {i + 1}")
        r.gone_after_dump(res)
        local = sorted(p.name for p in loc[2].iterdir() if p.name.endswith(".img"))
        if f"pagemap-{r.pid}.img" not in local or \
                any(not n.startswith("pagemap-") for n in local):
            r.fail(f"the dump side keeps other images than the pagemaps: {local}")
        sizes = [(x / f"pages-{r.pid}.img").stat().st_size for x in dst]
        for i in (1, 2):
            if os.readlink(dst[i] / "parent") != f"../s{i}":
                r.fail(f"server {i + 1}'s images do not link to ../s{i}")
            if not in_parent_pages(r, dst[i]) or sizes[i] >= sizes[0]:
                r.fail(f"round {i + 1} stored {sizes[i]} bytes, the first {sizes[0]}, "
                       f"{in_parent_pages(r, dst[i])} pages in the parent")
        (r.dir / "phases").write_text("2\n")
        r.restore_ok(dst[2])
        r.finish()


def test_auto_dedup_over_the_page_server_refused() -> None:
    with zdtm.Run(PROG, "pagesrv-dedup") as r:
        r.start()
        snap = r.snapshot()
        res = r.criu(["pre-dump", "-t", str(r.pid), "-D", str(r.imgdir("d")), "-o",
                      "dump.log", "--track-mem", "--prev-images-dir", "..", "--auto-dedup",
                      "--page-server", "--address", "127.0.0.1", "--port", "1"], None)
        errs = zdtm.error_lines(res.stderr)
        if res.returncode <= 0 or len(errs) != 1 or "--auto-dedup" not in errs[0]:
            r.fail("--auto-dedup with --page-server was not refused by one line", res)
        r.check_running("after the refusal", snap)
        (r.dir / "phases").write_text("0\n")
        r.finish()
