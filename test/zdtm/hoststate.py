"""The state of the host that tests must leave as they found it: the mounts
(mount points, file systems, options, propagation), the IPC sysctls and
the UTS names of the namespaces the runner is in, the runner's cgroup, and
its network namespace's links (name, flags, MTU, MAC, master) and nftables
ruleset. A test that changes any of them must do it in namespaces of its
own.

snapshot() takes the state, diff() names what changed between two. The
two fixtures compare it around every test (naming the test that changed
something) and around the whole session; a conftest.py turns them on by
importing them (test/zdtm's and test/kernel's do).
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

SYSCTL = Path("/proc/sys")
IPC_SYSCTLS = [f"kernel/{n}" for n in (
    "shmmax", "shmall", "shmmni", "shm_rmid_forced", "shm_next_id",
    "msgmax", "msgmnb", "msgmni", "msg_next_id", "auto_msgmni",
    "sem", "sem_next_id")]
UTS_SYSCTLS = ["kernel/hostname", "kernel/domainname"]

State = dict[str, str]


def read(path: Path | str) -> str:
    try:
        return Path(path).read_text().strip()
    except FileNotFoundError:
        return "<missing>"
    except OSError as e:
        return f"<unreadable: {e.strerror}>"


def unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    for code, ch in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, ch)
    return field


def mounts(mountinfo: str) -> State:
    """'mount POINT' -> what is mounted there (stacked mounts in order).
    Mount ids are left out: a mount made again just the same is no change."""
    out: State = {}
    for line in mountinfo.splitlines():
        pre, _, post = line.partition(" - ")
        f = pre.split()
        if len(f) < 6 or not post:
            continue
        root, point, opts, tags = unescape(f[3]), unescape(f[4]), f[5], " ".join(f[6:])
        fstype, source, *superopts = post.split()
        what = f"{fstype} {unescape(source)} root={root} {opts} {' '.join(superopts)}"
        if tags:
            what += f" [{tags}]"
        key = f"mount {point}"
        out[key] = f"{out[key]} | {what}" if key in out else what
    return out


def tool(name: str) -> str | None:
    """A tool of the host, also where PATH has no sbin."""
    for path in (shutil.which(name), f"/usr/sbin/{name}", f"/sbin/{name}"):
        if path and os.access(path, os.X_OK):
            return path
    return None


# container.py names the host's links a session's containers make "zcPID...":
# those of other sessions come and go meanwhile (they check their own)
OTHER_SESSION = re.compile(r"zc(\d+)")


def links() -> State:
    """'link NAME' -> flags, MTU, state, master and MAC of each link of the
    runner's network namespace, as `ip -o link show` has them (but those
    other test sessions' containers make)."""
    ip = tool("ip")
    if not ip:
        return {}
    p = subprocess.run([ip, "-o", "link", "show"], capture_output=True, text=True)
    if p.returncode:
        return {"links": f"<ip failed: {p.stderr.strip()}>"}
    out: State = {}
    for line in p.stdout.splitlines():
        _, name, rest = (line.split(": ", 2) + ["", ""])[:3]
        name = name.split("@")[0]
        m = OTHER_SESSION.match(name)
        if m and m.group(1) != str(os.getpid()):
            continue
        out[f"link {name}"] = " ".join(rest.replace("\\", " ").split())
    return out


def nft_ruleset() -> State:
    """The nftables ruleset of the runner's namespace, where nft is installed."""
    nft = tool("nft")
    if not nft:
        return {}
    p = subprocess.run([nft, "list", "ruleset"], capture_output=True, text=True)
    return {"nftables ruleset": p.stdout.strip() if p.returncode == 0 else
            f"<nft failed: {p.stderr.strip()}>"}


def snapshot() -> State:
    state = mounts(read("/proc/self/mountinfo"))
    names = IPC_SYSCTLS + UTS_SYSCTLS + sorted(
        str(Path(p).relative_to(SYSCTL)) for p in glob.glob(str(SYSCTL / "fs/mqueue/*")))
    for name in names:
        state[f"sysctl {name}"] = read(SYSCTL / name)
    state["cgroup of the runner"] = read("/proc/self/cgroup").replace("\n", "; ")
    state.update(links())
    state.update(nft_ruleset())
    return state


def diff(before: State, after: State) -> list[str]:
    """One line per thing that changed, appeared or went away."""
    out = []
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key), after.get(key)
        if a == b:
            continue
        if a is None:
            out.append(f"{key}: appeared: {b}")
        elif b is None:
            out.append(f"{key}: gone (was {a})")
        else:
            out.append(f"{key}: {a!r} -> {b!r}")
    return out


def report(what: str, changes: list[str]) -> str:
    return (f"{what} left the host changed (do it in namespaces of its own, or undo "
            "it):\n  " + "\n  ".join(changes))


@pytest.fixture(autouse=True, scope="session")
def host_unchanged_by_session() -> Iterator[None]:
    before = snapshot()
    yield
    changes = diff(before, snapshot())
    if changes:
        pytest.fail(report("the session", changes), pytrace=False)


@pytest.fixture(autouse=True)
def host_unchanged_by_test(request: pytest.FixtureRequest) -> Iterator[None]:
    before = snapshot()
    yield
    changes = diff(before, snapshot())
    if changes:
        pytest.fail(report(request.node.nodeid, changes), pytrace=False)
