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
import struct
import sys
from pathlib import Path
from typing import Callable

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


FLAVOURS: list[str] = ["none"] if zdtm.SELFCHECK else zdtm.FLAVOURS


@pytest.mark.parametrize("flavour", FLAVOURS)
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


ON_ENTRY = re.compile(r"thread (\d+) is at the vDSO entry \S+ \(0x[0-9a-f]+\): it goes on")


def on_entries(img: Path, left: list[str]) -> bool:
    """Each thread left in the vDSO was on an entry point (restore.log)."""
    log = (img / "restore.log").read_text(errors="replace")
    return set(left) <= set(ON_ENTRY.findall(log))


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
                res, pidfile = r.restore(img, env=dict(zdtm.os.environ, **REDIRECT))
                if res.returncode == 0 and on_entries(img, left):
                    # stopped before its entry's first instruction: the
                    # redirect's jump is what it runs next, not a refusal
                    r.restored(img, res, pidfile)
                    r.check("after a restore with the thread on an entry", snap)
                    r.finish()
                    continue
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


FRAME = re.compile(r"thread (\d+): a signal frame at 0x[0-9a-f]+ returns into the vDSO")


def test_handler_frame_refused() -> None:
    """A signal handler that interrupted the vDSO still runs at the dump
    (time_vdso_sigframe): the dump finds its frame; a restore that must
    redirect refuses it by name, before anything exists; one on the same
    vDSO restores it, and the interrupted call finishes well."""
    zdtm.need_criu()
    with zdtm.Run("time_vdso_sigframe", "frame") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img)
        found = FRAME.findall(dump_log(img))
        if not found:
            r.fail("the dump found no signal frame returning into the vDSO")
        res, _ = r.restore(img, env=dict(zdtm.os.environ, **REDIRECT))
        line = check_clean_error(r, res, "restore of a handler's frame in the vDSO",
                                 ("signal handler", "vdso"), r.pid)
        if not any(t in line for t in found):
            r.fail(f"the Error line names none of the threads {found}: {line}", res)
        if zdtm.pid_exists(r.pid):
            r.fail("the refused restore left the task behind", res)
        r.restore_ok(img)
        r.check("after restore", snap)
        r.finish()


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


def fingerprint(text: bytes) -> int:
    """mm_entry.vdso_hash: FNV-1a 64 of the text, xor its size."""
    h = 0xcbf29ce484222325
    for b in text:
        h = ((h ^ b) * 0x100000001b3) & (2**64 - 1)
    return h ^ len(text)


def rewrite_vdso(img: Path, pid: int, change: Callable[[bytes], bytes]) -> None:
    """The dumped vDSO made another kernel's: its text in vdso.img changed,
    and the fingerprint both images name with it."""
    v = crit.read_image(img / "vdso.img", full_bytes=True)
    text = change(bytes.fromhex(v["entry"]["texts"][0]["text"]))
    v["entry"]["texts"][0]["text"] = text.hex()
    v["entry"]["texts"][0]["hash"] = fingerprint(text)
    (img / "vdso.img").write_bytes(crit.encode_image(v))
    m = crit.read_image(img / f"mm-{pid}.img", full_bytes=True)
    m["entry"]["vdso_hash"] = fingerprint(text)
    (img / f"mm-{pid}.img").write_bytes(crit.encode_image(m))


def move_symbol(text: bytes, name: str, off: int) -> bytes:
    """text with the dynamic symbol name's value set to off."""
    b = bytearray(text)
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shnum, = struct.unpack_from("<H", b, 0x3c)
    for i in range(shnum):
        sh = shoff + i * 64
        stype, = struct.unpack_from("<I", b, sh + 4)
        if stype != 11:                                 # SHT_DYNSYM
            continue
        link, = struct.unpack_from("<I", b, sh + 40)
        symoff, symsize = struct.unpack_from("<QQ", b, sh + 24)
        stroff, = struct.unpack_from("<Q", b, shoff + link * 64 + 24)
        for j in range(symoff, symoff + symsize, 24):
            st_name, = struct.unpack_from("<I", b, j)
            end = b.index(0, stroff + st_name)
            if b[stroff + st_name:end].decode() == name:
                struct.pack_into("<Q", b, j + 8, off)
                return bytes(b)
    raise AssertionError(f"no {name} in the vDSO")


def test_other_build_same_entries() -> None:
    """A vDSO of another text (here: a byte of its padding) but the same
    entry points and layout, no hook: this kernel's goes where the task
    had its own, and the program passes. Without it: refused."""
    zdtm.need_criu()
    with zdtm.Run(PROG, "samentries") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img)
        rewrite_vdso(img, r.pid, lambda t: t[:-1] + bytes([t[-1] ^ 0x5a]))
        r.restore_ok(img)
        if "with the same entry points and layout: put where it was" not in \
                (img / "restore.log").read_text(errors="replace"):
            r.fail("the restore did not take the vDSO for one of the same entries")
        r.check("after restore", snap)
        r.finish()


def test_other_symbol_table_redirected() -> None:
    """A vDSO whose symbol table differs (__vdso_getrandom elsewhere, as
    in another kernel's), no hook: the restore redirects on its own, and
    the program's pointers work through the jumps ("moved")."""
    zdtm.need_criu()
    with zdtm.Run(PROG, "othersyms", args=["moved"]) as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img)
        rewrite_vdso(img, r.pid, lambda t: move_symbol(t, "__vdso_getrandom", len(t) - 64))
        r.restore_ok(img)
        if not vdsomaps.parse_log((img / "restore.log").read_text(errors="replace")):
            r.fail("the restore did not redirect the vDSO")
        r.check("after restore", snap)
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
