"""Checkpoint in a guest of the project's patched 6.1 under QEMU's TCG
(QEMU's CPU model), restore on this machine's own kernel (6.18, its
distribution's build, this CPU): an older kernel to a newer one, the
other direction of test_host_to_guest.py.

The program, time_vdso_redirect, runs in a pid namespace of its own
(--pidns: pid 1 inside, so the restore here takes no pid this machine
uses) from a copy at a path that exists in both (restore maps it by path
and checks its size and build-id); its libraries are this machine's own,
added to the guest at their paths. It looked its vDSO functions up at
start and keeps calling them through those pointers: after the restore
here the 6.1 vDSO comes back at its old place redirecting to 6.18's.
The guest hands the images back through its shared directory (9p).

Run with: python3 -m pytest -m kernel test/kernel/test_guest_to_host.py
"""
import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from guestlib import CRIU, ZDTM_BUILT

pytestmark = pytest.mark.kernel

PROG = "time_vdso_redirect"
PR_SET_CHILD_SUBREAPER = 36

GUEST = r"""
set -u
fail() { echo "FAILED: $*"; exit 1; }
echo "KERNEL $(uname -r)"
mkdir -p @WORK@
cd @WORK@
# without the capabilities criu lacks here, which it can't give back
# no stdio: nothing of the guest's (its /dev is not this machine's) to reopen here
setsid /dropcap @LACKS@ @PROG@ --pidns --outfile @WORK@/t.out --readyfile @WORK@/t.ready moved \
	<&- >&- 2>&- &
i=0
while [ ! -s @WORK@/t.ready ]; do sleep 0.1; i=$((i + 1)); [ $i -lt 300 ] || fail ready; done
pid=$(cat @WORK@/t.ready)
mkdir /shared/img
criu dump -t $pid -D /shared/img -o dump.log -v4 || { grep Error /shared/img/dump.log; fail dump; }
echo DUMPED
"""


def lines(out: str, tag: str) -> list[str]:
    return [ln[len(tag) + 1:].strip() for ln in out.splitlines() if ln.startswith(tag + " ")]


def mapped_files(prog: Path, work: Path) -> set[str]:
    """The files @prog maps when it runs here: the guest needs them at the same paths."""
    # its own files: the ready file is written by rename(), which would
    # replace a /dev/null given as its path
    p = subprocess.Popen(["setsid", str(prog), "--outfile", str(work / "probe.out"),
                          "--readyfile", str(work / "probe.ready")], cwd=work,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        maps = Path(f"/proc/{p.pid}/maps").read_text()
    finally:
        p.kill()
        p.wait()
    return {f[5] for f in (ln.split(None, 5) for ln in maps.splitlines())
            if len(f) == 6 and f[5].startswith("/")}


def lacking_caps() -> str:
    """The capabilities this process lacks (hex): criu here can't give them
    to a task, so the guest's program starts without them."""
    for ln in Path("/proc/self/status").read_text().splitlines():
        if ln.startswith("CapBnd:"):
            last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
            return f"{((1 << (last + 1)) - 1) & ~int(ln.split()[1], 16):x}"
    return "0"


def be_subreaper() -> None:
    """The restored tree's root is reparented to us once criu exits: reaped here."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0):
        pytest.fail(f"prctl(PR_SET_CHILD_SUBREAPER): errno {ctypes.get_errno()}")


def wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    pytest.fail(f"the restored task {pid} did not exit after SIGTERM")


@pytest.fixture(scope="module")
def dropcap_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from conftest import build_helper
    return build_helper(tmp_path_factory, "dropcap")


def test_restored_on_a_newer_kernel(guest: Any, criu_bin: str, subreaper_bin: Path,
                                    dropcap_bin: Path, tmp_path: Path) -> None:
    """Dumped in the 6.1 guest, restored here with the default checks: it
    runs on through its redirected 6.1 vDSO and passes its own checks."""
    built = ZDTM_BUILT / PROG
    if not built.exists():
        pytest.fail(f"{built} not built (ninja -C BUILD_DIR)")
    # the guest mounts a tmpfs on /tmp, which would hide a program there
    home = Path(tempfile.mkdtemp(prefix="criu-g2h-", dir="/var/tmp"))
    try:
        prog, work, share = home / PROG, home / "work", tmp_path / "share"
        shutil.copy2(built, prog)
        share.mkdir()
        script = tmp_path / "run.sh"
        script.write_text(GUEST.replace("@WORK@", str(work)).replace("@PROG@", str(prog))
                          .replace("@LACKS@", lacking_caps()))
        extra = [criu_bin, str(subreaper_bin), f"{dropcap_bin}:/dropcap", f"{script}:/run.sh",
                 f"{prog}:{prog}"]
        extra += [f"{f}:{f}" for f in sorted(mapped_files(prog, tmp_path)) if f != str(prog)]
        rc, o, e = guest.run("subreaper sh /run.sh", smp=2, selftests=False, timeout=180,
                             extra=extra, share=share)
        out = f"{o}{e}"
        assert rc == 0 and "DUMPED" in out, out
        kernel = lines(out, "KERNEL")
        assert kernel and kernel[0] != os.uname().release, out
        work.mkdir(exist_ok=True)
        img, pidfile = share / "img", tmp_path / "pid"
        be_subreaper()
        r = subprocess.run([str(CRIU), "restore", "-d", "-D", str(img), "-o", "restore.log",
                            "-v4", "--pidfile", str(pidfile)], cwd=work,
                           capture_output=True, text=True, timeout=120)
        log = (img / "restore.log").read_text(errors="replace")
        assert r.returncode == 0, f"{out}\n--- restore here:\n{r.stderr}\n{log[-3000:]}"
        assert "vDSO redirect" in log or "a copy" in log, log[-3000:]
        pid = int(pidfile.read_text())
        time.sleep(0.5)
        os.kill(pid, signal.SIGTERM)
        wait_gone(pid)
        verdict = (work / "t.out").read_text() if (work / "t.out").exists() else ""
        assert verdict.strip().endswith("PASS"), f"{out}\n--- verdict: {verdict!r}\n{log[-2000:]}"
    finally:
        shutil.rmtree(home, ignore_errors=True)
