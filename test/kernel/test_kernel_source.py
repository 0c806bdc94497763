"""The kernel source that scripts/kernel-build.sh builds: which Debian
version of linux-source-6.1 it takes when the pinned one is no longer
served, and whether kernel/patches/series still applies to it.

Nothing here boots; the tests are in the kernel step (-m kernel) because
that is where a series that no longer applies would break CI.
"""
import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Dict, List, Optional

import pytest

pytestmark = pytest.mark.kernel

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "scripts" / "kernel-build.sh"
PIN = "6.1.192-2"

FAKE_DPKG_QUERY = """#!/bin/sh
[ -n "$FAKE_INSTALLED" ] || { echo "dpkg-query: no packages found" >&2; exit 1; }
printf 'install ok installed %s\\n' "$FAKE_INSTALLED"
"""

FAKE_APT_CACHE = """#!/bin/sh
case "$1" in
madison)
	for v in $FAKE_SERVED; do
		echo "linux-source-6.1 | $v | http://deb.debian.org/debian bookworm/main amd64 Packages"
	done ;;
policy)
	echo "linux-source-6.1:"
	echo "  Installed: ${FAKE_INSTALLED:-(none)}"
	echo "  Candidate: ${FAKE_CANDIDATE:-(none)}" ;;
esac
"""


def fake_bin(tmp: Path) -> Path:
    """apt-cache and dpkg-query that answer from FAKE_* variables."""
    d = tmp / "bin"
    d.mkdir()
    for name, text in (("dpkg-query", FAKE_DPKG_QUERY), ("apt-cache", FAKE_APT_CACHE)):
        (d / name).write_text(text)
        (d / name).chmod(0o755)
    return d


def run_build(args: List[str], tmp: Path, env: Dict[str, str],
              script: Path = BUILD) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("FAKE_") and k != "KERNEL_DEB_VERSION"}
    e["PATH"] = f"{fake_bin(tmp)}:{e['PATH']}"
    e["CRIU_KERNEL_CACHE"] = str(tmp / "cache")
    e.update(env)
    return subprocess.run([str(script)] + args, capture_output=True, text=True, env=e,
                          timeout=120)


def test_the_pin_is_what_the_series_says():
    series = (ROOT / "kernel" / "patches" / "series").read_text()
    assert f"linux-source-6.1 {PIN}" in series
    assert f"PIN_VERSION={PIN}\n" in BUILD.read_text()


# (installed, served, candidate, KERNEL_DEB_VERSION) -> (version, words of the why)
CHOICES = [
    pytest.param(PIN, "", "", None, PIN, "pinned", id="pin-installed-not-served"),
    pytest.param("6.1.170-3", f"6.1.170-3 {PIN} 6.1.200-1", "6.1.200-1", None, PIN,
                 "pinned", id="pin-served-other-installed"),
    pytest.param("6.1.193-1", "6.1.193-1 6.1.200-1", "6.1.200-1", None, "6.1.193-1",
                 f"installed version; the pinned {PIN} is not served", id="installed"),
    pytest.param("", "6.1.195-1 6.1.200-1", "6.1.200-1", None, "6.1.200-1",
                 f"newest served; the pinned {PIN} is not served", id="newest-served"),
    pytest.param(PIN, PIN, PIN, "6.1.176-1", "6.1.176-1", "KERNEL_DEB_VERSION",
                 id="override"),
]


@pytest.mark.parametrize("installed,served,candidate,override,want,why", CHOICES)
def test_version_choice(tmp_path: Path, installed: str, served: str, candidate: str,
                        override: Optional[str], want: str, why: str) -> None:
    env = {"FAKE_INSTALLED": installed, "FAKE_SERVED": served, "FAKE_CANDIDATE": candidate}
    if override:
        env["KERNEL_DEB_VERSION"] = override
    r = run_build(["--print-version"], tmp_path, env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == want, r.stdout + r.stderr
    # the choice is logged, even when it is not the pin
    assert f"linux-source-6.1 {want} (" in r.stderr and why in r.stderr, r.stderr


def test_no_version_at_all_is_one_clear_error(tmp_path):
    r = run_build(["--print-dir"], tmp_path,
                  {"FAKE_INSTALLED": "", "FAKE_SERVED": "", "FAKE_CANDIDATE": ""})
    assert r.returncode == 1
    assert "linux-source-6.1 is neither installed nor served" in r.stderr, r.stderr


def make_root(tmp: Path, patches: Dict[str, str]) -> Path:
    """A copy of the build script beside a kernel/ of our own."""
    root = tmp / "root"
    (root / "scripts").mkdir(parents=True)
    (root / "kernel" / "patches").mkdir(parents=True)
    shutil.copy(BUILD, root / "scripts" / "kernel-build.sh")
    (root / "kernel" / "config.fragment").write_text("CONFIG_64BIT=y\n")
    (root / "kernel" / "patches" / "series").write_text(
        "# test series\n" + "".join(n + "\n" for n in patches))
    for name, text in patches.items():
        (root / "kernel" / "patches" / name).write_text(text)
    return root / "scripts" / "kernel-build.sh"


def make_tarball(tmp: Path) -> Path:
    src = tmp / "linux-source-6.1"
    (src / "kernel").mkdir(parents=True)
    (src / "kernel" / "fork.c").write_text("one\ntwo\nthree\n")
    (src / "kernel" / "exit.c").write_text("alpha\nbeta\n")
    tar = tmp / "linux-source-6.1.tar.xz"
    with tarfile.open(tar, "w:xz") as t:
        t.add(src, arcname="linux-source-6.1")
    return tar


GOOD = """--- a/kernel/fork.c
+++ b/kernel/fork.c
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
"""
NEW_FILE = """--- /dev/null
+++ b/kernel/cpu_ns.c
@@ -0,0 +1 @@
+new
"""
ON_NEW_FILE = """--- a/kernel/cpu_ns.c
+++ b/kernel/cpu_ns.c
@@ -1 +1 @@
-new
+newer
"""
STALE = """--- a/kernel/exit.c
+++ b/kernel/exit.c
@@ -1,2 +1,2 @@
 alpha
-gamma
+delta
"""


def test_check_series_passes_on_a_series_that_applies(tmp_path):
    script = make_root(tmp_path, {"0001-good.patch": GOOD, "0002-new.patch": NEW_FILE,
                                  "0003-on-new.patch": ON_NEW_FILE})
    r = run_build(["--check-series", f"--source={make_tarball(tmp_path)}"], tmp_path,
                  {"FAKE_INSTALLED": "6.1.193-1", "FAKE_SERVED": "6.1.193-1"}, script)
    assert r.returncode == 0, r.stderr
    assert "the series (3 patches) applies" in r.stderr


def test_check_series_names_the_patch_that_does_not_apply(tmp_path):
    script = make_root(tmp_path, {"0001-good.patch": GOOD, "0002-stale.patch": STALE})
    r = run_build(["--check-series", f"--source={make_tarball(tmp_path)}"], tmp_path,
                  {"FAKE_INSTALLED": "6.1.193-1", "FAKE_SERVED": "6.1.193-1"}, script)
    assert r.returncode == 1, r.stderr
    assert ("patch 0002-stale.patch does not apply to linux-source-6.1 6.1.193-1 "
            f"(the installed version; the pinned {PIN} is not served)") in r.stderr, r.stderr
    assert "kernel/exit.c" in r.stderr      # git's own reason follows


def test_series_applies_to_the_source_found():
    """The real series on the version a build would take now."""
    r = subprocess.run([str(BUILD), "--check-series"], capture_output=True, text=True,
                       timeout=600)
    if r.returncode == 3:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
