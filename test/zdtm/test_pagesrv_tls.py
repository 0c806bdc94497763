"""--tls on the page server's connection (criu/image/tls.c, the helper
criu/tls/criu-tls.c, Documentation/page-server.md "TLS"). A CA, another CA
and certificates are made with openssl at test time:

- dump over TLS (mutual: both certificates checked) into a page server,
  restore from what it wrote, the program passes its own check; the same
  through RPC (criu_opts tls, tls_cacert, tls_cert, tls_key).
- refused, one Error line on each side naming the peer and the reason, the
  task running on untouched and no checkpoint at the server: the dump does
  not trust the server's CA, the server does not trust the dump's, a server
  certificate not naming the address, a TLS dump to a plain server, a
  plain dump to a TLS server, the dump's certificate file missing.
- --tls-no-cn-verify accepts a server certificate not naming the address;
  --tls-no-cert-verify on both sides accepts certificates of a CA neither
  trusts.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import zdtm
from test_errors import check_clean_error
from test_net import Netns
from test_pagesrv import (PROGRAM, Server, check_transfer, killed_server, move, need_tools,
                         ps_opts)

pytestmark = pytest.mark.skipif(zdtm.SELFCHECK, reason="ZDTM_SELFCHECK=1: no criu")

ADDR = "127.0.0.1"


@pytest.fixture(autouse=True)
def _need_criu() -> None:
    if not zdtm.criu_available():
        pytest.fail(f"criu not found at {zdtm.CRIU} (build it or set CRIU)")


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


def make_ca(d: Path, name: str) -> None:
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-nodes", "-keyout", str(d / f"{name}-key.pem"), "-out", str(d / f"{name}.pem"),
             "-days", "2", "-subj", f"/CN=zdtm {name}",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")


def make_cert(d: Path, name: str, ca: str, san: str) -> None:
    ext = d / f"{name}.ext"
    ext.write_text(f"subjectAltName={san}\nbasicConstraints=CA:FALSE\n"
                   "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\n")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", str(d / f"{name}-key.pem"), "-out", str(d / f"{name}.csr"),
             "-subj", f"/CN=zdtm {name}")
    _openssl("x509", "-req", "-in", str(d / f"{name}.csr"), "-CA", str(d / f"{ca}.pem"),
             "-CAkey", str(d / f"{ca}-key.pem"), "-CAcreateserial", "-days", "2",
             "-out", str(d / f"{name}.pem"), "-extfile", str(ext))


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ca signs server (for 127.0.0.1 and ::1), client and elsewhere (for another
    address); otherca signs rogue."""
    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed (scripts/install-deps.sh installs it)")
    d = tmp_path_factory.mktemp("pki")
    make_ca(d, "ca")
    make_ca(d, "otherca")
    make_cert(d, "server", "ca", f"IP:{ADDR},IP:::1")
    make_cert(d, "client", "ca", "DNS:zdtm-client")
    make_cert(d, "elsewhere", "ca", "IP:192.0.2.1")
    make_cert(d, "rogue", "otherca", f"IP:{ADDR}")
    return d


def tls(d: Path, ca: str, cert: str, *extra: str) -> list[str]:
    return ["--tls", "--tls-cacert", str(d / f"{ca}.pem"), "--tls-cert",
            str(d / f"{cert}.pem"), "--tls-key", str(d / f"{cert}-key.pem"), *extra]


def transfer_ok(pki: Path, srv_opts: list[str], dump_opts: list[str], tag: str) -> None:
    """Dumped over TLS, restored from the server's directory."""
    with zdtm.Run(PROGRAM, tag) as r:
        r.start()
        src, dst = r.imgdir("src"), r.imgdir("dst")
        srv = Server(dst, r.dir / "pslog", address=ADDR, opts=srv_opts)
        try:
            r.dump_ok(src, ps_opts(ADDR, srv.port) + dump_opts)
            check_transfer(r, srv, src, dst)
        finally:
            srv.stop()
        for side, log in (("dump", src / "dump.log"), ("server", srv.log)):
            if "TLS: (TLS" not in log.read_text():
                r.fail(f"the {side} logged no TLS session: not encrypted?\n{zdtm.tail(log)}")
        r.restore_ok(dst)
        r.finish()


def test_tls_loopback(pki: Path) -> None:
    transfer_ok(pki, tls(pki, "ca", "server"), tls(pki, "ca", "client"), "pagesrv-tls")


def test_tls_ipv6(pki: Path) -> None:
    """Over ::1 in a network namespace of the test's: the server's
    certificate names ::1, and the server names the dump [::1]:PORT."""
    need_tools()
    n = Netns()
    try:
        move(n, n, "::1", tls(pki, "ca", "server"), tls(pki, "ca", "client"),
             logs_say=("TLS: (TLS", "the dump at [::1]:"))
    finally:
        n.close()


def test_tls_no_cn_verify(pki: Path) -> None:
    """The server's certificate names another address: accepted with
    --tls-no-cn-verify (the CA still checked)."""
    transfer_ok(pki, tls(pki, "ca", "elsewhere"),
                tls(pki, "ca", "client", "--tls-no-cn-verify"), "pagesrv-tls-nocn")


def test_tls_no_cert_verify(pki: Path) -> None:
    """Both sides trust only otherca, which signed neither certificate:
    accepted with --tls-no-cert-verify on both (encrypted, not authenticated)."""
    transfer_ok(pki, tls(pki, "otherca", "server", "--tls-no-cert-verify"),
                tls(pki, "otherca", "client", "--tls-no-cert-verify"), "pagesrv-tls-nocert")


# case -> (server opts, dump opts, words of the dump's line, words of the server's)
REFUSED: dict[str, tuple[list[str], list[str], tuple[str, ...], tuple[str, ...]]] = {
    "dump-distrusts-server": ([], ["otherca", "client"], ("issuer is unknown",),
                              ("refused the tls handshake",)),
    "server-distrusts-dump": (["otherca", "server"], [], ("refused the tls handshake",),
                              ("issuer is unknown",)),
    "rogue-dump": ([], ["ca", "rogue"], ("refused the tls handshake",),
                   ("issuer is unknown",)),
    "server-named-elsewhere": (["ca", "elsewhere"], [], ("does not match",),
                               ("refused the tls handshake",)),
    "tls-dump-plain-server": (["plain"], [], ("does not speak tls",), ("speaks tls",)),
    "plain-dump-tls-server": ([], ["plain"], ("with --tls",), ("does not use tls",)),
    # the dump's certificate file is not there: said at the dump, which then
    # leaves the handshake
    "dump-cert-missing": ([], ["ca", "missing"], ("can't load certificate",),
                          ("closed the connection in the tls handshake",)),
}


def _side(pki: Path, spec: list[str], default: tuple[str, str]) -> list[str]:
    if spec == ["plain"]:
        return []
    ca, cert = spec if spec else default
    return tls(pki, ca, cert)


@pytest.mark.parametrize("case", list(REFUSED))
def test_tls_refused(pki: Path, case: str) -> None:
    srv_spec, dump_spec, dump_words, srv_words = REFUSED[case]
    with zdtm.Run(PROGRAM, "pagesrv-tls-refused") as r:
        r.start()
        snap = r.snapshot()
        src, dst = r.imgdir("src"), r.imgdir("dst")
        srv = Server(dst, r.dir / "pslog", address=ADDR,
                     opts=_side(pki, srv_spec, ("ca", "server")))
        try:
            res = r.dump(src, ps_opts(ADDR, srv.port) +
                         _side(pki, dump_spec, ("ca", "client")))
            line = check_clean_error(r, res, case, dump_words)
            if f"{ADDR}:{srv.port}" not in line:
                r.fail(f"{case}: the dump's line does not name the server: {line!r}")
            rc, err = srv.wait()
        finally:
            srv.stop()
        errs = zdtm.error_lines(err)
        if rc == 0 or len(errs) != 1:
            r.fail(f"{case}: the server exited {rc} with {len(errs)} Error lines: {err}")
        if f"the dump at {ADDR}:" not in errs[0] or \
                not any(w in errs[0].lower() for w in srv_words):
            r.fail(f"{case}: the server's line names not the dump or not {srv_words}: "
                   f"{errs[0]!r}")
        r.note(f"dump: {line}; server: {errs[0]}")
        if (dst / "inventory.img").exists():
            r.fail(f"{case}: the server holds a checkpoint: {sorted(os.listdir(dst))}")
        r.check_running(f"after the refused dump ({case})", snap)
        r.finish()


def test_tls_rpc(pki: Path) -> None:
    """criu_opts' tls fields (CRIU's numbers 54-59) are honoured over RPC."""
    pytest.importorskip("google.protobuf", reason="python3-protobuf is not installed")
    from test_rpc import expect_ok, rpc_dump
    with zdtm.Run(PROGRAM, "pagesrv-tls-rpc") as r:
        r.start()
        src, dst = r.imgdir("src"), r.imgdir("dst")
        srv = Server(dst, r.dir / "pslog", address=ADDR, opts=tls(pki, "ca", "server"))
        try:
            resp = rpc_dump(r, src, ps={"address": ADDR, "port": srv.port}, tls=True,
                            tls_cacert=str(pki / "ca.pem"), tls_cert=str(pki / "client.pem"),
                            tls_key=str(pki / "client-key.pem"), leave_running=True)
            expect_ok(r, resp, "dump --tls", src / "dump.log")
            check_transfer(r, srv, src, dst)
        finally:
            srv.stop()
        if "TLS: (TLS" not in (src / "dump.log").read_text():
            r.fail("the RPC dump logged no TLS session")
        r.finish()


def _helpers() -> set[int]:
    """The criu-tls processes running now (a killed server's one is a
    zombie until the runner, the subreaper, reaps it: not counted)."""
    found = set()
    for d in Path("/proc").iterdir():
        try:
            if not d.name.isdigit() or (d / "comm").read_text().strip() != "criu-tls":
                continue
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
            if state != "Z":
                found.add(int(d.name))
        except (OSError, IndexError):
            pass
    return found


@pytest.mark.parametrize("fault", ["pagesrv-frame#12", "pagesrv-commit"])
def test_tls_server_killed(pki: Path, fault: str) -> None:
    """The server dies in the middle, its helper between it and the dump:
    the dump still fails with one Error line naming the server, the task
    runs on, no checkpoint, and neither side's helper is left behind."""
    before = _helpers()
    with zdtm.Run(PROGRAM, "pagesrv-tls-killed") as r:
        killed_server(r, fault, tls(pki, "ca", "server"), tls(pki, "ca", "client"))
        deadline = time.monotonic() + 10
        while _helpers() - before and time.monotonic() < deadline:
            time.sleep(0.1)
        if _helpers() - before:
            r.fail(f"criu-tls left running: {sorted(_helpers() - before)}")
        r.finish()


def test_tls_without_page_server() -> None:
    """--tls is for the page server's connection: a dump into a directory
    with it is refused, the task untouched (not silently left plain)."""
    with zdtm.Run(PROGRAM, "pagesrv-tls-local") as r:
        r.start()
        snap = r.snapshot()
        res = r.dump(r.imgdir("img"), ["--tls"])
        check_clean_error(r, res, "dump --tls without --page-server", ("page-server",))
        r.check_running("after the refused dump --tls", snap)
        r.finish()
