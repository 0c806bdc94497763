"""A client of criu's RPC (CRIU's protocol), for the tests.

The messages come from images/rpc.proto itself: protoc-c (a build
dependency) turns it into a descriptor set, and Google's protobuf package
(python3-protobuf) makes classes of it, so the wire format is checked by
an implementation other than criu's own. Transport as runc has it: a
SOCK_SEQPACKET socketpair, `criu swrk FD`, one message per packet, fds as
SCM_RIGHTS.
"""
from __future__ import annotations

import array
import os
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any, BinaryIO, Optional, Union

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from buildpaths import ROOT

PROTO_DIR = ROOT / "images"

_classes: dict[str, Any] = {}


def _load(proto: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "set.pb"
        subprocess.run(["protoc-c", f"--proto_path={PROTO_DIR}",
                        f"--descriptor_set_out={out}", str(PROTO_DIR / proto)],
                       check=True)
        fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    fd = pool.FindFileByName(proto)
    out_classes: dict[str, Any] = {}
    for name, desc in fd.message_types_by_name.items():
        out_classes[name] = message_factory.GetMessageClass(desc) \
            if hasattr(message_factory, "GetMessageClass") \
            else message_factory.MessageFactory(pool).GetPrototype(desc)
    for name, edesc in fd.enum_types_by_name.items():
        out_classes[name] = edesc
    return out_classes


def msg(name: str) -> Any:
    """The class of message NAME of rpc.proto or stats.proto."""
    if not _classes:
        _classes.update(_load("rpc.proto"))
        _classes.update(_load("stats.proto"))
    return _classes[name]


def enum_value(enum: str, name: str) -> int:
    msg("criu_req")
    return int(_classes[enum].values_by_name[name].number)


def req_type(name: str) -> int:
    return enum_value("criu_req_type", name)


def type_name(value: int) -> str:
    msg("criu_req")
    return str(_classes["criu_req_type"].values_by_number[value].name)


class Swrk:
    """`criu swrk FD` as our child, the other end of the socketpair ours."""

    def __init__(self, criu: str, log: Optional[Path] = None,
                 env: Optional[dict[str, str]] = None):
        self.sk, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        out: Union[int, BinaryIO] = open(log, "ab") if log is not None else subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen(
                [criu, "swrk", str(theirs.fileno())], pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env)
        finally:
            theirs.close()
            if not isinstance(out, int):
                out.close()
        self.fds: list[int] = []

    def send_raw(self, data: bytes) -> None:
        self.sk.send(data)

    def send(self, req: Any) -> None:
        self.send_raw(req.SerializeToString())

    def recv_raw(self, timeout: float = 60.0) -> Optional[bytes]:
        """One packet (None when criu closed the socket); fds kept in .fds."""
        self.sk.settimeout(timeout)
        data, anc, flags, _ = self.sk.recvmsg(1 << 20, socket.CMSG_SPACE(16 * 4))
        if flags & socket.MSG_TRUNC:
            raise AssertionError("a response larger than 1 MiB")
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds = array.array("i")
                fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
                self.fds.extend(fds)
        return data if data else None

    def recv(self, timeout: float = 60.0) -> Any:
        data = self.recv_raw(timeout)
        if data is None:
            raise EOFError("criu closed the connection")
        resp = msg("criu_resp")()
        resp.ParseFromString(data)
        return resp

    def call(self, req: Any, on_notify: Any = None, timeout: float = 60.0) -> Any:
        """Sends req, answers notifications (on_notify(resp) -> bool, True by
        default), returns the final response."""
        self.send(req)
        while True:
            resp = self.recv(timeout)
            if resp.type != req_type("NOTIFY"):
                return resp
            ok = True if on_notify is None else bool(on_notify(resp))
            ack = msg("criu_req")()
            ack.type = req_type("NOTIFY")
            ack.notify_success = ok
            self.send(ack)

    def wait(self, timeout: float = 60.0) -> int:
        self.sk.close()
        for fd in self.fds:
            os.close(fd)
        self.fds = []
        return self.proc.wait(timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.wait()


def request(kind: str, **opts: Any) -> Any:
    """A criu_req of type KIND with criu_opts fields OPTS (none: no opts)."""
    req = msg("criu_req")()
    req.type = req_type(kind)
    for k, v in opts.items():
        field = getattr(req.opts, k)
        if isinstance(v, list):
            for item in v:
                if isinstance(item, dict):
                    sub = field.add()
                    for sk, sv in item.items():
                        setattr(sub, sk, sv)
                else:
                    field.append(item)
        elif isinstance(v, dict):
            for sk, sv in v.items():
                setattr(field, sk, sv)
        else:
            setattr(req.opts, k, v)
    return req


STATS_SERVICE_MAGIC = 0x55105940
STATS_MAGIC = 0x57093306


def read_stats(path: Path) -> Any:
    """A stats-dump / stats-restore file, CRIU's layout, as a stats_entry."""
    data = path.read_bytes()
    if len(data) < 12:
        raise AssertionError(f"{path}: {len(data)} bytes, no header")
    m1, m2, size = (int.from_bytes(data[i:i + 4], "little") for i in (0, 4, 8))
    if (m1, m2) != (STATS_SERVICE_MAGIC, STATS_MAGIC):
        raise AssertionError(f"{path}: magics {m1:#x} {m2:#x}")
    if size != len(data) - 12:
        raise AssertionError(f"{path}: says {size} bytes, has {len(data) - 12}")
    entry = msg("stats_entry")()
    entry.ParseFromString(data[12:])
    return entry
