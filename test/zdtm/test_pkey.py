"""Memory protection keys: criu does not save them, so memory with a key
(pkey_mprotect()) is refused at dump with one line naming the task, the
area and the key, and the task runs on, its key still guarding the memory
(static/mem_pkey checks that at its end). Skipped where the CPU or kernel
has no protection keys (the program says so).

The other half, in parts/cpu-info.c and parts/regs.c: every task a dump
lets through has no memory with a key, so a destination without PKU
(CPUID pku/ospke, XSAVE's PKRU) restores it; test/kernel's
test_two_kernels.py and test_cpu_models.py restore on such guests with
the default checks."""
from __future__ import annotations

import pytest

import zdtm
from test_shapes import refused

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")


def test_protection_key_refused() -> None:
    with zdtm.Run("mem_pkey", "refused") as r:
        r.start()
        snap = r.snapshot()
        refused(r, r.dump(r.imgdir("img")), ("protection key",))
        r.check_running("after the refused dump", snap)
        r.finish()
