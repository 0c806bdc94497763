"""Security labels of tasks (parts/lsm.c, lsm-PID.img): AppArmor profiles,
SELinux contexts, Smack labels, kept and set again; --lsm-profile TYPE:NAME
(CRIU's option) instead.

Where a module labels tasks here, a task goes through a dump and a restore
with its label. Where none does (this project's machine: lockdown,
capability, landlock, bpf), the dump writes no label, and a restore asked
for one (by the image or by --lsm-profile) is refused in one line before
anything is made: the images stay as they were, and the same images then
restore without it."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Optional

import pytest

import zdtm
from test_cpu import read_image, write_image
from test_errors import check_clean_error

pytestmark = pytest.mark.usefixtures("need_criu")

PROGRAM = "mem_anon"


def label_of(pid: int) -> Optional[str]:
    """/proc/PID/attr/current as restore sets it again; None: no module."""
    try:
        raw = Path(f"/proc/{pid}/attr/current").read_bytes()
    except OSError:
        return None
    text = raw.rstrip(b"\n\0").decode()
    if text.endswith(")") and " (" in text:        # AppArmor's " (enforce)"
        text = text[:text.rindex(" (")]
    return text


def label_of_self() -> Optional[str]:
    return label_of(os.getpid())


def no_module() -> None:
    if label_of_self() is not None:
        pytest.skip("a security module labels tasks here: refusals for a machine "
                    "without one don't apply")


def lsm_fields(img: Path, pid: int) -> tuple[int, list]:
    return read_image(img / f"lsm-{pid}.img")


def unchanged_images(img: Path) -> dict:
    return {k: v for k, v in zdtm.hash_tree(img).items() if not k.endswith((".log", ".pid"))}


def test_round_trip_keeps_label() -> None:
    """The task's label is in the image, and the restored task has it."""
    if label_of_self() is None:
        pytest.skip("no security module labels tasks on this machine "
                    "(/proc/self/attr/current: EINVAL)")
    with zdtm.Run(PROGRAM, "lsm-keep") as r:
        r.start()
        before = label_of(r.pid)
        img = r.imgdir("img")
        r.dump_ok(img)
        _, fields = lsm_fields(img, r.pid)
        labels = [f[2].decode() for f in fields if f[0] == 2]
        assert labels == [before], (labels, before)
        r.restore_ok(img)
        assert label_of(r.pid) == before
        r.finish()


def test_no_module_no_label() -> None:
    """Without a module the image holds no kind and no label."""
    no_module()
    with zdtm.Run(PROGRAM, "lsm-none") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        _, fields = lsm_fields(img, r.pid)
        assert fields == [], fields
        r.restore_ok(img)
        r.finish()


@pytest.mark.parametrize("how", ["option", "image", "bad-image"])
def test_label_refused_without_module(how: str) -> None:
    """A label this machine can't set (asked by --lsm-profile, or carried
    by the image) is refused in one line naming the task, the module and
    the label; nothing is left, the images are as they were, and a restore
    without the label works."""
    no_module()
    with zdtm.Run(PROGRAM, f"lsm-refused-{how}") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        path = img / f"lsm-{r.pid}.img"
        saved = path.read_bytes()
        magic, _ = read_image(path)
        opts: list[str] = []
        words: tuple[str, ...]
        if how == "option":
            opts, words = ["--lsm-profile", "apparmor:zdtm-profile"], ("zdtm-profile",)
        elif how == "image":
            write_image(path, magic, [[1, 2, b"apparmor"], [2, 2, b"zdtm-profile"]])
            words = ("--lsm-profile",)
        else:   # a kind with no label for the task's thread
            write_image(path, magic, [[1, 2, b"selinux"]])
            words = ("invalid",)
        before = unchanged_images(img)
        res, _ = r.restore(img, opts)
        line = check_clean_error(r, res, f"restore with a label ({how})", words, r.pid)
        if how != "bad-image":
            assert "apparmor" in line, line
        assert zdtm.proc_state(r.pid) in (None, "X"), "a task of the failed restore is left"
        assert unchanged_images(img) == before, "the failed restore changed the images"
        path.write_bytes(saved)
        r.restore_ok(img)
        r.finish()


def test_bad_profile_option() -> None:
    """--lsm-profile needs TYPE:NAME of a module that labels tasks."""
    for arg in ("docker-default", "tomoyo:x", "apparmor:"):
        p = subprocess.run([str(zdtm.CRIU), "restore", "-D", "/nonexistent",
                            "--lsm-profile", arg], capture_output=True, text=True)
        errs = zdtm.error_lines(p.stderr)
        assert p.returncode > 0 and len(errs) == 1 and "--lsm-profile" in errs[0], p


def test_profile_over_rpc() -> None:
    """runc's lsm_profile: a malformed one is refused naming the option, a
    label this machine can't set as on the command line; then a restore
    without it works."""
    no_module()
    from test_rpc import rpc_restore
    with zdtm.Run(PROGRAM, "lsm-rpc") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        resp = rpc_restore(r, img, lsm_profile="docker-default")
        assert not resp.success and "lsm_profile" in resp.cr_errmsg, resp
        resp = rpc_restore(r, img, lsm_profile="apparmor:zdtm-profile")
        assert not resp.success and "apparmor" in resp.cr_errmsg, resp
        assert zdtm.proc_state(r.pid) in (None, "X"), "a task of the failed restore is left"
        r.restore_ok(img)
        r.finish()
