"""Error paths of criu: refused dumps, criu killed in the middle of a dump,
corrupted images, restore into a pid in use. In every case the checkpointed
task must come out untouched (running, same maps and fds, and it passes its
own verification afterwards), and criu must fail cleanly: non-zero exit, not
by a signal, with exactly one line mentioning "Error" on stderr."""
from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Union

import pytest

import zdtm

pytestmark = pytest.mark.usefixtures("need_criu")


def check_clean_error(r: zdtm.Run, res: zdtm.CriuResult, what: str,
                      words: tuple[str, ...] = (), pid: Union[int, list[int]] = 0) -> str:
    """criu failed the way the contract says; returns its Error line, which
    must name pid (one of them, when a list: the tasks at fault) and say
    one of words."""
    if res.returncode == 0:
        r.fail(f"{what}: criu succeeded but must refuse", res)
    if res.returncode < 0:
        r.fail(f"{what}: criu died of signal {-res.returncode}", res)
    if "Segmentation" in res.stderr or "core dumped" in res.stderr:
        r.fail(f"{what}: criu crashed", res)
    errs = zdtm.error_lines(res.stderr)
    if len(errs) != 1:
        r.fail(f"{what}: expected exactly one 'Error' line on stderr, got {len(errs)}", res)
    line = errs[0]
    if isinstance(pid, list):
        if not any(str(p) in line for p in pid):
            r.fail(f"{what}: the Error line names none of {pid}: {line!r}", res)
    elif pid and str(pid) not in line:
        r.fail(f"{what}: the Error line does not name pid {pid}: {line!r}", res)
    if words and not any(w in line.lower() for w in words):
        r.fail(f"{what}: the Error line says none of {words}: {line!r}", res)
    return line


def check_refused_dump(r: zdtm.Run, what: str, words: tuple[str, ...] = (),
                       names_task: bool = True, opts: list[str] = []) -> str:
    """Start r's program and dump it: refused cleanly (check_clean_error,
    naming the task unless not names_task), and the task runs on unchanged
    and passes its own check. Returns the Error line."""
    r.start()
    snap = r.snapshot()
    img = r.imgdir("img")
    res = r.dump(img, opts)
    line = check_clean_error(r, res, f"dump of {what}", words, r.pid if names_task else 0)
    r.note(f"refused: {line}")
    r.check_running(f"after the refused dump of {what}", snap)
    r.finish()
    return line


# ------------------------------------------------------------- refused dumps

REFUSED = {
    # extra resource -> words one of which the error line must contain
    # (threads and children were refused by the first version; now that
    # criu handles trees and threads, test_dump_with covers them)
    "socket": ("socket",),
    "session": ("session", "shell-job", "shell job"),
}


@pytest.mark.parametrize("what", list(REFUSED))
def test_dump_refused(what):
    extra = None if what == "session" else what
    with zdtm.Run("mem_anon", f"refused-{what}", extra=extra,
                  session_leader=(what != "session")) as r:
        check_refused_dump(r, f"a task with a {what}", REFUSED[what])


def cycle_with(program: str, what: str) -> None:
    """program with the extra what: dump, restore, and the extra is still
    there when the program checks itself."""
    with zdtm.Run(program, f"with-{what}", extra=what) as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img)
        r.restore_ok(img)
        r.check_running(f"after restore ({what})", snap)
        r.finish()


@pytest.mark.parametrize("what", ["thread", "child", "deleted"])
def test_dump_with(what):
    """The same test program with a second thread (blocking every signal,
    in pause()), a child (in pause()) or a deleted file held open: dump,
    restore, and the extra is still there when the program checks itself."""
    cycle_with("mem_anon", what)


# ------------------------------------------------------------- criu killed

# Where criu kills itself (CRIU_FAULT) and the extra the test program runs
# with: the infect-* points are the moments criu holds a thread's registers
# (parked on its way home, running the executor, the scratch area mapped),
# the infect-thread-* ones those of a second thread.
KILL_POINTS = [
    ("seized", ""), ("infect-parked", ""), ("infect-area", ""), ("infect-mapped", ""),
    ("infect-executor", ""), ("infect-unmapped", ""), ("infected", ""),
    ("memory", ""), ("written", ""),
    ("infect-executor", "thread"), ("infect-thread-parked", "thread"),
    ("infect-thread-mapped", "thread"), ("infect-thread-executor", "thread"),
]


@pytest.mark.parametrize("point,extra", KILL_POINTS,
                         ids=[f"{p}{'-' + e if e else ''}" for p, e in KILL_POINTS])
def test_dump_killed_at(point, extra):
    """criu SIGKILLs itself at a point (CRIU_FAULT): the task survives,
    unchanged, and passes its own check afterwards."""
    with zdtm.Run("mem_anon", f"fault-{point}", extra=extra) as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        res = r.dump(img, env=dict(os.environ, CRIU_FAULT=point))
        if res.returncode == 0:
            r.ours = False
            r.fail(f"CRIU_FAULT={point} was not honoured: the dump completed", res)
        if res.returncode != -signal.SIGKILL:
            r.fail(f"CRIU_FAULT={point}: criu exited with {res.returncode}, "
                   "not by SIGKILL", res)
        r.check_running(f"after criu was killed at '{point}'", snap)
        r.finish()


@pytest.mark.parametrize("point", ["infect-mapped", "infect-executor"])
def test_dump_killed_keeps_altstack(point):
    """The way home leaves a thread's sigaltstack as it was (sig_altstack
    checks address, size, SS_AUTODISARM and a handler running on it)."""
    with zdtm.Run("sig_altstack", f"fault-{point}") as r:
        r.start()
        snap = r.snapshot()
        res = r.dump(r.imgdir("img"), env=dict(os.environ, CRIU_FAULT=point))
        if res.returncode != -signal.SIGKILL:
            r.fail(f"CRIU_FAULT={point}: criu exited with {res.returncode}", res)
        r.check_running(f"after criu was killed at '{point}'", snap)
        r.finish()


def test_dump_killed_randomly():
    """criu killed from outside 0-30 ms into dumps of a task with 256 MiB of
    touched memory (with --leave-running, so a dump that wins the race
    leaves the task running too)."""
    rnd = random.Random(int(os.environ.get("ZDTM_SEED", "0")) or None)
    delays = [0.0, 0.03] + [rnd.uniform(0, 0.03) for _ in range(4)]
    with zdtm.Run("mem_anon", "killed", extra="mem=256") as r:
        r.start()
        snap = r.snapshot()
        for n, delay in enumerate(delays):
            img = r.imgdir(f"img{n}")
            cmd = [zdtm.CRIU] + r.dump_cmd(img, ["--leave-running"])
            with open(r.dir / f"killed{n}.stderr", "wb") as err:
                p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=err)
                time.sleep(delay)
                p.send_signal(signal.SIGKILL)
                rc = p.wait(30)
            r.note(f"criu killed after {delay * 1000:.1f} ms (exit {rc})")
            r.check_running(f"after criu was killed {delay * 1000:.1f} ms into the dump",
                            snap)
            shutil.rmtree(img)
        r.finish()


def test_dump_killed_while_infecting():
    """criu killed 40 times 0.5-6 ms into dumps of a task with a second
    thread: the moments criu spends inside the threads (their way home,
    scratch areas, executor). The task must come out as it was each time."""
    rnd = random.Random(int(os.environ.get("ZDTM_SEED", "0")) or None)
    with zdtm.Run("mem_anon", "killed-infecting", extra="thread") as r:
        r.start()
        snap = r.snapshot()
        for n in range(40):
            img = r.imgdir(f"img{n}")
            cmd = [zdtm.CRIU] + r.dump_cmd(img, ["--leave-running"])
            delay = rnd.uniform(0.0005, 0.006)
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(delay)
            p.send_signal(signal.SIGKILL)
            rc = p.wait(30)
            r.check_running(f"after criu was killed {delay * 1000:.2f} ms into "
                            f"dump {n} (exit {rc})", snap)
            shutil.rmtree(img)
            if r.problems:
                break
        r.finish()


# ------------------------------------------------------------- corrupted images

def corruptions(size: int, raw: bool) -> list[tuple[str, bool]]:
    """(variant, must_fail) for a file of this size. Truncation and a
    flipped byte anywhere must be noticed: every framed image carries a
    checksum, and the inventory one of every chunk of a raw store."""
    out = [("truncate:0", True)]
    for off in sorted({size // 2, size - 1, 7}):
        if 0 < off < size:
            out.append((f"truncate:{off}", True))
    for off in sorted({0, 4, 8, 11, 12, size // 3, size // 2 + 1, size - 1}):
        if 0 <= off < size:
            out.append((f"flip:{off}", True))
    return out


def corrupt(path: Path, variant: str) -> None:
    kind, at = variant.split(":")
    off = int(at)
    if kind == "truncate":
        os.truncate(path, off)
    else:
        with open(path, "r+b") as f:
            f.seek(off)
            b = f.read(1)
            f.seek(off)
            f.write(bytes([b[0] ^ 0xff]))


def check_nothing_left(r: zdtm.Run, what: str, res: zdtm.CriuResult) -> None:
    """No process of the dumped session or group, nor any child of ours, is
    left by a restore (criu's, the restored task's): killed, and a failure."""
    left = zdtm.leftovers(r.pid)
    if not left:
        return
    for p in left:
        try:
            os.kill(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    zdtm.reap_session(r.pid)
    r.fail(f"{what}: processes left behind: " + "; ".join(map(str, left)), res)


def check_restored(r: zdtm.Run, what: str, res: zdtm.CriuResult, pidfile: Path,
                   snap: zdtm.Snapshot) -> None:
    """criu took the images: the task it made must be the one dumped, with
    the same maps and fds, and pass its own check."""
    try:
        pid = int(pidfile.read_text())
    except (OSError, ValueError) as e:
        r.fail(f"{what}: restored, but no pid in {pidfile}: {e}", res)
    r.alive = r.ours = True
    if pid != r.pid:
        r.pid = pid
        r.fail(f"{what}: restored with another pid", res)
    r.check_running(what, snap)
    r.finish()


def test_corrupted_images():
    with zdtm.Run("file_shared", "corrupt") as r:
        r.start()
        snap = r.snapshot()
        good = r.imgdir("img")
        r.dump_ok(good)
        # the logs and CRIU's stats files are no part of the checkpoint
        files = sorted(p.name for p in good.iterdir()
                       if p.is_file() and not p.name.endswith(".log") and
                       not p.name.startswith("stats-"))
        if not files:
            r.fail("the dump wrote no image files")
        accepted = []
        for name in files:
            raw = name.startswith("pages")
            for variant, must_fail in corruptions((good / name).stat().st_size, raw):
                what = f"restore with {name} {variant}"
                bad = r.dir / "bad"
                shutil.rmtree(bad, ignore_errors=True)
                shutil.copytree(good, bad)
                os.chmod(bad, 0o700)
                corrupt(bad / name, variant)
                before = zdtm.hash_tree(bad)
                res, pidfile = r.restore(bad)
                if res.returncode == 0 and not must_fail:
                    # a flipped data byte may go unnoticed, but then the
                    # task must be the one dumped
                    accepted.append(f"{name} {variant}")
                    check_restored(r, what, res, pidfile, snap)
                else:
                    check_clean_error(r, res, what)
                check_nothing_left(r, what, res)
                after = zdtm.hash_tree(bad)
                for f in before:
                    if f.endswith(".log"):
                        continue
                    if f not in after or before[f] != after[f]:
                        r.fail(f"{what}: the restore changed image file {f}", res)
        r.note(f"flips restored without complaint: {accepted}")
        # the good images still restore and the task still passes
        r.restore_ok(good)
        r.check_running("after restore from the good images", snap)
        r.finish()


# ------------------------------------------------------------- pid in use

def test_restore_pid_in_use():
    with zdtm.Run("mem_anon", "pid-in-use") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img, leave_running=True)
        res, _ = r.restore(img)
        check_clean_error(r, res, "restore while the pid is in use")
        r.check_running("after the refused restore", snap)
        r.finish()
