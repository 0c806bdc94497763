"""libcriu (lib/c) against our criu: the C client test/rpc/libcriu_test.c
exercises every function of criu.h (TAP), through swrk and through
`criu service`; and the installed library is usable the way crun and other
programs use CRIU's: `meson install`, then pkg-config, <criu/criu.h>,
-lcriu, and dlopen("libcriu.so.2")."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

import zdtm

pytestmark = pytest.mark.usefixtures("need_criu")

CLIENT = zdtm.BUILD.parent / "rpc" / "libcriu_test"
BUILD_DIR = zdtm.BUILD.parents[1]


def tap(out: str) -> tuple[int, list[str]]:
    oks = [line for line in out.splitlines() if line.startswith("ok ")]
    bad = [line for line in out.splitlines() if line.startswith("not ok")]
    return len(oks), bad


def test_libcriu_client(tmp_path: Path) -> None:
    if not CLIENT.exists():
        pytest.fail(f"{CLIENT} not built (ninja -C build)")
    address = tmp_path / "criu.sock"
    pidfile = tmp_path / "service.pid"
    subprocess.run([zdtm.CRIU, "service", "--address", str(address), "-d", "--pidfile",
                    str(pidfile)], check=True, timeout=30)
    pid = int(pidfile.read_text())
    work = tmp_path / "work"
    work.mkdir()
    try:
        mt = subprocess.run([zdtm.CRIU, "check", "--feature", "mem_dirty_track"],
                            capture_output=True, timeout=30).returncode == 0
        lp = subprocess.run([zdtm.CRIU, "check", "--feature", "lazy_pages"],
                            capture_output=True, timeout=30).returncode == 0
        p = subprocess.run([str(CLIENT), zdtm.CRIU, str(work), str(address)],
                           capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, CRIU_MEM_TRACK="1" if mt else "0",
                                    CRIU_LAZY_PAGES="1" if lp else "0"))
    finally:
        os.kill(pid, signal.SIGKILL)
        zdtm.reap_leftovers()
    passed, bad = tap(p.stdout)
    assert p.returncode == 0 and not bad, \
        f"exit {p.returncode}\n{chr(10).join(bad)}\n--- stderr:\n{p.stderr[-2000:]}"
    # every function of criu.h is called; the count guards against a short run
    assert passed >= 140 and p.stdout.rstrip().endswith(f"1..{passed}"), p.stdout[-500:]


CRUN_STYLE = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <criu/criu.h>

/* crun's way: the library by its soname, the functions by name */
int main(int argc, char **argv)
{
	void *h = dlopen("libcriu.so.2", RTLD_NOW);
	int (*init)(void), (*version)(void), (*bin)(const char *);

	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 2;
	}
	init = (int (*)(void))dlsym(h, "criu_init_opts");
	bin = (int (*)(const char *))dlsym(h, "criu_set_service_binary");
	version = (int (*)(void))dlsym(h, "criu_get_version");
	if (!init || !bin || !version || init() || bin(argv[1]))
		return 3;
	printf("%d %d\n", version(), criu_check_version(CRIU_VERSION_MAJOR * 10000));
	return 0;
}
"""


def test_installed_library(tmp_path: Path) -> None:
    """meson install puts libcriu.so.2, include/criu/{criu.h,rpc.pb-c.h,
    version.h,rpc.proto} and criu.pc where pkg-config finds them."""
    for tool in ("meson", "pkg-config", "cc"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed")
    if not (BUILD_DIR / "meson-private").is_dir():
        pytest.skip(f"{BUILD_DIR} is not a meson build directory")
    dest = tmp_path / "dest"
    subprocess.run(["meson", "install", "-C", str(BUILD_DIR), "--destdir", str(dest),
                    "--no-rebuild", "--quiet"], check=True, capture_output=True, timeout=300)
    pcs = list(dest.rglob("criu.pc"))
    assert len(pcs) == 1, pcs
    headers = {p.name for p in dest.rglob("include/criu/*")}
    assert {"criu.h", "rpc.pb-c.h", "version.h", "rpc.proto"} <= headers, headers
    env = dict(os.environ, PKG_CONFIG_PATH=str(pcs[0].parent),
               PKG_CONFIG_SYSROOT_DIR=str(dest))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "criu"], env=env,
                           check=True, capture_output=True, text=True).stdout.split()
    inc = [f for f in flags if f.startswith("-I")]
    libdir = [f[2:] for f in flags if f.startswith("-L")]
    assert inc and libdir and "-lcriu" in flags, flags
    src = tmp_path / "client.c"
    src.write_text(CRUN_STYLE)
    exe = tmp_path / "client"
    # <criu/criu.h> as crun writes it: the directory above pkg-config's
    subprocess.run(["cc", "-o", str(exe), str(src), f"-I{inc[0][2:]}/..", *flags, "-ldl"],
                   check=True, capture_output=True, text=True, timeout=120)
    assert (Path(libdir[0]) / "libcriu.so.2").exists()
    p = subprocess.run([str(exe), zdtm.CRIU], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, LD_LIBRARY_PATH=libdir[0]))
    assert p.returncode == 0 and p.stdout.split() == ["40000", "1"], (p.stdout, p.stderr)
