"""The zdtm test programs (test/zdtm/static), checkpointed and restored by
criu inside the guest: Linux 6.1 with the kernel/ patches, where criu
meets an older kernel than the host's (no PAGEMAP_SCAN, no
PR_TIMER_CREATE_RESTORE_IDS, a 5-page [vvar]). One boot runs every test
in the "plain" flavour (guest-zdtm.sh), and a few again in a CPU namespace
of their own ("cpuns": made of CPUs 3 and 2 of the guest's 4, restored
with the same map); each is reported as its own pytest case.

Run with: python3 -m pytest -m kernel test/kernel/test_guest_zdtm.py
"""
import json
import re
from pathlib import Path

import pytest

from guestlib import HERE, ROOT, ZDTM_BUILT as BUILT

pytestmark = pytest.mark.kernel

STATIC = ROOT / "test" / "zdtm" / "static"


def descs():
    """(name, desc) of every test with a plain flavour, as zdtm.py reads them."""
    out = []
    for c in sorted(STATIC.glob("*.c")):
        d = c.with_suffix(".desc")
        data = json.loads(d.read_text()) if d.exists() else {}
        if "plain" in data.get("flavors", ["plain"]) and d.exists():
            out.append((c.stem, data))
    return out


TESTS = descs()

# Run again inside a CPU namespace: threads, trees, pid and time namespaces,
# the vDSO, affinity and timers, all of which meet the namespace's rules.
CPUNS_MAP = "0:3,1:2"
CPUNS_TESTS = ["task_affinity", "thread_state", "thread_churn", "tree_session",
               "tree_fork_loop", "tree_zombie", "ns_pid_tree", "timens_nested",
               "time_vdso", "mem_cow_tree", "sys_futex", "posix_timer_fire", "regs_avx"]
CASES = [(n, d, "", "") for n, d in TESTS] + \
    [(n, d, "cpuns", CPUNS_MAP) for n, d in TESTS if n in CPUNS_TESTS]


def case_id(name, tag):
    return f"{name}:{tag}" if tag else name

# What criu refuses on 6.1 for want of a newer kernel, and how it shows: a
# failure that does not match is a real one. (A test program whose own
# feature 6.1 lacks, MFD_NOEXEC_SEAL or MADV_GUARD_INSTALL say, skips.)
EVENTFD_6_5 = ("criu refuses eventfds on kernels whose fdinfo lacks "
               "eventfd-semaphore (Linux 6.5+)", r"does not show whether it is a semaphore")
# The guest's kernel is built without nf_tables: a tree with a network
# namespace of its own can't be locked by criu's default --network-lock
# (nftables), and the dump says so (a host without netfilter gets the same).
NO_NFTABLES = ("the guest kernel has no nf_tables: criu's default network lock of the "
               "tree's own network namespace can't be taken there",
               r"can't open a netfilter socket: Protocol not supported")
# The guest's kernel is built without inet_diag (CONFIG_INET_DIAG), which
# criu asks about a TCP socket's state, and without network devices
# (CONFIG_NETDEVICES: SO_BINDTODEVICE is ENOPROTOOPT); both say so.
NO_INET_DIAG = ("the guest kernel has no inet_diag: criu can't ask it about a TCP socket",
                r"is inet_diag available\?")
NO_UDP_DIAG = ("the guest kernel has no inet_diag: criu can't ask it about a UDP socket "
               "with datagrams queued", r"about the UDP socket .* is inet_diag available\?")
NO_NETDEVICES = ("the guest kernel has no network devices: the program's SO_BINDTODEVICE "
                 "is refused before it is ready", r"SO_BINDTODEVICE: Protocol not available")
# Nor packet_diag (CONFIG_PACKET_DIAG), which criu asks about a packet
# socket's memberships, rings and queue: it refuses the socket, saying so.
NO_PACKET_DIAG = ("the guest kernel has no packet_diag: criu can't ask it about a packet "
                  "socket", r"is packet_diag available\?")
KNOWN_ON_6_1 = {
    "sk_inet_tcp": NO_INET_DIAG,
    "sk_inet_udp": NO_NETDEVICES,
    "sk_inet_udpq": NO_UDP_DIAG,
    "sk_packet": NO_PACKET_DIAG,
    "sk_netsk_tasks": NO_PACKET_DIAG,   # a packet socket among them
    # packet sockets with rings: their geometry comes from packet_diag too
    **{f"sk_packet_ring{v}": NO_PACKET_DIAG
       for v in ("", "_v1", "_dgram", "_shared", "_tx", "_txq", "_v3")},
    "sk_unix_netns": NO_NFTABLES,
    "sk_unix_ns": NO_NFTABLES,
    "epoll_watches": EVENTFD_6_5,
    "epoll_closed": EVENTFD_6_5,        # an eventfd takes a closed watch's number
    "eventfd_state": EVENTFD_6_5,
    "file_tree_shared": EVENTFD_6_5,
    "shapes": EVENTFD_6_5,      # one of each kind, an eventfd among them
}


def list_line(name, d, tag, cpuns):
    env = " ".join(f"{k}={v}" for k, v in d.get("restore_env", {}).items())
    fields = [name, " ".join(d.get("args", [])), " ".join(d.get("dump_opts", [])),
              " ".join(d.get("restore_opts", [])), env, "1" if d.get("pidns") else "",
              d.get("expect", "pass"), tag, cpuns]
    assert not any("|" in f for f in fields), fields
    return "|".join(fields)


@pytest.fixture(scope="module")
def guest_zdtm(guest, criu_bin, subreaper_bin, cpuns_bin, tmp_path_factory):
    missing = sorted({c[0] for c in CASES if not (BUILT / c[0]).exists()})
    if missing:
        pytest.fail(f"zdtm programs not built in {BUILT}: {' '.join(missing)} "
                    "(ninja -C BUILD_DIR, or set ZDTM_BUILD)")
    built = CASES
    work = tmp_path_factory.mktemp("guest-zdtm")
    lst = work / "list"
    lst.write_text("".join(list_line(*c) + "\n" for c in built))
    extra = [str(criu_bin), str(subreaper_bin), str(cpuns_bin),
             f"{HERE / 'guest-zdtm.sh'}:/guest-zdtm.sh", f"{lst}:/zdtm.list"]
    extra += [f"{BUILT / n}:/zdtm/{n}" for n in sorted({c[0] for c in built})]
    rc, out, err = guest.run("subreaper sh /guest-zdtm.sh /zdtm.list", selftests=False,
                             timeout=900, extra=extra)
    assert rc == 0 and "ZDTM-DONE" in out, out + err
    results = {}
    name = None
    for line in out.splitlines():
        m = re.match(r"ZDTM (\S+) (ok|FAILED|skipped) ?(.*)", line)
        if m:
            name = m.group(1)
            results[name] = [m.group(2), m.group(3)]
        elif line.startswith("| ") and name:
            results[name].append(line)
    return results


@pytest.mark.parametrize("name,tag", [(n, t) for n, _, t, _ in CASES],
                         ids=[case_id(n, t) for n, _, t, _ in CASES])
def test_zdtm_in_guest(guest_zdtm, name, tag):
    cid = case_id(name, tag)
    assert cid in guest_zdtm, f"{cid}: no result from the guest"
    verdict, reason, *logs = guest_zdtm[cid]
    if verdict == "skipped":
        pytest.skip(f"{cid} in the guest: {reason}")
    text = f"{cid}: {reason}\n" + "\n".join(logs)
    if verdict != "ok" and name in KNOWN_ON_6_1 and re.search(KNOWN_ON_6_1[name][1], text):
        pytest.xfail(KNOWN_ON_6_1[name][0])
    assert verdict == "ok", text
