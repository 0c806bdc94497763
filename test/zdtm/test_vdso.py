"""The vDSO across kernels (Documentation/design.md, section 7): the
restoring kernel's vDSO put elsewhere and the dumped one back as a
redirect to it, forced on this one kernel with the test hook
CRIU_VDSO_REDIRECT=1 (test/kernel/test_two_kernels.py does it between
two real kernels, test/unit/test_vdso_elf.c between the vDSOs of three);
threads stepped out of the vDSO at the dump; what a
restore refuses; the runner's rule for the maps a redirect changes.
Run: python3 -m pytest -q test/zdtm/test_vdso.py"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import buildpaths
import vdsomaps
import zdtm
from test_errors import check_clean_error

sys.path.insert(0, str(buildpaths.CRIT.parent))
import crit  # noqa: E402

PROG = "time_vdso_redirect"
REDIRECT = {"CRIU_VDSO_REDIRECT": "1"}
STEPPED = re.compile(r"thread (\d+) was in the vDSO at 0x[0-9a-f]+: out after (\d+)")
LEFT = re.compile(r"thread (\d+) left in the vDSO at")
TRIES = 8


def desc(moved: bool) -> zdtm.Desc:
    return zdtm.Desc(name=PROG, args=["moved"] if moved else [],
                     restore_env=dict(REDIRECT) if moved else {})


@pytest.mark.parametrize("flavour", ["none"] if zdtm.SELFCHECK else zdtm.FLAVOURS)
def test_redirected(flavour: str) -> None:
    """Every flavour with the vDSO redirected at each restore: the program
    checks that its old pointers work, without a system call, and that the
    vDSO moved; the runner, that the maps changed only so."""
    if flavour != "none":
        zdtm.need_criu()
    zdtm.run_flavour(desc(flavour != "none"), flavour)


def dump_log(img: Path) -> str:
    return (img / "dump.log").read_text(errors="replace")


def test_threads_stepped_out() -> None:
    """A thread the dump finds inside the vDSO is stepped out of it (the
    log says so, and where it went), and the task is restored with a
    redirect: its registers never point into the old vDSO's code."""
    zdtm.need_criu()
    for i in range(TRIES):
        with zdtm.Run(PROG, "stepped", args=["moved"]) as r:
            r.start()
            snap = r.snapshot()
            img = r.imgdir("img")
            r.dump_ok(img)
            found = STEPPED.findall(dump_log(img))
            r.restore_ok(img, env=dict(zdtm.os.environ, **REDIRECT))
            r.check("after restore", snap)
            r.finish()
            if found:
                return
    pytest.fail(f"no thread was found inside the vDSO in {TRIES} dumps")


def test_left_inside_refused() -> None:
    """A thread left inside the vDSO at the dump (the test hook
    CRIU_VDSO_NO_STEP=1): a restore that must redirect refuses it by name,
    before anything exists; one on the same vDSO restores it."""
    zdtm.need_criu()
    for i in range(TRIES):
        with zdtm.Run(PROG, "left") as r:
            r.start()
            snap = r.snapshot()
            img = r.imgdir("img")
            res = r.dump(img, env=dict(zdtm.os.environ, CRIU_VDSO_NO_STEP="1"))
            if res.returncode:
                r.fail("criu dump failed", res)
            r.gone_after_dump(res)
            left = LEFT.findall(dump_log(img))
            if left:
                res, _ = r.restore(img, env=dict(zdtm.os.environ, **REDIRECT))
                line = check_clean_error(r, res, "restore of a thread inside the vDSO",
                                         ("inside the vdso",), r.pid)
                if not any(t in line for t in left):
                    r.fail(f"the Error line names none of the threads {left}: {line}", res)
                if zdtm.pid_exists(r.pid):
                    r.fail("the refused restore left the task behind", res)
            r.restore_ok(img)
            r.check("after restore", snap)
            r.finish()
            if left:
                return
    pytest.fail(f"no thread was left inside the vDSO in {TRIES} dumps")


def test_no_copy_refused() -> None:
    """Images without vdso.img (the dumped vDSO's text) can't be
    redirected: refused with one line, nothing created."""
    zdtm.need_criu()
    with zdtm.Run(PROG, "nocopy") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img)
        (img / "vdso.img").unlink()
        res, _ = r.restore(img, env=dict(zdtm.os.environ, **REDIRECT))
        check_clean_error(r, res, "restore without vdso.img", ("no copy",), r.pid)
        if zdtm.pid_exists(r.pid):
            r.fail("the refused restore left the task behind", res)
        r.restore_ok(img)
        r.check("after restore", snap)
        r.finish()


def test_vdso_img_holds_the_text() -> None:
    """vdso.img holds the [vdso] the task had, byte for byte, once, under
    the fingerprint its mm image names."""
    zdtm.need_criu()
    with zdtm.Run(PROG, "image") as r:
        r.start()
        maps = Path(f"/proc/{r.pid}/maps").read_text().splitlines()
        line = next(m for m in maps if m.endswith("[vdso]"))
        start, end = (int(x, 16) for x in line.split()[0].split("-"))
        with open(f"/proc/{r.pid}/mem", "rb") as mem:
            mem.seek(start)
            text = mem.read(end - start)
        img = r.imgdir("img")
        r.dump_ok(img, leave_running=True)
        v = crit.read_image(img / "vdso.img", full_bytes=True)["entry"]
        m = crit.read_image(img / f"mm-{r.pid}.img")["entry"]
        assert len(v["texts"]) == 1, v
        assert bytes.fromhex(v["texts"][0]["text"]) == text
        assert int(v["texts"][0]["hash"]) == int(m["vdso_hash"])
        r.finish()


OLD = ["55d0-55e0 r-xp 00000000 08:01 12 /bin/x",
       "7f00-7f04 r--p 00000000 00:00 0 [vvar]",
       "7f04-7f06 r--p 00000000 00:00 0 [vvar_vclock]",
       "7f06-7f08 r-xp 00000000 00:00 0 [vdso]",
       "7ff0-7ff8 rw-p 00000000 00:00 0 [stack]"]


def test_maps_rule() -> None:
    """The runner's rule: exactly the redirect's change is expected, and
    only for the task whose [vdso] it names."""
    log = ("(0.1) Task 7: vDSO redirect 0x7f06-0x7f08: [vvar] 0x7e00-0x7e05 "
           "[vdso] 0x7e05-0x7e07\n")
    rs = vdsomaps.parse_log(log)
    assert len(rs) == 1 and rs[0].areas == [("[vvar]", 0x7e00, 0x7e05), ("[vdso]", 0x7e05, 0x7e07)]
    assert vdsomaps.apply(OLD, rs) == [
        "55d0-55e0 r-xp 00000000 08:01 12 /bin/x",
        "7e00-7e05 r--p 00000000 00:00 0 [vvar]",
        "7e05-7e07 r-xp 00000000 00:00 0 [vdso]",
        "7f06-7f08 r-xp 00000000 00:00 0",
        "7ff0-7ff8 rw-p 00000000 00:00 0 [stack]"]
    other = vdsomaps.parse_log(log.replace("0x7f06-0x7f08", "0x9000-0x9002"))
    assert vdsomaps.apply(OLD, other) == OLD
    assert vdsomaps.apply(OLD, []) == OLD
