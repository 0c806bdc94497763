"""Checkpoint on one kernel, restore on another whose vDSO differs: the
project's patched 6.1 (a 5-page [vvar] with CONFIG_CPU_NS) dumps
time_vdso_redirect, Debian's stock 6.1 cloud kernel (4 pages, another
build) restores it. The program looked its vDSO functions up at start and
keeps calling them through those pointers: after the restore they must
agree with the system calls, enter the kernel no more than before, and
the [vdso] must have moved, the dumped one redirecting to it
(Documentation/design.md, section 7). Its binary and libraries come into
each guest's initramfs separately: other mtimes, the same build-ids.

The stock kernel: CRIU_STOCK_KERNEL, or the vmlinuz that
`apt-get download linux-image-6.1.0-56-cloud-amd64-unsigned` and
`dpkg -x` left under ~/.cache/criu-kernel/stock/x/boot (skipped without).

Run with: python3 -m pytest -m kernel test/kernel/test_two_kernels.py
"""
import os
from pathlib import Path
from typing import Any

import pytest

from guestlib import ZDTM_BUILT

pytestmark = pytest.mark.kernel

PROG = "time_vdso_redirect"
STOCK_DIR = Path.home() / ".cache" / "criu-kernel" / "stock" / "x" / "boot"

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
cp -a /tmp/img /shared/img || fail copy
""".replace("@PROG@", PROG)

GUEST_B = r"""
set -u
fail() { echo "FAILED: $*"; exit 1; }
echo "KERNEL $(uname -r)"
criu restore -d -D /img -o restore.log -v4 --pidfile /tmp/pid ||
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


@pytest.fixture(scope="module")
def stock_kernel() -> Path:
    env = os.environ.get("CRIU_STOCK_KERNEL")
    found = [Path(env)] if env else sorted(STOCK_DIR.glob("vmlinuz-6.1*"))
    if not found or not found[-1].exists():
        pytest.skip("no stock 6.1 kernel: set CRIU_STOCK_KERNEL (see the docstring)")
    return found[-1]


@pytest.fixture(scope="module")
def two_kernels(guest, stock_kernel, criu_bin, subreaper_bin, tmp_path_factory):
    prog = ZDTM_BUILT / PROG
    if not prog.exists():
        pytest.fail(f"{prog} not built (ninja -C BUILD_DIR)")
    share = tmp_path_factory.mktemp("two-kernels")
    rc, out_a, err = guest.run(GUEST_A, smp=2, selftests=False, timeout=180, share=share,
                               extra=[criu_bin, str(prog)])
    assert rc == 0, "guest A:\n" + out_a + err
    rc, out_b, err = run_stock(guest, stock_kernel, GUEST_B, share, criu_bin, subreaper_bin,
                               prog)
    return out_a, out_b + err, rc


def run_stock(guest: Any, kernel: Path, script: str, share: Path, criu_bin: str,
              subreaper_bin: Path, prog: Path) -> tuple[int, str, str]:
    """Guest B: the stock kernel, which has no 9p: the images and the
    script come in its initramfs."""
    (share / "b.sh").write_text(script)
    extra = [criu_bin, str(subreaper_bin), str(prog), f"{share / 'img'}:/img",
             f"{share / 'b.sh'}:/b.sh"]
    return guest.run("subreaper sh /b.sh", smp=2, selftests=False, timeout=180,
                     extra=extra, kernel=kernel)


def lines(out: str, tag: str) -> list[str]:
    return [ln[len(tag) + 1:] for ln in out.splitlines() if ln.startswith(tag + " ")]


def test_vdso_redirected_across_kernels(two_kernels):
    out_a, out_b, rc = two_kernels
    text = f"--- guest A:\n{out_a}--- guest B:\n{out_b}"
    assert rc == 0, text
    assert lines(out_a, "KERNEL") != lines(out_b, "KERNEL") or \
        lines(out_a, "MAPS") != lines(out_b, "MAPS"), text
    assert any("vDSO redirect" in ln for ln in lines(out_b, "LOG")), text
    # "moved": the program checked that its [vdso] is elsewhere and the old
    # place an r-xp ELF image, besides every call through its old pointers
    verdict = lines(out_b, "OUT")
    assert verdict and verdict[-1].endswith("PASS"), text
