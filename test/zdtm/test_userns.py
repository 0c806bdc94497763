"""The tree's user namespace (Documentation/namespaces.md): a root in a user
namespace of its own, child of the runner's, with maps, setgroups and ids
inside (userns_maps), dumped and restored; from outside: the same maps,
the same ids as the host sees them, a namespace whose parent is criu's and
which owns the namespaces made in it. Refused, with one line naming the
task: a user namespace made inside the tree (refuse_userns,
test_tree_errors.py), and namespaces of the root that its user namespace
does not own (a pid namespace made before it)."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

import zdtm
from test_errors import check_clean_error

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")

NS_GET_USERNS = 0xb701     # _IO(0xb7, 1), linux/nsfs.h
NS_GET_PARENT = 0xb702


@pytest.fixture(autouse=True)
def _need_criu():
    if not zdtm.criu_available():
        pytest.fail(f"criu not found at {zdtm.CRIU} (build it or set CRIU)")


def related(pid: int, ns: str, op: int) -> int:
    """The inode of the user namespace that owns (or is the parent of) it."""
    fd = os.open(f"/proc/{pid}/ns/{ns}", os.O_RDONLY)
    try:
        other = fcntl.ioctl(fd, op)
        try:
            return os.fstat(other).st_ino
        finally:
            os.close(other)
    finally:
        os.close(fd)


def view(pid: int) -> dict[str, list[str]]:
    """What the host sees of the task's user namespace and ids."""
    out = {f: Path(f"/proc/{pid}/{f}").read_text().split() for f in ("uid_map", "gid_map",
                                                                      "setgroups")}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("Uid:", "Gid:", "Groups:", "CapEff:", "CapPrm:", "CapBnd:")):
            k, v = line.split(":", 1)
            out[k] = v.split()
    return out


@pytest.mark.parametrize("setgroups", ["allow", "deny"])
def test_round_trip(setgroups: str) -> None:
    with zdtm.Run("userns_maps", f"userns-{setgroups}", args=[setgroups, "uts"]) as r:
        r.start()
        before = view(r.pid)
        assert before["Uid"] == ["0", "0", "200005", "0"], before["Uid"]
        img = r.imgdir("img")
        r.dump_ok(img)
        assert (img / "userns.img").exists()
        r.restore_ok(img)
        assert view(r.pid) == before
        runner = os.stat("/proc/self/ns/user").st_ino
        own = os.stat(f"/proc/{r.pid}/ns/user").st_ino
        assert own != runner and related(r.pid, "user", NS_GET_PARENT) == runner
        assert related(r.pid, "uts", NS_GET_USERNS) == own, "the UTS namespace's owner"
        r.finish()


def test_owner_refused():
    """A pid namespace made before the user namespace can't be owned by it
    after a restore: refused, naming the task and the namespace."""
    with zdtm.Run("userns_maps", "userns-pidns", args=["allow"], pidns=True) as r:
        r.start()
        snap = r.snapshot()
        res = r.dump(r.imgdir("img"))
        check_clean_error(r, res, "a pid namespace its user namespace does not own",
                          ("pid namespace belongs to",), r.pid)
        r.check_running("after the refused dump", snap)
        r.finish()


def test_nested_refused_line():
    """A child in a user namespace of its own (refuse_userns): the one
    Error line names the child, its namespace, its parent and the
    parent's namespace, and says why (nested)."""
    with zdtm.Run("refuse_userns", "nested-line") as r:
        r.start()
        snap = r.snapshot()
        kids = [int(k) for k in Path(f"/proc/{r.pid}/task/{r.pid}/children").read_text().split()]
        assert len(kids) == 1, kids
        child_ns = os.readlink(f"/proc/{kids[0]}/ns/user")
        root_ns = os.readlink(f"/proc/{r.pid}/ns/user")
        res = r.dump(r.imgdir("img"))
        line = check_clean_error(r, res, "a child in a user namespace of its own",
                                 ("nested",), kids[0])
        for want in (child_ns, root_ns, f"parent {r.pid}"):
            if want not in line:
                r.fail(f"the refusal does not name {want}: {line}", res)
        r.check_running("after the refused dump", snap)
        r.finish()
