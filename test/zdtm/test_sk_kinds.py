"""Netlink, packet and raw sockets at restore (static/sk_netlink.c,
sk_packet.c, sk_raw.c): a netlink port id another socket took in the gap
fails the restore in one line naming it, and it succeeds once that socket
is gone; images whose socket is impossible (a netlink protocol past the
kernel's 32, a packet socket of an unknown type or with a filter longer
than the kernel allows, a raw socket of an IP protocol past 255) are
refused before anything is created, and no image is changed."""
from __future__ import annotations

import shutil
import socket
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

import buildpaths
import zdtm
from test_file_locks import restore_refused

sys.path.insert(0, str(buildpaths.CRIT.parent))
import crit  # noqa: E402

pytestmark = pytest.mark.usefixtures("need_criu")


def files_of(img: Path, field: str) -> list[dict[str, Any]]:
    doc = crit.read_image(img / "files.img", full_bytes=True)
    return [f[field] for f in doc["entry"]["files"] if field in f]


def test_netlink_portid_taken() -> None:
    """The route socket's port id, bound by another socket of the same
    namespace in the gap: the restore names the port id and fails, leaving
    nothing; once it is free again the restore succeeds."""
    with zdtm.Run("sk_netlink", "portid-taken") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        route = [s for s in files_of(img, "nlsk") if s["protocol"] == 0]
        assert route and route[0]["portid"], "no bound route socket in files.img"
        portid = route[0]["portid"]
        with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0) as taker:
            taker.bind((portid, 0))
            restore_refused(r, img, "restore of a netlink socket whose port id is taken",
                            (f"port id {portid}",), r.pid)
        r.restore_ok(img)
        r.finish()


def set_first(field: str, change: Callable[[dict[str, Any]], None]) -> Callable[[Any], None]:
    def edit(doc: Any) -> None:
        entries = [f[field] for f in doc["entry"]["files"] if field in f]
        assert entries, f"no {field} in files.img"
        change(entries[0])
    return edit


BAD: dict[str, tuple[str, Callable[[Any], None], str]] = {
    # what is wrong -> (program, the change to files.img, words of the Error line)
    "netlink-protocol": ("sk_netlink", set_first("nlsk", lambda e: e.update(protocol=40)),
                         "invalid netlink socket"),
    "netlink-unconnected-peer": ("sk_netlink",
                                 set_first("nlsk", lambda e: e.update(connected=False,
                                                                      dst_portid=7)),
                                 "invalid netlink socket"),
    "packet-type": ("sk_packet", set_first("psk", lambda e: e.update(type=1)),
                    "invalid packet socket"),
    "packet-filter": ("sk_packet", set_first("psk", lambda e: e.update(filter=[6 << 48] * 5000)),
                      "invalid packet socket"),
    "raw-protocol": ("sk_raw", set_first("isk", lambda e: e.update(proto=300)),
                     "invalid network socket"),
    # sk_packet_ring's first packet socket has the ring (its second sends)
    "packet-ring-head": ("sk_packet_ring", set_first("psk", lambda e: e.update(rx_head=8)),
                         "invalid packet socket"),
    "packet-ring-frame": ("sk_packet_ring",
                          set_first("psk", lambda e: e["rx_frames"][0].update(index=8)),
                          "invalid packet socket"),
    "packet-ring-geometry": ("sk_packet_ring",
                             set_first("psk", lambda e: e["rx_ring"].update(frame_nr=9)),
                             "invalid packet socket"),
}


@pytest.mark.parametrize("what", list(BAD))
def test_bad_socket_image(what: str) -> None:
    prog, change, words = BAD[what]
    with zdtm.Run(prog, f"bad-{what}") as r:
        r.start()
        good = r.imgdir("img")
        r.dump_ok(good)
        bad = r.dir / "bad"
        shutil.copytree(good, bad)
        doc = crit.read_image(bad / "files.img", full_bytes=True)
        change(doc)
        (bad / "files.img").write_bytes(crit.encode_image(doc))
        restore_refused(r, bad, f"restore of a files.img with {what}", (words,), r.pid)
        r.restore_ok(good)
        r.finish()
