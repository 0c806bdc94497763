"""Checkpoint on this machine's own kernel (6.18, its distribution's build,
this CPU), restore in a guest of the project's patched 6.1 under QEMU's
TCG (another CPU model): a newer kernel to an older one, which
test_two_kernels.py (6.1 to 6.1) does not cover. The program,
time_vdso_redirect, looked its vDSO functions up at start and keeps
calling them through those pointers: after the restore the 6.18 vDSO
comes back at its old place redirecting to 6.1's, and functions 6.1's
vDSO lacks (getrandom, 6.11) become their system calls. Its binary goes
into the guest's initramfs at the path it had here (restore maps it by
path and checks its size and build-id), and its directory is made.

The patched 6.1 does not enable protection keys (OSPKE), which this host
does: the checks leave that out (nothing a dump lets through has memory
with a key, Documentation/cpu.md). test_guest_to_host.py goes the other
way.

Run with: python3 -m pytest -m kernel test/kernel/test_host_to_guest.py
"""
import os
import shutil
import signal
import tempfile
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from guestlib import CRIU, ZDTM_BUILT

pytestmark = pytest.mark.kernel

PROG = "time_vdso_redirect"

GUEST = r"""
set -u
fail() { echo "FAILED: $*"; exit 1; }
echo "KERNEL $(uname -r)"
# its cwd and where its verdict goes, as on the host
mkdir -p @WORK@
# a guest of 2 CPUs has pid_max 4096; the host's pid is likely above it
echo 32768 > /proc/sys/kernel/pid_max
criu restore -d -D /img -o restore.log -v4 --pidfile /tmp/pid @CAP@ ||
	{ grep Error /img/restore.log; fail restore; }
pid=$(cat /tmp/pid)
grep -E 'vDSO redirect|a copy' /img/restore.log | sed 's/^/LOG /'
sleep 0.5
kill -TERM $pid
i=0
while [ -d /proc/$pid ] && [ "$(cut -d' ' -f3 /proc/$pid/stat)" != Z ]; do
	sleep 0.1; i=$((i + 1)); [ $i -lt 300 ] || fail "no exit after SIGTERM"
done
[ -e /proc/$pid/stat ] && echo "EXIT $(cut -d' ' -f52 /proc/$pid/stat)"
[ -e @WORK@/t.out ] || { dmesg | tail -5; fail "no verdict"; }
sed 's/^/OUT /' @WORK@/t.out
"""


def lines(out: str, tag: str) -> list[str]:
    return [ln[len(tag) + 1:].strip() for ln in out.splitlines() if ln.startswith(tag + " ")]


def dump_here(prog: Path, work: Path, img: Path, env: dict[str, str]) -> set[str]:
    """The program started (in @env) and dumped on this machine (it is
    killed); the files it had mapped, which the guest must have at the same
    paths."""
    out, ready = work / "t.out", work / "t.ready"
    work.mkdir()
    p = subprocess.Popen(["setsid", str(prog), "--outfile", str(out), "--readyfile",
                          str(ready), "moved"], cwd=work, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=dict(os.environ, **env))
    try:
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert p.poll() is None and time.monotonic() < deadline, "the program is not ready"
            time.sleep(0.05)
        pid = int(ready.read_text().strip() or 0) or p.pid
        mapped = set()
        for ln in Path(f"/proc/{pid}/maps").read_text().splitlines():
            f = ln.split(None, 5)
            if len(f) == 6 and f[5].startswith("/"):
                mapped.add(f[5])
        img.mkdir()
        r = subprocess.run([str(CRIU), "dump", "-t", str(pid), "-D", str(img),
                            "-o", "dump.log", "-v4"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr + (img / "dump.log").read_text()[-3000:]
        return mapped
    finally:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
        p.wait()


def restore_in_guest(guest: Any, criu_bin: str, subreaper_bin: Path, tmp_path: Path,
                     env: dict[str, str], cap: str) -> str:
    """Dumped here in @env, restored in the guest with @cap; its output."""
    built = ZDTM_BUILT / PROG
    if not built.exists():
        pytest.fail(f"{built} not built (ninja -C BUILD_DIR)")
    # the guest mounts a tmpfs on /tmp, which would hide a program copied
    # there at its path here: it runs from a copy outside /tmp
    home = Path(tempfile.mkdtemp(prefix="criu-h2g-", dir="/var/tmp"))
    try:
        prog = home / PROG
        shutil.copy2(built, prog)
        return run_in_guest(guest, criu_bin, subreaper_bin, tmp_path, env, cap, prog)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def run_in_guest(guest: Any, criu_bin: str, subreaper_bin: Path, tmp_path: Path,
                 env: dict[str, str], cap: str, prog: Path) -> str:
    work, img = tmp_path / "work", tmp_path / "img"
    mapped = dump_here(prog, work, img, env)
    (tmp_path / "run.sh").write_text(GUEST.replace("@WORK@", str(work)).replace("@CAP@", cap))
    extra = [criu_bin, str(subreaper_bin), f"{img}:/img", f"{tmp_path / 'run.sh'}:/run.sh"]
    extra += [f"{f}:{f}" for f in sorted(mapped)]
    rc, o, e = guest.run("subreaper sh /run.sh", smp=2, selftests=False, timeout=180,
                         extra=extra)
    out = f"{o}{e}\nRC {rc}"
    kernel = lines(out, "KERNEL")
    assert kernel and kernel[0] != os.uname().release, out
    return out


def test_refused_where_the_cpu_lacks_what_it_used(guest: Any, criu_bin: str,
                                                  subreaper_bin: Path, tmp_path: Path) -> None:
    """Started as it is, the program (its ld.so, its glibc) chose code by
    this CPU: where QEMU's CPU lacks some of it, the restore is refused in
    one line that names what and how to start a workload movable."""
    out = restore_in_guest(guest, criu_bin, subreaper_bin, tmp_path, {}, "")
    if lines(out, "RC") == ["0"]:
        pytest.skip("QEMU's CPU has all this CPU has: nothing to refuse")
    errs = [ln for ln in out.splitlines() if ln.startswith("Error: restore failed")]
    assert len(errs) == 1 and "needs what this CPU lacks" in errs[0], out
    assert "GLIBC_TUNABLES" in errs[0] and "--cpu-cap" in errs[0], errs[0]


def test_movable_workload_restores(guest: Any, criu_bin: str, subreaper_bin: Path,
                                   tmp_path: Path) -> None:
    """Started as Documentation/cpu.md says for a fleet (glibc told to leave
    XSAVEC, which TCG lacks, alone) and restored with --cpu-cap=fpu (the
    instructions glibc can't hide are this program's to use, and it does
    not): on 6.1 it runs on through its redirected 6.18 vDSO and passes."""
    env = {"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-XSAVEC"}
    out = restore_in_guest(guest, criu_bin, subreaper_bin, tmp_path, env, "--cpu-cap=fpu")
    assert lines(out, "RC") == ["0"], out
    assert any("vDSO redirect" in ln for ln in lines(out, "LOG")), out
    verdict = lines(out, "OUT")
    assert verdict and verdict[-1].endswith("PASS"), out
