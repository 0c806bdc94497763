"""CRIU's RPC as runc, crun and podman speak it: `criu swrk FD` and
`criu service`, with a client built on Google's protobuf and our
images/rpc.proto (rpcclient.py), and a few requests encoded by hand from
CRIU's field numbers, so that a renumbered field fails here.

Covered: VERSION, FEATURE_CHECK, CHECK, CPUINFO, WAIT_PID, keep_open,
DUMP and RESTORE of zdtm programs with their notifications in CRIU's order,
a notification answered "no", refused options (named, the task untouched),
config files, status_fd, malformed requests (answered, never a crash), the
stats files in CRIU's layout, and the service daemon. The CLI's
--action-script and check --feature are here too: the same hooks.
"""
from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

import buildpaths
from test_lazy import uffd_lacks
from test_predump import kernel_lacks
import rpcclient as rpc
import zdtm

sys.path.insert(0, str(buildpaths.CRIT.parent))
import crit  # noqa: E402

pytestmark = pytest.mark.usefixtures("need_criu")

CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000


# ------------------------------------------------------------ helpers

def swrk(r: Optional[zdtm.Run] = None) -> rpc.Swrk:
    log = r.dir / f"swrk{r.ncriu}.out" if r is not None else None
    return rpc.Swrk(zdtm.CRIU, log=log)


def simple(kind: str, **fields: Any) -> Any:
    req = rpc.msg("criu_req")()
    req.type = rpc.req_type(kind)
    for k, v in fields.items():
        setattr(req, k, v)
    return req


def one(req: Any) -> tuple[Any, int]:
    """One request on a swrk of its own: the answer and criu's exit status."""
    s = swrk()
    try:
        resp = s.call(req)
    finally:
        rc = s.wait()
    return resp, rc


def dir_fd(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY)


class Notes:
    """Records the notifications; says no at NO."""

    def __init__(self, no: str = ""):
        self.seen: list[tuple[str, Optional[int]]] = []
        self.no = no
        self.root_ppid = 0      # the root's parent at post-restore, criu still there

    def __call__(self, resp: Any) -> bool:
        n = resp.notify
        self.seen.append((n.script, n.pid if n.HasField("pid") else None))
        if n.script == "post-restore" and n.HasField("pid"):
            with open(f"/proc/{n.pid}/stat") as f:
                self.root_ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        return n.script != self.no

    def names(self) -> list[str]:
        return [s for s, _ in self.seen]


def rpc_op(r: zdtm.Run, kind: str, img: Path, notes: Optional[Notes],
           **opts: Any) -> Any:
    """DUMP or RESTORE over swrk, the images directory as a client's fd."""
    fd = dir_fd(img)
    try:
        req = rpc.request(kind, images_dir_fd=fd, log_level=4,
                          log_file=f"{kind.lower()}.log", **opts)
        if notes is not None:
            req.opts.notify_scripts = True
        s = swrk(r)
        try:
            return s.call(req, notes)
        finally:
            s.wait()
    finally:
        os.close(fd)


def rpc_dump(r: zdtm.Run, img: Path, notes: Optional[Notes] = None, **opts: Any) -> Any:
    return rpc_op(r, "DUMP", img, notes, pid=r.pid, **opts)


def rpc_restore(r: zdtm.Run, img: Path, notes: Optional[Notes] = None,
                **opts: Any) -> Any:
    return rpc_op(r, "RESTORE", img, notes, **opts)


def expect_ok(r: zdtm.Run, resp: Any, what: str, log: Path) -> None:
    if not resp.success:
        r.fail(f"{what} over RPC failed: errno {resp.cr_errno}: {resp.cr_errmsg}\n"
               f"--- tail of {log}:\n{zdtm.tail(log)}")


def expect_dumped(r: zdtm.Run, resp: Any, log: Path) -> None:
    """The dump worked and, without leave_running, killed the task."""
    expect_ok(r, resp, "dump", log)
    r.gone_after_dump(zdtm.CriuResult([], 0, "", "", None))


def adopt(r: zdtm.Run, pid: int) -> None:
    """The restored root is ours again (rst_sibling) or reparented to us."""
    if pid != r.pid:
        r.fail(f"restored with pid {pid}, not {r.pid}")
    r.alive = r.ours = True


# ------------------------------------------------------------ the wire

def varints(data: bytes) -> dict[int, list[Any]]:
    """A protobuf message without a schema: field -> values (ints or bytes)."""
    out: dict[int, list[Any]] = {}
    for number, wire, v in crit.raw_fields(data, "a CRIU message"):
        assert wire in (crit.WIRE_VARINT, crit.WIRE_LEN), f"wire type {wire} in a CRIU message"
        out.setdefault(number, []).append(v)
    return out


# CRIU's numbers (images/rpc.proto of CRIU 4.0): the wire format is an
# interface; this table is the reference our rpc.proto must match.
CRIU_OPTS_FIELDS = {
    "images_dir_fd": 1, "pid": 2, "leave_running": 3, "ext_unix_sk": 4,
    "tcp_established": 5, "evasive_devices": 6, "shell_job": 7, "file_locks": 8,
    "log_level": 9, "log_file": 10, "ps": 11, "notify_scripts": 12, "root": 13,
    "parent_img": 14, "track_mem": 15, "auto_dedup": 16, "work_dir_fd": 17,
    "link_remap": 18, "veths": 19, "cpu_cap": 20, "force_irmap": 21, "exec_cmd": 22,
    "ext_mnt": 23, "manage_cgroups": 24, "cg_root": 25, "rst_sibling": 26,
    "inherit_fd": 27, "auto_ext_mnt": 28, "ext_sharing": 29, "ext_masters": 30,
    "skip_mnt": 31, "enable_fs": 32, "unix_sk_ino": 33, "manage_cgroups_mode": 34,
    "ghost_limit": 35, "irmap_scan_paths": 36, "external": 37, "empty_ns": 38,
    "join_ns": 39, "cgroup_props": 41, "cgroup_props_file": 42,
    "cgroup_dump_controller": 43, "freeze_cgroup": 44, "timeout": 45,
    "tcp_skip_in_flight": 46, "weak_sysctls": 47, "lazy_pages": 48, "status_fd": 49,
    "orphan_pts_master": 50, "config_file": 51, "tcp_close": 52, "lsm_profile": 53,
    "tls_cacert": 54, "tls_cacrl": 55, "tls_cert": 56, "tls_key": 57, "tls": 58,
    "tls_no_cn_verify": 59, "cgroup_yard": 60, "pre_dump_mode": 61,
    "pidfd_store_sk": 62, "lsm_mount_context": 63, "network_lock": 64,
    "mntns_compat_mode": 65, "skip_file_rwx_check": 66, "unprivileged": 67,
    "images_dir": 68, "leave_stopped": 69, "display_stats": 70, "log_to_stderr": 71,
    "allow_uprobes": 72, "ghost_fiemap": 73, "file_validation_method": 74,
}
CRIU_MESSAGES = {
    "criu_req": {"type": 1, "opts": 2, "notify_success": 3, "keep_open": 4,
                 "features": 5, "pid": 6},
    "criu_resp": {"type": 1, "success": 2, "dump": 3, "restore": 4, "notify": 5,
                  "ps": 6, "cr_errno": 7, "features": 8, "cr_errmsg": 9,
                  "version": 10, "status": 11},
    "criu_notify": {"script": 1, "pid": 2},
    "criu_features": {"mem_track": 1, "lazy_pages": 2, "pidfd_store": 3},
    "criu_version": {"major_number": 1, "minor_number": 2, "gitid": 3, "sublevel": 4,
                     "extra": 5, "name": 6},
    "criu_dump_resp": {"restored": 1},
    "criu_restore_resp": {"pid": 1},
    "criu_page_server_info": {"address": 1, "port": 2, "pid": 3, "fd": 4},
    "criu_veth_pair": {"if_in": 1, "if_out": 2},
    "ext_mount_map": {"key": 1, "val": 2},
    "join_namespace": {"ns": 1, "ns_file": 2, "extra_opt": 3},
    "inherit_fd": {"key": 1, "fd": 2},
    "cgroup_root": {"ctrl": 1, "path": 2},
    "unix_sk": {"inode": 1},
    "criu_opts": CRIU_OPTS_FIELDS,
    "dump_stats_entry": {"freezing_time": 1, "frozen_time": 2, "memdump_time": 3,
                         "memwrite_time": 4, "pages_scanned": 5, "pages_skipped_parent": 6,
                         "pages_written": 7, "irmap_resolve": 8, "pages_lazy": 9,
                         "page_pipes": 10, "page_pipe_bufs": 11, "shpages_scanned": 12,
                         "shpages_skipped_parent": 13, "shpages_written": 14},
    "restore_stats_entry": {"pages_compared": 1, "pages_skipped_cow": 2, "forking_time": 3,
                            "restore_time": 4, "pages_restored": 5},
    "stats_entry": {"dump": 1, "restore": 2},
}
CRIU_ENUMS = {
    "criu_req_type": {"EMPTY": 0, "DUMP": 1, "RESTORE": 2, "CHECK": 3, "PRE_DUMP": 4,
                      "PAGE_SERVER": 5, "NOTIFY": 6, "CPUINFO_DUMP": 7,
                      "CPUINFO_CHECK": 8, "FEATURE_CHECK": 9, "VERSION": 10,
                      "WAIT_PID": 11, "PAGE_SERVER_CHLD": 12, "SINGLE_PRE_DUMP": 13},
    "criu_cg_mode": {"IGNORE": 0, "CG_NONE": 1, "PROPS": 2, "SOFT": 3, "FULL": 4,
                     "STRICT": 5, "DEFAULT": 6},
    "criu_network_lock_method": {"IPTABLES": 1, "NFTABLES": 2, "SKIP": 3},
    "criu_pre_dump_mode": {"SPLICE": 1, "VM_READ": 2},
    "criu_file_validation_method": {"FILE_SIZE": 1, "BUILD_ID": 2},
}


def test_proto_numbers_are_criu_s():
    """Every message, field number and enum value of our rpc.proto and
    stats.proto as CRIU has them, and nothing else."""
    for name, fields in CRIU_MESSAGES.items():
        desc = rpc.msg(name).DESCRIPTOR
        ours = {f.name: f.number for f in desc.fields}
        assert ours == fields, (name, set(ours.items()) ^ set(fields.items()))
    for name, values in CRIU_ENUMS.items():
        rpc.msg("criu_req")
        ours = {v.name: v.number for v in rpc._classes[name].values}
        assert ours == values, (name, ours)
    opts = rpc.msg("criu_opts").DESCRIPTOR.fields_by_name
    assert opts["images_dir_fd"].label == opts["images_dir_fd"].LABEL_REQUIRED
    assert opts["images_dir_fd"].default_value == -1
    assert opts["cpu_cap"].default_value == 0xFFFFFFFF
    assert opts["log_level"].default_value == 2


def test_version_on_the_wire():
    """VERSION by CRIU's numbers: criu_req.type is field 1, VERSION is 10;
    criu_resp: type 1, success 2, version 10 {major 1, minor 2, sublevel 4,
    extra 5, name 6}; no gitid (3), or clients would count one minor more."""
    s = swrk()
    try:
        s.send_raw(bytes([0x08, 10]))
        raw = s.recv_raw()
    finally:
        assert s.wait() == 0
    assert raw is not None
    resp = varints(raw)
    assert resp[1] == [10] and resp[2] == [1], resp
    ver = varints(resp[10][0])
    assert ver[1] == [4] and ver[2] == [0] and ver[4] == [0], ver
    assert 3 not in ver, "a gitid makes runc and libcriu add a minor"
    name = ver[6][0].decode()
    a, b, c = (int(x) for x in name.rsplit(" ", 1)[1].split("."))
    assert "reimplementation" in name and ver[5] == [a * 10000 + b * 100 + c], ver


def test_version():
    resp, rc = one(simple("VERSION"))
    assert rc == 0 and resp.success and resp.type == rpc.req_type("VERSION")
    v = resp.version
    number = v.major_number * 10000 + v.minor_number * 100 + v.sublevel
    # runc >= 3.0, podman 3.11, crun 3.15, containerd and CRI-O 3.16
    assert number >= 31600, number


@pytest.mark.parametrize("ask", [True, False])
def test_feature_check(ask: bool) -> None:
    """Every feature is in the answer (runc reads it without a nil check),
    and none is claimed but dirty tracking (test_predump.py) and lazy pages
    (test_lazy.py), where the kernel has them: no pidfd store."""
    req = simple("FEATURE_CHECK")
    if ask:
        req.features.mem_track = True
        req.features.lazy_pages = True
        req.features.pidfd_store = True
    resp, rc = one(req)
    assert rc == 0 and resp.success and resp.HasField("features")
    f = resp.features
    assert f.HasField("pidfd_store") and not f.pidfd_store, f
    assert f.HasField("mem_track") and f.mem_track == (ask and not kernel_lacks()), f
    assert f.HasField("lazy_pages") and f.lazy_pages == (ask and not uffd_lacks()), f


def test_check():
    resp, rc = one(rpc.request("CHECK", images_dir_fd=-1))
    assert rc == 0 and resp.success, resp


def test_keep_open(tmp_path: Path) -> None:
    """Several requests on one connection; criu exits 0 after the last."""
    fd = dir_fd(tmp_path)
    s = swrk()
    try:
        for kind in ("VERSION", "FEATURE_CHECK", "CHECK", "CPUINFO_DUMP", "CPUINFO_CHECK"):
            req = rpc.request(kind, images_dir_fd=fd, log_file="cpuinfo.log") \
                if kind.startswith("CPUINFO") else simple(kind)
            req.keep_open = True
            resp = s.call(req)
            assert resp.success and resp.type == rpc.req_type(kind), resp
        resp = s.call(simple("VERSION"))
        assert resp.success
        assert s.recv_raw() is None, "criu goes after a request without keep_open"
    finally:
        assert s.wait() == 0
        os.close(fd)
    assert (tmp_path / "cpuinfo.img").exists()


def test_keep_open_refused_with_dump():
    """A dump ends the connection (it changes criu): keep_open is refused."""
    req = rpc.request("DUMP", images_dir_fd=-1, images_dir="/nonexistent", pid=1)
    req.keep_open = True
    resp, rc = one(req)
    assert not resp.success and "keep_open" in resp.cr_errmsg, resp
    assert resp.cr_errno == errno.EBADRQC and rc == 1


def test_wait_pid():
    """WAIT_PID waits for criu's own children only: another pid is an error
    that says so, and a request without a pid is one too."""
    resp, rc = one(simple("WAIT_PID", pid=1))
    assert not resp.success and resp.cr_errno == errno.ECHILD, resp
    assert "children" in resp.cr_errmsg
    resp, rc = one(simple("WAIT_PID"))
    assert not resp.success and "pid" in resp.cr_errmsg


# ---------------------------------------------------- malformed requests

VALID_DUMP = bytes([0x08, 0x01, 0x12, 0x04, 0x08, 0x05, 0x10, 0x01])  # DUMP, opts{fd 5, pid 1}

MALFORMED = {
    "truncated": VALID_DUMP[:-3],
    "garbage": bytes(range(251, 256)) * 7,
    "unknown type": bytes([0x08, 99]),
    "empty type": bytes([0x08, 0x00]),
    "no type": bytes([0x18, 0x01]),
    "unknown field": bytes([0x08, 0x0A, 0xF8, 0x01, 0x05]),         # field 31
    "unknown opts field": bytes([0x08, 0x01, 0x12, 0x05, 0x08, 0x05,
                                 0xC0, 0x07, 0x01]),                  # opts field 120
    "opts without images_dir_fd": bytes([0x08, 0x01, 0x12, 0x00]),
    "bad cgroup mode": bytes([0x08, 0x01, 0x12, 0x05, 0x08, 0x05,
                              0x90, 0x02, 77]),                       # field 34 = 77
    "notify out of turn": bytes([0x08, 0x06, 0x18, 0x01]),
    # over criu's 128 KiB limit, under what the socket carries
    "too large": bytes([0x08, 0x0A, 0x92, 0x01, 0x80, 0x80, 0x0A]) + b"x" * 160 * 1024,
}


@pytest.mark.parametrize("what", list(MALFORMED))
def test_malformed_request(what: str) -> None:
    """Each gets an error response with one line saying what is wrong, and
    criu exits by itself, never by a signal."""
    s = swrk()
    try:
        s.send_raw(MALFORMED[what])
        resp = s.recv()
    finally:
        rc = s.wait()
    assert not resp.success and resp.cr_errmsg and "\n" not in resp.cr_errmsg, resp
    assert rc == 1, f"criu exited with {rc}"
    if what in ("unknown field", "unknown opts field"):
        assert "unknown" in resp.cr_errmsg and ("31" in resp.cr_errmsg or
                                                "120" in resp.cr_errmsg)
    if what == "bad cgroup mode":
        assert "manage_cgroups_mode" in resp.cr_errmsg and "77" in resp.cr_errmsg
    if what == "unknown type":
        assert "99" in resp.cr_errmsg


def test_refused_request_types():
    """Known requests criu does not do are answered by their own type."""
    # SINGLE_PRE_DUMP is served (test_rpc_libcriu.py: criu_pre_dump())
    for kind, words in (("PAGE_SERVER_CHLD", "page_server"),):
        resp, rc = one(rpc.request(kind, images_dir_fd=-1))
        assert resp.type == rpc.req_type(kind) and not resp.success, resp
        assert resp.cr_errno == errno.ENOTSUP and words in resp.cr_errmsg.lower(), resp


# ------------------------------------------------- dump and restore

def test_dump_restore_notifications():
    """A zdtm program dumped and restored over RPC, as runc does it: the
    images and work directories as fds of the client, the notifications in
    CRIU's order (each answered before criu goes on), the restored root made
    the client's child (rst_sibling), the stats files in CRIU's layout."""
    with zdtm.Run("mem_anon", "rpc") as r:
        r.start()
        snap = r.snapshot()
        img, work = r.imgdir("img"), r.imgdir("work")
        notes = Notes()
        wfd = dir_fd(work)
        try:
            resp = rpc_dump(r, img, notes, work_dir_fd=wfd)
        finally:
            os.close(wfd)
        expect_dumped(r, resp, work / "dump.log")
        assert resp.dump.HasField("restored") and not resp.dump.restored
        assert notes.seen == [("pre-dump", None), ("post-dump", None)], notes.seen
        st = rpc.read_stats(work / "stats-dump")
        d = st.dump
        assert not st.HasField("restore")
        assert d.pages_written > 0 and d.pages_scanned >= d.pages_written, d
        assert 0 < d.freezing_time and d.memdump_time <= d.frozen_time, d
        assert (work / "dump.log").exists() and not (img / "dump.log").exists()

        time.sleep(zdtm.GAP)
        notes = Notes()
        wfd = dir_fd(work)
        try:
            resp = rpc_restore(r, img, notes, work_dir_fd=wfd, rst_sibling=True)
        finally:
            os.close(wfd)
        expect_ok(r, resp, "restore", work / "restore.log")
        adopt(r, resp.restore.pid)
        assert notes.seen == [("pre-restore", None), ("post-restore", r.pid),
                              ("pre-resume", None), ("post-resume", None)], notes.seen
        assert notes.root_ppid == os.getpid(), \
            f"rst_sibling: the root's parent is {notes.root_ppid}, not the client"
        rs = rpc.read_stats(work / "stats-restore").restore
        assert rs.pages_restored == d.pages_written and 0 < rs.forking_time <= rs.restore_time
        r.check_running("after the RPC restore", snap)
        r.finish()


def test_pre_dump_chain() -> None:
    """PRE_DUMP with track_mem, then DUMP with parent_img and track_mem, as
    runc checkpoint --pre-dump and --parent-path ask: the dump leaves pages
    in its parent, and the restore gives mem_predump every page back."""
    if kernel_lacks():
        pytest.skip(f"no dirty-page tracking on this kernel: {kernel_lacks()}")
    with zdtm.Run("mem_predump", "rpc-pre-dump") as r:
        r.start()
        d1, d2 = r.imgdir("d1"), r.imgdir("d2")
        resp = rpc_op(r, "PRE_DUMP", d1, None, pid=r.pid, track_mem=True)
        expect_ok(r, resp, "pre-dump", d1 / "pre_dump.log")
        r.check_running("after the RPC pre-dump")
        os.kill(r.pid, signal.SIGUSR1)
        deadline = time.monotonic() + 30
        while not (r.dir / "phase.done").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        resp = rpc_dump(r, d2, parent_img="../d1", track_mem=True)
        expect_dumped(r, resp, d2 / "dump.log")
        assert os.readlink(d2 / "parent") == "../d1"
        assert "unchanged since the previous round" in (d2 / "dump.log").read_text()
        (r.dir / "phases").write_text("1\n")
        resp = rpc_restore(r, d2, rst_sibling=True)
        expect_ok(r, resp, "restore", d2 / "restore.log")
        adopt(r, resp.restore.pid)
        r.finish()


def test_pidns_notifications():
    """A tree with namespaces of its own also gets setup-namespaces (with
    the root's pid) and post-setup-namespaces, in CRIU's place."""
    with zdtm.Run("ns_pid_tree", "rpc-pidns", pidns=True) as r:
        r.start()
        img = r.imgdir("img")
        resp = rpc_dump(r, img)
        expect_dumped(r, resp, img / "dump.log")
        notes = Notes()
        resp = rpc_restore(r, img, notes)
        expect_ok(r, resp, "restore", img / "restore.log")
        root = resp.restore.pid
        assert notes.names() == ["pre-restore", "setup-namespaces", "post-setup-namespaces",
                                 "post-restore", "pre-resume", "post-resume"], notes.seen
        assert notes.seen[1][1] == root and notes.seen[3][1] == root, notes.seen
        r.pid = root
        r.alive = True
        r.finish()


def test_notification_refused_at_post_dump():
    """A no at post-dump fails the dump: the task runs on, unchanged, and the
    images are not a checkpoint (no inventory)."""
    with zdtm.Run("mem_anon", "rpc-no") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        notes = Notes(no="post-dump")
        resp = rpc_dump(r, img, notes)
        assert not resp.success and "post-dump" in resp.cr_errmsg, resp
        assert notes.names() == ["pre-dump", "post-dump"]
        assert not (img / "inventory.img").exists()
        assert "post-dump" in (img / "dump.log").read_text()
        r.check_running("after the refused dump", snap)
        r.finish()


def test_notification_refused_at_pre_resume():
    """A no at pre-resume fails the restore and leaves nothing behind."""
    with zdtm.Run("mem_anon", "rpc-no-resume") as r:
        r.start()
        img = r.imgdir("img")
        expect_dumped(r, rpc_dump(r, img), img / "dump.log")
        notes = Notes(no="pre-resume")
        resp = rpc_restore(r, img, notes)
        assert not resp.success and "pre-resume" in resp.cr_errmsg, resp
        assert notes.names() == ["pre-restore", "post-restore", "pre-resume"]
        zdtm.reap_leftovers()
        assert zdtm.proc_state(r.pid) is None, "the half-restored task is still there"
        # the images are intact: a restore without the no works
        resp = rpc_restore(r, img)
        expect_ok(r, resp, "restore", img / "restore.log")
        r.alive = True
        r.finish()


def netns_tree(*setup: str) -> subprocess.Popen:
    """A sleeping session leader in a network namespace of its own."""
    proc = subprocess.Popen(["unshare", "--net", "sleep", "1000"], start_new_session=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while os.readlink(f"/proc/{proc.pid}/exe").endswith("unshare"):
        assert time.monotonic() < deadline, "unshare did not exec"
        time.sleep(0.01)
    for cmd in setup:
        subprocess.run(["nsenter", f"--net=/proc/{proc.pid}/ns/net", "sh", "-c", cmd],
                       check=True, env=dict(os.environ, PATH="/usr/sbin:/usr/bin:/sbin:/bin"))
    return proc


def dump_notes(tmp_path: Path, pid: int, **opts: Any) -> tuple[Any, Notes]:
    fd = dir_fd(tmp_path)
    try:
        req = rpc.request("DUMP", images_dir_fd=fd, pid=pid, notify_scripts=True,
                          log_file="dump.log", **opts)
        notes = Notes()
        s = swrk()
        try:
            resp = s.call(req, notes)
        finally:
            s.wait()
    finally:
        os.close(fd)
    return resp, notes


def test_network_lock_notifications(tmp_path: Path) -> None:
    """A tree with its own network namespace: network-lock before the freeze;
    a refused dump (a bridge inside) is followed by network-unlock, as is a
    dump that leaves the tree running (after post-dump); the task runs on."""
    proc = netns_tree("ip link add br9 type bridge")
    try:
        resp, notes = dump_notes(tmp_path, proc.pid)
        assert not resp.success and "br9" in resp.cr_errmsg, resp
        assert notes.names() == ["pre-dump", "network-lock", "network-unlock"], notes.seen
        assert zdtm.proc_state(proc.pid) in ("S", "R") and zdtm.tracer_pid(proc.pid) == 0
        subprocess.run(["nsenter", f"--net=/proc/{proc.pid}/ns/net", "ip", "link", "del",
                        "br9"], check=True)
        resp, notes = dump_notes(tmp_path, proc.pid, leave_running=True)
        assert resp.success, resp
        assert notes.names() == ["pre-dump", "network-lock", "post-dump",
                                 "network-unlock"], notes.seen
        assert zdtm.proc_state(proc.pid) in ("S", "R") and zdtm.tracer_pid(proc.pid) == 0
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_external_netns_over_rpc():
    """podman's and CRI-O's way: external net[INODE]:KEY at the dump,
    inherit_fd {KEY, fd} (an fd of the client's) at the restore: the tree
    is back in that very namespace; empty_ns (runc's) gives a new one."""
    holder = subprocess.Popen(["unshare", "--net", "sleep", "1000"])
    try:
        deadline = time.monotonic() + 10
        while os.readlink(f"/proc/{holder.pid}/exe").endswith("unshare"):
            assert time.monotonic() < deadline, "unshare did not exec"
            time.sleep(0.01)
        ns = f"/proc/{holder.pid}/ns/net"
        ino = os.stat(ns).st_ino
        with zdtm.Run("mem_anon", "rpc-external-net") as r:
            r.start_prefix = ["nsenter", f"--net={ns}"]
            r.start()
            img = r.imgdir("img")
            expect_ok(r, rpc_dump(r, img, external=[f"net[{ino}]:extnet"]), "dump",
                      img / "dump.log")
            r.gone_after_dump(zdtm.CriuResult([], 0, "", "", None))
            fd = os.open(ns, os.O_RDONLY)
            try:
                resp = rpc_restore(r, img, inherit_fd=[{"key": "extnet", "fd": fd}])
            finally:
                os.close(fd)
            expect_ok(r, resp, "restore", img / "restore.log")
            adopt(r, resp.restore.pid)
            assert os.stat(f"/proc/{r.pid}/ns/net").st_ino == ino
            r.finish()
        with zdtm.Run("mem_anon", "rpc-empty-ns") as r:
            r.start_prefix = ["unshare", "--net"]
            r.start()
            img = r.imgdir("img")
            expect_ok(r, rpc_dump(r, img, empty_ns=CLONE_NEWNET), "dump", img / "dump.log")
            r.gone_after_dump(zdtm.CriuResult([], 0, "", "", None))
            resp = rpc_restore(r, img, empty_ns=CLONE_NEWNET)
            expect_ok(r, resp, "restore", img / "restore.log")
            adopt(r, resp.restore.pid)
            assert os.stat(f"/proc/{r.pid}/ns/net").st_ino not in (
                ino, os.stat("/proc/self/ns/net").st_ino)
            r.finish()
    finally:
        holder.kill()
        holder.wait()


def test_status_fd():
    """status_fd: a zero byte once the restored tree runs."""
    with zdtm.Run("mem_anon", "rpc-status") as r:
        r.start()
        img = r.imgdir("img")
        expect_dumped(r, rpc_dump(r, img), img / "dump.log")
        rd, wr = os.pipe()
        try:
            resp = rpc_restore(r, img, status_fd=wr)
            os.close(wr)
            wr = -1
            expect_ok(r, resp, "restore", img / "restore.log")
            r.alive = True
            assert os.read(rd, 16) == b"\0"
        finally:
            os.close(rd)
            if wr >= 0:
                os.close(wr)
        r.finish()


def test_file_locks_over_rpc():
    """file_locks (runc sends it): without it a task holding a lock is
    refused, naming the option; with it the locks are dumped and restored
    (the program checks their owners)."""
    with zdtm.Run("file_locks_posix", "rpc-file-locks") as r:
        r.start()
        img = r.imgdir("img")
        resp = rpc_dump(r, img)
        assert not resp.success and "--file-locks" in resp.cr_errmsg, resp
        expect_dumped(r, rpc_dump(r, img, file_locks=True), img / "dump.log")
        resp = rpc_restore(r, img)
        expect_ok(r, resp, "restore", img / "restore.log")
        adopt(r, resp.restore.pid)
        r.finish()


@pytest.mark.parametrize("how", ["ext_unix_sk", "unix_sk_ino"])
def test_external_unix_peer_over_rpc(how: str) -> None:
    """ext_unix_sk (every socket) or unix_sk_ino (by the peer's inode), as
    --ext-unix-sk: without it the datagram socket connected to a server
    outside the tree is refused, naming the option; with it, dumped and
    restored, its next datagram reaches the server."""
    from test_unix_sk import expect_datagram, server
    with zdtm.Run("sk_unix_ext", f"rpc-{how}") as r, server(r) as s:
        r.args = [str(r.dir / "logger")]
        r.start()
        expect_datagram(r, s, b"before")
        img = r.imgdir("img")
        resp = rpc_dump(r, img, leave_running=True)
        assert not resp.success and "--ext-unix-sk" in resp.cr_errmsg, resp
        ino = os.fstat(s.fileno()).st_ino
        opt: dict[str, Any] = ({"ext_unix_sk": True} if how == "ext_unix_sk" else
                               {"unix_sk_ino": [{"inode": ino}]})
        expect_dumped(r, rpc_dump(r, img, **opt), img / "dump.log")
        resp = rpc_restore(r, img, **opt)
        expect_ok(r, resp, "restore", img / "restore.log")
        adopt(r, resp.restore.pid)
        r.finish()
        expect_datagram(r, s, b"after")


# --------------------------------------------------------- options

REFUSED: dict[str, tuple[Any, str]] = {
    # option -> (value, words the refusal line must contain)
    "weak_sysctls": (True, "sysctl"),
    "cgroup_props": ('"cpu": []', "cgroup"),
    "empty_ns": (CLONE_NEWNS, "network namespace"),
    "cgroup_yard": ("/tmp/yard", "yard"),
    "lazy_pages": (True, "lazy"),
    # a page server's address is honoured (test_pagesrv.py); a socket is lazy pages'
    "ps": ({"address": "127.0.0.1", "port": 1234, "fd": 5}, "lazy"),
    "external": (["dev[1/2]:x"], "external"),
}


@pytest.mark.parametrize("opt", list(REFUSED))
def test_refused_option(opt: str) -> None:
    """Each is refused with a line naming it and what is missing, in the
    response and in the request's log; the task is not touched."""
    value, words = REFUSED[opt]
    with zdtm.Run("mem_anon", f"rpc-refused-{opt}") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        resp = rpc_dump(r, img, **{opt: value})
        assert not resp.success and resp.cr_errno == errno.EBADRQC, resp
        line = resp.cr_errmsg
        assert opt in line and words in line.lower(), line
        assert line in (img / "dump.log").read_text()
        r.check_running(f"after the refused {opt}", snap)
        r.finish()


def test_refused_options_all_named():
    """Several refused options: the line names every one of them."""
    with zdtm.Run("mem_anon", "rpc-refused-many") as r:
        r.start()
        img = r.imgdir("img")
        resp = rpc_dump(r, img, lazy_pages=True, cgroup_props="x", weak_sysctls=True,
                        cgroup_yard="/x")
        assert not resp.success
        for opt in ("lazy_pages", "cgroup_props", "weak_sysctls", "cgroup_yard"):
            assert opt in resp.cr_errmsg, resp.cr_errmsg
        r.finish()


def test_config_file(tmp_path: Path) -> None:
    """CRIU's config syntax: long options without dashes, # comments; what
    a config asks is honoured or refused like the request's own options; a
    missing file (runc names /etc/criu/runc.conf always) is fine."""
    conf = tmp_path / "runc.conf"
    with zdtm.Run("mem_anon", "rpc-config") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        conf.write_text("# as runc users write it\n\n  leave-running   # keep it\n"
                        "verbosity 4\nlog-file \"conf.log\"\n")
        resp = rpc_dump(r, img, config_file=str(conf))
        expect_ok(r, resp, "dump", img / "conf.log")
        assert (img / "conf.log").exists(), "the config's log-file wins over the request's"
        r.check_running("after a dump with leave-running from the config", snap)
        conf.write_text("weak-sysctls\n")
        resp = rpc_dump(r, img, config_file=str(conf))
        assert not resp.success and "weak_sysctls" in resp.cr_errmsg, resp
        assert "config" in resp.cr_errmsg
        conf.write_text("leave-running\nno-such-option 1\n")
        resp = rpc_dump(r, img, config_file=str(conf))
        assert not resp.success and "line 2" in resp.cr_errmsg and \
            "no-such-option" in resp.cr_errmsg, resp
        resp = rpc_dump(r, img, config_file=str(tmp_path / "absent.conf"),
                        leave_running=True)
        expect_ok(r, resp, "dump", img / "dump.log")
        r.check_running("after the dumps", snap)
        r.finish()


# --------------------------------------------------------- the service

@pytest.fixture
def service(tmp_path: Path) -> Iterator[Path]:
    address = tmp_path / "criu.sock"
    pidfile = tmp_path / "criu.pid"
    subprocess.run([zdtm.CRIU, "service", "--address", str(address), "-d",
                    "--pidfile", str(pidfile)], check=True, timeout=30)
    pid = int(pidfile.read_text())
    try:
        yield address
    finally:
        os.kill(pid, signal.SIGKILL)
        zdtm.reap_leftovers()


class Conn(rpc.Swrk):
    """A connection to criu service instead of a swrk of ours."""

    def __init__(self, address: Path):  # noqa: super not called: no criu to start
        self.sk = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sk.connect(str(address))
        self.fds = []

    def wait(self, timeout: float = 60.0) -> int:
        self.sk.close()
        return 0


def test_service(service: Path) -> None:
    """criu service -d: one worker per connection, the same protocol; the
    worker is not the client's child, so rst_sibling is refused there."""
    c = Conn(service)
    req = simple("VERSION", keep_open=True)
    assert c.call(req).success
    assert c.call(simple("CHECK")).success
    c.wait()
    with zdtm.Run("mem_anon", "rpc-service") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        fd = dir_fd(img)
        try:
            notes = Notes()
            c = Conn(service)
            req = rpc.request("DUMP", images_dir_fd=fd, pid=r.pid, log_file="dump.log",
                              notify_scripts=True)
            resp = c.call(req, notes)
            c.wait()
            expect_dumped(r, resp, img / "dump.log")
            assert notes.names() == ["pre-dump", "post-dump"]
            c = Conn(service)
            resp = c.call(rpc.request("RESTORE", images_dir_fd=fd, rst_sibling=True))
            c.wait()
            assert not resp.success and "rst_sibling" in resp.cr_errmsg, resp
            c = Conn(service)
            resp = c.call(rpc.request("RESTORE", images_dir_fd=fd, log_file="restore.log"))
            c.wait()
            expect_ok(r, resp, "restore", img / "restore.log")
            adopt(r, resp.restore.pid)
        finally:
            os.close(fd)
        r.check_running("after the restore through the service", snap)
        r.finish()


def test_fds_from_the_client_are_dropped():
    """A client can't make criu hold its fds: any sent along are closed at
    once (criu, kept open, must not hold the write end of our pipe)."""
    s = swrk()
    rd, wr = os.pipe()
    try:
        socket.send_fds(s.sk, [simple("VERSION", keep_open=True).SerializeToString()], [wr])
        os.close(wr)
        assert s.recv().success
        os.set_blocking(rd, False)
        assert os.read(rd, 1) == b"", "criu holds the pipe's write end"
        assert s.call(simple("VERSION")).success
    finally:
        assert s.wait() == 0
        os.close(rd)


# ------------------------------------------------- the CLI's side of it

def test_action_scripts(tmp_path: Path) -> None:
    """--action-script: the same hooks on the command line, with CRIU's
    environment; a script that exits 1 at post-dump fails the dump and the
    task runs on."""
    log = tmp_path / "actions"
    script = tmp_path / "hook.sh"
    script.write_text("#!/bin/sh\n"
                      f'echo "$CRTOOLS_SCRIPT_ACTION ${{CRTOOLS_INIT_PID:-}} '
                      f'$CRTOOLS_IMAGE_DIR" >> {log}\n'
                      f'[ "$CRTOOLS_SCRIPT_ACTION" != "$FAIL_AT" ]\n')
    script.chmod(0o755)
    with zdtm.Run("mem_anon", "action-script") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        env = dict(os.environ, FAIL_AT="post-dump")
        res = r.dump(img, ["--action-script", str(script)], env=env)
        assert res.returncode == 1 and len(zdtm.error_lines(res.stderr)) == 1, res.describe()
        assert "post-dump" in res.stderr
        r.check_running("after a dump its script refused", snap)
        log.unlink()
        r.dump_ok(img, ["--action-script", str(script)])
        lines = log.read_text().split("\n")[:-1]
        assert lines == [f"pre-dump {r.pid} {img}", f"post-dump {r.pid} {img}"], lines
        log.unlink()
        r.restore_ok(img, ["--action-script", str(script)])
        calls = [line.split() for line in log.read_text().split("\n")[:-1]]
        assert [x[0] for x in calls] == ["pre-restore", "post-restore", "pre-resume",
                                         "post-resume"], calls
        assert all(x[-1] == str(img) for x in calls)
        assert [x[1] for x in calls[1:]] == [str(r.pid)] * 3, calls
        assert (img / "stats-restore").exists() and (img / "stats-dump").exists()
        r.check_running("after the restore", snap)
        r.finish()


def test_check_feature():
    """criu check --feature NAME by CRIU's names: exit 0 and a line when
    criu does it here, else non-zero and one Error line saying why."""
    def run(name: str) -> subprocess.CompletedProcess:
        return subprocess.run([zdtm.CRIU, "check", "--feature", name],
                              capture_output=True, text=True, timeout=30)
    for name in ("timens", "clone3_set_tid", "kcmp_epoll", "cgroupns", "userns",
                 "external_net_ns", "network_lock_nftables", "fdinfo_lock", "loginuid"):
        p = run(name)
        assert p.returncode == 0 and name in p.stdout, (name, p)
    # lazy pages (test_lazy.py): where userfaultfd has the events it needs
    for name in ("uffd-noncoop", "uffd", "lazy_pages"):
        p = run(name)
        assert (p.returncode == 0) == (not uffd_lacks()) and name in p.stdout + p.stderr, \
            (name, p)
    for name in ("pidfd_store",):
        p = run(name)
        errs = zdtm.error_lines(p.stderr)
        assert p.returncode == 1 and len(errs) == 1 and name in errs[0], (name, p)
    p = run("no_such_feature")
    errs = zdtm.error_lines(p.stderr)
    assert p.returncode == 1 and len(errs) == 1 and "mem_dirty_track" in errs[0], p


@pytest.mark.parametrize("args", [["swrk"], ["swrk", "1"], ["swrk", "x"], ["service"],
                                  ["service", "--address", "/nonexistent/dir/criu.sock"]])
def test_bad_command_line(args: list[str]) -> None:
    """swrk without a SOCK_SEQPACKET fd, service without a socket it can
    bind: one Error line, exit 1."""
    p = subprocess.run([zdtm.CRIU, *args], capture_output=True, text=True, timeout=30,
                       stdin=subprocess.DEVNULL)
    errs = zdtm.error_lines(p.stderr)
    assert p.returncode == 1 and len(errs) == 1, (args, p)
    assert args[0] in errs[0], errs
