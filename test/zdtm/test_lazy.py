"""Post-copy restore (criu/lazy.c, criu/parts/mm-lazy.c,
Documentation/lazy-pages.md): `criu lazy-pages -D DIR` serves the private
pages of a checkpoint to `criu restore -D DIR --lazy-pages` through each
task's userfaultfd, on fault and in the background.

- memory programs: restored lazily, they pass their own checks; the daemon
  exits once every page is in.
- mem_lazy (uses its memory all the time): pages are served on fault and
  in the background; a child forked right after the restore gets its
  parent's pages (a fork event); mremap, MADV_DONTNEED and munmap of lazy
  areas are followed (remap, remove, unmap events).
- a pre-dump chain: pages left in the parent images are served too.
- no daemon: the restore fails with one Error line, before any task runs,
  and leaves nothing behind; a daemon refuses a socket path already taken
  (a link planted there stays untouched).
- criu check --feature lazy_pages (uffd, uffd-noncoop) says yes where the
  kernel's userfaultfd has the events.
"""
from __future__ import annotations

import ctypes
import os
import re
import signal
import struct
import subprocess
import time
from pathlib import Path
from typing import Optional

import pytest

import zdtm
from reap import wait_gone
from test_errors import check_clean_error
from test_predump import kernel_lacks

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")

NR_USERFAULTFD = 323                    # x86_64
UFFDIO_API = 0xC018AA3F
UFFD_API = 0xAA
# EVENT_FORK, EVENT_REMAP, EVENT_REMOVE, EVENT_UNMAP (Linux 4.11)
EVENTS = (1 << 1) | (1 << 2) | (1 << 3) | (1 << 6)
SOCKET = "lazy-pages.socket"
# the programs' own checks read every page back
PROGRAMS = ["mem_anon", "mem_sparse", "mem_cow_tree", "mem_prot", "mem_brk",
            "mem_madvise", "mem_growsdown", "mem_guard_region", "mem_mlockall_onfault",
            "mem_stack", "mem_thp", "mem_zeroed", "task_rseq", "thread_state",
            "sig_altstack", "sig_pending", "tree_fork_loop", "creds_threads",
            "thread_churn", "tree_zombie", "tree_orphan_session", "ns_pid_tree",
            "userns_maps"]
ATTEMPTS = 5


def uffd_lacks() -> str:
    """Why this kernel's userfaultfd can't serve a lazy restore; '' when it can
    (asked here, not through criu)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.syscall(NR_USERFAULTFD, os.O_CLOEXEC | os.O_NONBLOCK)
    if fd < 0:
        return f"no userfaultfd ({os.strerror(ctypes.get_errno())})"
    arg = ctypes.create_string_buffer(struct.pack("QQQ", UFFD_API, EVENTS, 0))
    ret = libc.ioctl(fd, UFFDIO_API, arg)
    os.close(fd)
    if ret:
        return "userfaultfd lacks the fork, remap, remove and unmap events"
    return ""


def need_uffd() -> None:
    why = uffd_lacks()
    if why:
        pytest.skip(f"no lazy restore on this kernel: {why}")


class Daemon:
    """criu lazy-pages -D @img, listening once it said so on --status-fd."""

    def __init__(self, img: Path, env: Optional[dict[str, str]] = None) -> None:
        rfd, wfd = os.pipe()
        self.log = img / "lazy.log"
        self.proc = subprocess.Popen(
            [zdtm.CRIU, "lazy-pages", "-D", str(img), "-o", "lazy.log", "-v4",
             "--status-fd", str(wfd)], pass_fds=(wfd,), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        os.close(wfd)
        try:
            self.ready = os.read(rfd, 1) == b"\0"
        finally:
            os.close(rfd)

    def wait(self, r: zdtm.Run, timeout: float = 120) -> str:
        """The daemon's log, once it exited 0."""
        try:
            _, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
            r.fail(f"criu lazy-pages did not exit: {err}\n{zdtm.tail(self.log)}")
        if self.proc.returncode != 0:
            r.fail(f"criu lazy-pages exited {self.proc.returncode}: {err}\n"
                   f"{zdtm.tail(self.log)}")
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


def served(log: str) -> tuple[int, int]:
    """Pages served on fault and in the background, as the daemon's log says."""
    m = re.search(r"(\d+) page\(s\) served on fault, (\d+) in the background", log)
    assert m, log[-2000:]
    return int(m.group(1)), int(m.group(2))


def events(log: str) -> dict[str, int]:
    m = re.search(r"events: (\d+) fork, (\d+) remap, (\d+) remove, (\d+) unmap", log)
    assert m, log[-2000:]
    return dict(zip(("fork", "remap", "remove", "unmap"), map(int, m.groups())))


def lazy_run(r: zdtm.Run, img: Path, opts: list[str] = []) -> str:
    """r's program (dumped into img) restored lazily; its check passes, the
    daemon exits 0 once every page is in. The daemon's log."""
    d = Daemon(img)
    try:
        if not d.ready:
            r.fail(f"criu lazy-pages never said it listens\n{zdtm.tail(d.log)}")
        r.restore_ok(img, opts + ["--lazy-pages"])
        log = d.wait(r)
    finally:
        d.stop()
    if (img / SOCKET).exists():
        r.fail(f"the daemon left {SOCKET} behind")
    if "every page is in" not in log and "gone" not in log:
        r.fail(f"the daemon's log names no task done:\n{log[-2000:]}")
    return log


@pytest.mark.parametrize("name", PROGRAMS)
def test_programs(name: str) -> None:
    need_uffd()
    desc = zdtm.load_desc(name)
    with zdtm.Run(name, "lazy", args=desc.args, pidns=desc.pidns) as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img, desc.dump_opts)
        log = lazy_run(r, img, desc.restore_opts)
        r.note(f"served (fault, background): {served(log)}")
        r.finish(desc.expect)


def mem_lazy(mode: str, mb: int, monkeypatch: pytest.MonkeyPatch) -> tuple[str, zdtm.Run]:
    monkeypatch.setenv("LAZY_MODE", mode)
    monkeypatch.setenv("LAZY_MB", str(mb))
    with zdtm.Run("mem_lazy", "lazy") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        log = lazy_run(r, img)
        r.finish()
    return log, r


def test_fault_and_background(monkeypatch: pytest.MonkeyPatch) -> None:
    """A task using its memory as soon as it runs: some pages come on its
    faults, the rest in the background."""
    need_uffd()
    log, r = mem_lazy("", 64, monkeypatch)
    fault, bg = served(log)
    assert fault > 0 and bg > 0, (fault, bg, log[-2000:])


@pytest.mark.parametrize("mode,want", [("fork", ("fork",)),
                                       ("events", ("remap", "remove", "unmap"))])
def test_events(mode: str, want: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """Right after the restore the program forks a child that reads pages
    its parent has not received (fork), or moves, drops and unmaps parts of
    its lazy area (remap, remove, unmap): its checks pass. Whether the
    daemon was still at work when the program got there depends on the
    machine's load: a few attempts, one must show the events."""
    need_uffd()
    seen: dict[str, int] = {}
    for _ in range(ATTEMPTS):
        log, r = mem_lazy(mode, 128, monkeypatch)
        seen = events(log)
        if all(seen[w] for w in want):
            return
    pytest.fail(f"in {ATTEMPTS} attempts the daemon never saw {want} while pages were "
                f"missing: {seen}")


def test_foreground_restore(monkeypatch: pytest.MonkeyPatch) -> None:
    """A restore without -d waits for its tree: once the daemon is done,
    the areas must be the task's alone, criu holding no userfaultfd (a
    fault after MADV_DONTNEED would wait for a reader that is gone)."""
    need_uffd()
    monkeypatch.setenv("LAZY_MODE", "events")
    monkeypatch.setenv("LAZY_MB", "32")
    with zdtm.Run("mem_lazy", "lazy") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        d = Daemon(img)
        restore = subprocess.Popen([zdtm.CRIU, "restore", "-D", str(img), "-o",
                                    "restore.log", "-v4", "--lazy-pages"],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        r.alive = True
        try:
            d.wait(r)
            # rounds of MADV_DONTNEED and reads after the daemon is gone
            time.sleep(0.5)
            os.kill(r.pid, signal.SIGTERM)
            try:
                _, err = restore.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                r.fail("the task hangs after the daemon is gone (SIGTERM unheard)")
        finally:
            d.stop()
            if restore.poll() is None:
                restore.kill()
                restore.wait()
        r.alive = False
        if restore.returncode != 0 or r.verdict() != "PASS":
            r.fail(f"restore exited {restore.returncode}, the task said {r.verdict()}: "
                   f"{err}")


def test_daemon_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTERM to the daemon while a task waits for pages: the task is
    killed, it does not run on with zeroes in their place; the daemon exits
    non-zero with one Error line per task. If the daemon was done before
    the signal came (the load decides), the attempt is made again."""
    need_uffd()
    monkeypatch.setenv("LAZY_MB", "256")
    for _ in range(ATTEMPTS):
        with zdtm.Run("mem_lazy", "lazy") as r:
            r.start()
            img = r.imgdir("img")
            r.dump_ok(img)
            d = Daemon(img)
            try:
                r.restore_ok(img, ["--lazy-pages"])
                d.proc.send_signal(signal.SIGTERM)
                _, err = d.proc.communicate(timeout=60)
            finally:
                d.stop()
            log = d.log.read_text(errors="replace")
            if d.proc.returncode == 0 and "every page is in" in log:
                r.note("the daemon was done before SIGTERM")
                r.finish()
                continue
            rc = r._wait(30)
            if d.proc.returncode != 1 or "killed, its pages can't be served" not in log:
                r.fail(f"criu lazy-pages exited {d.proc.returncode} on SIGTERM: {err}\n"
                       f"{zdtm.tail(d.log)}")
            if rc != -signal.SIGKILL:
                r.fail(f"the task waiting for pages ended with {rc}, not SIGKILL")
            return
    pytest.fail(f"in {ATTEMPTS} attempts the daemon was done before SIGTERM came")


def test_predump_chain() -> None:
    """pre-dump, then dump --prev-images-dir: the pages left in the parent
    images are served lazily too."""
    need_uffd()
    if kernel_lacks():
        pytest.skip(f"no pre-dump on this kernel: {kernel_lacks()}")
    with zdtm.Run("mem_anon", "lazy") as r:
        r.start()
        d1, d2 = r.imgdir("d1"), r.imgdir("d2")
        res = r.criu(["pre-dump", "-t", str(r.pid), "-D", str(d1), "-o", "dump.log",
                      "-v4"], d1 / "dump.log")
        if res.returncode:
            r.fail("criu pre-dump failed", res)
        r.dump_ok(d2, ["--prev-images-dir", "../d1", "--track-mem"])
        own = (d2 / f"pages-{r.pid}.img").stat().st_size // 4096
        log = lazy_run(r, d2)
        fault, bg = served(log)
        # the program does not write between the rounds: its pages stay in d1
        if fault + bg <= own:
            r.fail(f"{fault + bg} pages served, the last round holds {own}: none came "
                   f"from the parent images\n{log[-2000:]}")
        r.finish()


def test_no_daemon() -> None:
    """No daemon listening: one Error line, no task of the tree left."""
    need_uffd()
    with zdtm.Run("mem_anon", "lazy") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        before = zdtm.hash_tree(img)
        res, _ = r.restore(img, ["--lazy-pages"])
        line = check_clean_error(r, res, "restore --lazy-pages without a daemon",
                                 ("lazy-pages",))
        r.note(f"refused: {line}")
        if zdtm.pid_exists(r.pid):
            r.fail(f"task {r.pid} exists after a refused restore")
        after = {k: v for k, v in zdtm.hash_tree(img).items() if k != "restore.log"}
        if after != {k: v for k, v in before.items() if k != "restore.log"}:
            r.fail("the refused restore changed the images")
        # the images are still good: a daemon now serves them
        log = lazy_run(r, img)
        r.note(f"served (fault, background): {served(log)}")
        r.finish()


def test_socket_taken(tmp_path: Path) -> None:
    """A daemon refuses a work directory whose socket path is taken (here
    by a planted link): one Error line, the link and its target untouched."""
    need_uffd()
    target = tmp_path / "target"
    target.write_text("keep")
    (tmp_path / SOCKET).symlink_to(target)
    p = subprocess.run([zdtm.CRIU, "lazy-pages", "-D", str(tmp_path)],
                       capture_output=True, text=True, timeout=30,
                       stdin=subprocess.DEVNULL)
    errs = zdtm.error_lines(p.stderr)
    assert p.returncode == 1 and len(errs) == 1 and SOCKET in errs[0], p
    assert (tmp_path / SOCKET).is_symlink() and target.read_text() == "keep"


def test_daemon_idle(tmp_path: Path) -> None:
    """-d --pidfile: the daemon goes to the background once it listens;
    SIGTERM before any restore came ends it (one Error line in its log,
    exit non-zero), and its socket goes with it."""
    need_uffd()
    # the daemon keeps stderr (for its errors): not a pipe to wait on
    with open(tmp_path / "stderr", "w") as err:
        p = subprocess.run([zdtm.CRIU, "lazy-pages", "-D", str(tmp_path), "-d", "--pidfile",
                            str(tmp_path / "lp.pid"), "-o", "lazy.log"], stderr=err,
                           stdout=subprocess.DEVNULL, timeout=30, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, (tmp_path / "stderr").read_text()
    pid = int((tmp_path / "lp.pid").read_text())
    assert (tmp_path / SOCKET).exists()
    os.kill(pid, signal.SIGTERM)
    gone = wait_gone(pid, 30)
    assert gone is not None, "criu lazy-pages ignored SIGTERM"
    assert not (tmp_path / SOCKET).exists()
    errs = zdtm.error_lines((tmp_path / "lazy.log").read_text())
    assert len(errs) == 1 and "signal" in errs[0], errs


def test_check_feature() -> None:
    """criu check --feature lazy_pages (and CRIU's uffd, uffd-noncoop) says
    yes where the kernel's userfaultfd has the events."""
    need_uffd()
    for name in ("lazy_pages", "uffd", "uffd-noncoop"):
        p = subprocess.run([zdtm.CRIU, "check", "--feature", name], capture_output=True,
                           text=True, timeout=30)
        assert p.returncode == 0 and f"{name} is supported" in p.stdout, p


def test_lazy_pages_is_for_restore() -> None:
    """dump --lazy-pages is the next slice: refused with one Error line."""
    p = subprocess.run([zdtm.CRIU, "dump", "-t", "1", "-D", "/nonexistent", "--lazy-pages"],
                       capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    errs = zdtm.error_lines(p.stderr)
    assert p.returncode == 1 and len(errs) == 1 and "--lazy-pages" in errs[0], p
