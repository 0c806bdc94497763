"""Checkpoint on one kernel, restore on another whose vDSO differs: the
project's patched 6.1 (a 5-page [vvar] with CONFIG_CPU_NS) and Debian's
stock 6.1 cloud kernel (4 pages, another build), each direction:
time_vdso_redirect dumped in one guest, restored in the other. The program looked its vDSO functions up at start and
keeps calling them through those pointers: after the restore they must
agree with the system calls, enter the kernel no more than before, and
the [vdso] must have moved, the dumped one redirecting to it
(Documentation/design.md, section 7). Its binary and libraries come into
each guest's initramfs separately; the images go back to the host over
the console (the stock kernel has no 9p) and into the other's initramfs.

The stock kernel: CRIU_STOCK_KERNEL, or the one scripts/kernel-stock.sh
downloads (`apt-get download` of the linux-image-6.1.*-cloud-amd64 that
linux-image-cloud-amd64 depends on, `dpkg -x` into
~/.cache/criu-kernel/stock/x/boot); skipped, saying why, when neither is
at hand.

Run with: python3 -m pytest -m kernel test/kernel/test_two_kernels.py
"""
import base64
import io
import os
import subprocess
import tarfile
from pathlib import Path
from typing import Any, Optional

import pytest

from guestlib import ROOT, ZDTM_BUILT

pytestmark = pytest.mark.kernel

PROG = "time_vdso_redirect"

GUEST_A = r"""
set -u
fail() { echo "FAILED: $*"; exit 1; }
echo "KERNEL $(uname -r)"
# a pid that guest B, just booted, will not have used yet
echo 4000 > /proc/sys/kernel/ns_last_pid
setsid @PROG@ --outfile /tmp/t.out --readyfile /tmp/t.ready moved </dev/null >/dev/null 2>&1 &
pid=$!
i=0
while [ ! -e /tmp/t.ready ]; do sleep 0.1; i=$((i + 1)); [ $i -lt 300 ] || fail ready; done
grep -E '\[(vdso|vvar)' /proc/$pid/maps | sed 's/^/MAPS /'
mkdir /tmp/img
criu dump -t $pid -D /tmp/img -o dump.log -v4 || { grep Error /tmp/img/dump.log; fail dump; }
# the images to the host over the console: the stock kernel has no 9p
tar cz -C /tmp img | base64 | sed 's/^/IMG /'
""".replace("@PROG@", PROG)

GUEST_B = r"""
set -u
fail() { echo "FAILED: $*"; exit 1; }
echo "KERNEL $(uname -r)"
criu restore -d -D /img -o restore.log -v4 --pidfile /tmp/pid @OPTS@ ||
	{ grep Error /img/restore.log; fail restore; }
pid=$(cat /tmp/pid)
grep -E 'vDSO redirect|a copy' /img/restore.log | sed 's/^/LOG /'
grep -E '\[(vdso|vvar)' /proc/$pid/maps | sed 's/^/MAPS /'
sleep 0.5
kill -TERM $pid
i=0
while [ -d /proc/$pid ] && [ "$(cut -d' ' -f3 /proc/$pid/stat)" != Z ]; do
	sleep 0.1; i=$((i + 1)); [ $i -lt 300 ] || fail "no exit after SIGTERM"
done
sed 's/^/OUT /' /tmp/t.out
"""


# The stock kernel enables protection keys (CPUID's OSPKE), the patched
# config does not: the default checks take that, as nothing a dump lets
# through has memory with a key (parts/cpu-info.c).
OPTS = {"stock": "", "patched": ""}


@pytest.fixture(scope="module")
def stock_kernel() -> Path:
    env = os.environ.get("CRIU_STOCK_KERNEL")
    if env:
        if not Path(env).exists():
            pytest.fail(f"CRIU_STOCK_KERNEL={env} does not exist")
        return Path(env)
    p = subprocess.run(["bash", str(ROOT / "scripts" / "kernel-stock.sh")],
                       capture_output=True, text=True, timeout=600)
    if p.returncode:
        why = (p.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"no stock 6.1 kernel: {why}")
    return Path(p.stdout.strip().splitlines()[-1])


def lines(out: str, tag: str) -> list[str]:
    return [ln[len(tag) + 1:].strip() for ln in out.splitlines() if ln.startswith(tag + " ")]


def boot(guest: Any, kernel: Optional[Path], script: str, work: Path,
         extra: list[str]) -> tuple[int, str]:
    """Runs script under a subreaper in a guest of kernel (None: the
    patched one), everything it needs in its initramfs."""
    (work / "run.sh").write_text(script)
    rc, out, err = guest.run("subreaper sh /run.sh", smp=2, selftests=False, timeout=180,
                             extra=extra + [f"{work / 'run.sh'}:/run.sh"], kernel=kernel)
    return rc, out + err


@pytest.mark.parametrize("dump_on", ["patched", "stock"])
def test_vdso_redirected_across_kernels(guest, stock_kernel, criu_bin, subreaper_bin,
                                        tmp_path, dump_on):
    prog = ZDTM_BUILT / PROG
    if not prog.exists():
        pytest.fail(f"{prog} not built (ninja -C BUILD_DIR)")
    kernels = {"patched": None, "stock": stock_kernel}
    restore_on = "stock" if dump_on == "patched" else "patched"
    extra = [criu_bin, str(subreaper_bin), str(prog)]
    rc, out_a = boot(guest, kernels[dump_on], GUEST_A, tmp_path, extra)
    assert rc == 0, f"guest A ({dump_on}):\n" + out_a
    packed = base64.b64decode("".join(lines(out_a, "IMG")))
    with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as tar:
        if hasattr(tarfile, "data_filter"):     # Python 3.11.4 and later
            setattr(tar, "extraction_filter", getattr(tarfile, "data_filter"))
        tar.extractall(tmp_path)
    rc, out_b = boot(guest, kernels[restore_on], GUEST_B.replace("@OPTS@", OPTS[restore_on]), tmp_path,
                     extra + [f"{tmp_path / 'img'}:/img"])
    text = f"--- guest A ({dump_on}):\n{out_a}--- guest B ({restore_on}):\n{out_b}"
    assert rc == 0, text
    assert lines(out_a, "KERNEL") != lines(out_b, "KERNEL"), text
    assert any("vDSO redirect" in ln for ln in lines(out_b, "LOG")), text
    # "moved": the program checked that its [vdso] is elsewhere and the old
    # place an r-xp ELF image, besides every call through its old pointers
    verdict = lines(out_b, "OUT")
    assert verdict and verdict[-1].endswith("PASS"), text
