"""Checkpoint on one CPU model, restore on another: two guests (QEMU TCG)
of the patched kernel with different -cpu models, booted one after the
other, share a host directory (9p).

Haswell has an XSAVE area of 832 bytes (x87, SSE, AVX); Skylake-Server
under TCG has 2696 (PKRU too, at 2688; TCG has no AVX-512). The register
tests of test/zdtm/static are dumped in one and restored in the other:

- Haswell -> Skylake-Server: a superset of the components, an area of
  another size, one CPU instead of two (cpu_affinity, pinned to CPU 1,
  runs on CPU 0). The default checks pass, the registers are loaded in the
  new layout and each test passes its own check.
- Skylake-Server -> Haswell: the default "ins" check refuses, naming the
  missing instruction sets (adx, clflushopt...), but not pku or ospke:
  a dump refuses memory with a protection key, so nothing the task had
  needs them; --cpu-cap=fpu restores, PKRU (the one component the saved
  registers use that Haswell lacks) left out with a line in the log, the
  AVX/SSE/x87 registers intact.

Run with: python3 -m pytest -m kernel test/kernel/test_cpu_models.py
"""
import re
from pathlib import Path
from typing import Any

import pytest

from guestlib import ZDTM_BUILT as BUILT

pytestmark = pytest.mark.kernel

SMALL, BIG = "Haswell", "Skylake-Server"
PROGS = ["regs_avx", "regs_sse", "regs_fpu", "cpu_affinity"]
# cpu_affinity pins itself to CPU 1 of guest A (2 CPUs) and must be on CPU
# 0 after the restore in guest B, which has 1 CPU: fewer CPUs as well
ARGS = {"cpu_affinity": "1 0"}
SMP_A, SMP_B = 2, 1

# Guest A: start each program, dump it, leave its directory in /shared.
DUMP = r"""
set -u
mkdir -p /tmp/zdtm
# pids past those guest B's own commands take before it restores them
i=0
while [ $i -lt 400 ]; do /bin/true; i=$((i + 1)); done
echo "XSAVE $(grep -m1 '^flags' /proc/cpuinfo | grep -o -w -E 'avx2|pku|xsave' | tr '\n' ,)"
for prog in @PROGS@; do
	d=/tmp/zdtm/$prog
	mkdir -p $d/img
	cd $d
	case $prog in
@ARGS@
	*) args= ;;
	esac
	ZDTM_GAP=1 setsid /zdtm/$prog --outfile $d/out --readyfile $d/ready $args \
		</dev/null >>$d/log 2>&1 &
	i=0
	while [ ! -s $d/ready ] && [ ! -s $d/out ] && [ $i -lt 200 ]; do
		sleep 0.1; i=$((i + 1))
	done
	if [ ! -s $d/ready ]; then echo "NOTREADY $prog $(cat $d/out 2>/dev/null)"; continue; fi
	pid=$(cat $d/ready)
	if criu dump -t $pid -D $d/img -o dump.log -v4; then
		echo "DUMPED $prog"
	else
		echo "DUMPFAIL $prog $(grep Error $d/img/dump.log | head -1)"
	fi
	cd /
	cp -a $d /shared/$prog
done
"""

# Guest B: restore each with the checks in turn, from the strictest; run
# the first restored one to its verdict.
RESTORE = r"""
set -u
mkdir -p /tmp/zdtm
for prog in @PROGS@; do
	[ -d /shared/$prog/img ] || continue
	rm -rf /tmp/zdtm/$prog
	cp -a /shared/$prog /tmp/zdtm/$prog
	d=/tmp/zdtm/$prog
	for caps in default fpu none; do
		opt=
		[ $caps = default ] || opt=--cpu-cap=$caps
		if ! criu restore -d -D $d/img -o restore-$caps.log -v4 --pidfile $d/rpid $opt \
			2>$d/err-$caps; then
			echo "REFUSED $prog $caps $(grep -m1 Error $d/err-$caps)"
			continue
		fi
		echo "RESTORED $prog $caps"
		grep -h 'lacks XSAVE' $d/img/restore-$caps.log | sed "s/^/WARN $prog /"
		rpid=$(cat $d/rpid)
		kill -TERM $rpid
		i=0
		while [ ! -s $d/out ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
		echo "VERDICT $prog $(cat $d/out)"
		break
	done
done
echo "DONE"
"""


def lines(out: str, tag: str) -> list[str]:
    return [ln[len(tag) + 1:] for ln in out.splitlines() if ln.startswith(tag + " ")]


def move(guest: Any, criu_bin: str, subreaper_bin: Path,
         tmp_path_factory: pytest.TempPathFactory, src: str,
         dst: str) -> tuple[str, str, str]:
    missing = [p for p in PROGS if not (BUILT / p).exists()]
    if missing:
        pytest.fail(f"zdtm programs not built in {BUILT}: {' '.join(missing)}")
    share = tmp_path_factory.mktemp(f"cpu-{src}-{dst}")
    extra = [str(criu_bin), str(subreaper_bin)] + [f"{BUILT / p}:/zdtm/{p}" for p in PROGS]
    progs = " ".join(PROGS)
    cases = "\n".join(f"\t{p}) args='{a}' ;;" for p, a in ARGS.items())
    dump = DUMP.replace("@PROGS@", progs).replace("@ARGS@", cases)
    rc, out_a, err = guest.run(dump, smp=SMP_A, selftests=False,
                               timeout=240, share=share, extra=extra, cpu=src)
    assert rc == 0, f"guest A (-cpu {src}):\n{out_a}{err}"
    assert not lines(out_a, "DUMPFAIL"), out_a
    rc, out_b, err = guest.run("subreaper sh -c " + "'" + RESTORE.replace("@PROGS@", progs)
                               .replace("'", "'\\''") + "'", smp=SMP_B, selftests=False,
                               timeout=240, share=share, extra=extra, cpu=dst)
    out = f"--- guest A (-cpu {src}):\n{out_a}--- guest B (-cpu {dst}):\n{out_b}{err}"
    assert rc == 0 and "DONE" in out_b, out
    return out_a, out_b, out


@pytest.fixture(scope="module")
def small_to_big(guest, criu_bin, subreaper_bin, tmp_path_factory):
    return move(guest, criu_bin, subreaper_bin, tmp_path_factory, SMALL, BIG)


@pytest.fixture(scope="module")
def big_to_small(guest, criu_bin, subreaper_bin, tmp_path_factory):
    return move(guest, criu_bin, subreaper_bin, tmp_path_factory, BIG, SMALL)


def dumped(out_a: str) -> list[str]:
    return [ln.split()[0] for ln in lines(out_a, "DUMPED")]


def test_superset_layout_loads(small_to_big):
    """832-byte areas load into 2696-byte ones with the default checks; the
    task pinned to CPU 1 runs on CPU 0 of the one-CPU guest."""
    out_a, out_b, out = small_to_big
    assert dumped(out_a) == PROGS, out
    for prog in PROGS:
        assert f"{prog} default" in lines(out_b, "RESTORED"), out
        assert f"{prog} PASS" in lines(out_b, "VERDICT"), out


def test_missing_refused_by_name(big_to_small):
    """ins names what Haswell lacks, PKU not among it; fpu restores, PKRU
    left out."""
    out_a, out_b, out = big_to_small
    if "pku" not in out_a.split("XSAVE ", 1)[-1].splitlines()[0]:
        pytest.skip(f"-cpu {BIG} has no PKU under this QEMU")
    assert dumped(out_a) == PROGS, out
    for prog in PROGS:
        refused = {ln.split()[1]: ln for ln in lines(out_b, "REFUSED") if ln.split()[0] == prog}
        assert "default" in refused and "instructions" in refused["default"], out
        assert re.search(r"x86-64-v\d; this CPU x86-64-v\d", refused["default"]), out
        assert "pku" not in refused["default"] and "ospke" not in refused["default"], out
        assert "fpu" not in refused, out
        assert f"{prog} fpu" in lines(out_b, "RESTORED"), out
        assert any(w.startswith(prog) and "pkru" in w for w in lines(out_b, "WARN")), out
        assert f"{prog} PASS" in lines(out_b, "VERDICT"), out
