"""TCP connections and the options that ask for them (static/sk_inet_conn).

--tcp-established is asked on both sides, as CRIU does: a restore of
images that hold a connection, without it, fails cleanly (one Error line
naming the connection and the option, nothing left behind) and the same
images then restore with it. Over RPC, criu_opts.tcp_established is
honoured: a dump through `criu swrk` with it restores, and the program
finds every byte of its connections."""
from __future__ import annotations

import pytest

import zdtm
from test_errors import check_clean_error, check_nothing_left
from test_rpc import expect_dumped, rpc_dump

pytestmark = pytest.mark.usefixtures("need_criu")

TCP = ["--tcp-established"]


def test_restore_needs_the_option():
    with zdtm.Run("sk_inet_conn", "restore-without") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img, TCP)
        res, _ = r.restore(img)
        check_clean_error(r, res, "restore of connections without --tcp-established",
                          ("--tcp-established",))
        check_nothing_left(r, "restore without --tcp-established", res)
        r.restore_ok(img, TCP)
        r.finish()


def test_rpc_dump():
    with zdtm.Run("sk_inet_conn", "rpc") as r:
        r.start()
        img = r.imgdir("img")
        expect_dumped(r, rpc_dump(r, img, tcp_established=True), img / "dump.log")
        r.restore_ok(img, TCP)
        r.finish()
