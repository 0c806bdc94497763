"""The zdtm suite: every test program in static/ through every flavour its
.desc allows (plain, leave-running, twice), or only through "none" (no criu)
when ZDTM_SELFCHECK=1. Run: python3 -m pytest -q test/zdtm"""
from __future__ import annotations


import pytest

import nsflavour
import zdtm


def _params():
    for desc in zdtm.all_descs():
        # no flavours: only a test of its own runs it, with its arguments
        flavours = ["none"] if zdtm.SELFCHECK and desc.flavors else desc.flavors
        for fl in flavours:
            yield pytest.param(desc, fl, id=f"{desc.name}-{fl}")
        if nsflavour.ENABLED:           # ZDTM_NS=1: in a container too (ns.md)
            yield pytest.param(desc, nsflavour.FLAVOUR, id=f"{desc.name}-ns")


@pytest.mark.parametrize("desc,flavour", list(_params()))
def test_static(desc, flavour):
    if flavour == nsflavour.FLAVOUR:
        nsflavour.run_or_skip(desc)
        return
    if flavour != "none":
        zdtm.need_criu()
    zdtm.run_flavour(desc, flavour)


def test_criu_version_and_check():
    zdtm.need_criu()
    with zdtm.Run("file_stdio", "basics") as r:
        res = r.criu(["--version"])
        if res.returncode != 0 or not res.stdout.strip():
            r.fail("criu --version", res)
        res = r.criu(["check"])
        if res.returncode != 0:
            r.fail("criu check", res)


def test_shell_job():
    """A task that is not a session leader checkpoints with --shell-job."""
    zdtm.need_criu()
    with zdtm.Run("mem_anon", "shell-job", session_leader=False) as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img, ["--shell-job"])
        r.restore_ok(img, ["--shell-job"])
        r.check_running("after restore", snap)
        r.finish()
