"""Packet socket rings criu refuses to dump (static/sk_packet_ring_refused.c):
one Error line naming the task and the shape, and the program runs on with
its ring as it was. The rings criu saves are the static sk_packet_ring*
programs'."""
from __future__ import annotations

import pytest

import zdtm
from test_errors import check_refused_dump

pytestmark = pytest.mark.usefixtures("need_criu")

REFUSED = {
    # argument -> words one of which the Error line must hold
    "v3": ("not retired yet",),
    "rxtx": ("rx and tx rings",),
    "part": ("mapped in part", "part of a packet"),
    "txfull": ("can't be told",),
    "nofd": ("no fd of the socket",),
}


@pytest.mark.parametrize("what", list(REFUSED))
def test_ring_refused(what: str) -> None:
    with zdtm.Run("sk_packet_ring_refused", f"refused-{what}", args=[what]) as r:
        line = check_refused_dump(r, f"a packet socket ring ({what})", REFUSED[what])
        assert "packet socket" in line or "packet ring" in line, line
        print(line)
