"""pytest glue for the kernel tests: the marker, the built kernel, criu and
the helpers for the guest, and the check that the host is left as it was
(the tests run criu on the host too)."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from guestlib import CRIU, HERE, ROOT, buildpaths
from hoststate import host_unchanged_by_session, host_unchanged_by_test  # noqa: F401

BUILD = ROOT / "scripts" / "kernel-build.sh"
BOOT = ROOT / "scripts" / "kernel-boot.sh"


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "kernel: boots the patched kernel of kernel/ under QEMU "
        "(skipped unless scripts/kernel-build.sh has built it)")


def _image_dir():
    # CRIU_KERNEL_IMAGE: an image directory to test instead, e.g. the
    # images/dev that "kernel-build.sh --no-apply" makes from a tree whose
    # patches are not exported yet
    if os.environ.get("CRIU_KERNEL_IMAGE"):
        return Path(os.environ["CRIU_KERNEL_IMAGE"])
    r = subprocess.run([str(BUILD), "--print-dir"], capture_output=True, text=True)
    return Path(r.stdout.strip()) if r.returncode == 0 else None


@pytest.fixture(scope="session")
def kernel_image():
    """The image directory (bzImage, config, selftests/) of the current
    kernel/ inputs.  Skips when it is not built, unless CRIU_KERNEL_BUILD=1
    asks to build it here (5-20 minutes from scratch)."""
    if not shutil.which("qemu-system-x86_64"):
        pytest.skip("qemu-system-x86_64 is not installed (scripts/kernel-build.sh installs it)")
    img = _image_dir()
    if img is None and os.environ.get("CRIU_KERNEL_BUILD") == "1":
        subprocess.run([str(BUILD), "-q"], check=True, stdout=subprocess.DEVNULL)
        img = _image_dir()
    if img is None:
        pytest.skip("kernel not built for the current kernel/ inputs: "
                    "run scripts/kernel-build.sh (or set CRIU_KERNEL_BUILD=1)")
    return img


class Guest:
    """Runs commands in a freshly booted guest."""

    def __init__(self, image):
        self.image = image

    def run(self, command, timeout=300, smp=4, selftests=True, extra=(), share=None,
            append=None, cpu=None, kernel=None):
        """extra: --add specs (FILE[:DEST]); share: a host directory the
        guest sees as /shared; append: more kernel command line; cpu:
        QEMU's -cpu model; kernel: another kernel to boot than the patched
        one."""
        args = [str(BOOT), "--kernel", str(kernel or self.image / "bzImage"),
                "--smp", str(smp), "--timeout", str(timeout)]
        if cpu:
            args += ["--cpu", cpu]
        if append:
            args += ["--append", append]
        if selftests:
            args.append("--selftests")
        if share is not None:
            args += ["--share", str(share)]
        for e in extra:
            args += ["--add", e]
        args += ["--", command]
        r = subprocess.run(args, capture_output=True, text=True, timeout=timeout + 60)
        return r.returncode, r.stdout, r.stderr


@pytest.fixture(scope="session")
def guest(kernel_image):
    return Guest(kernel_image)




@pytest.fixture(scope="session")
def criu_bin():
    """criu as built on the host, as the --add spec that puts it into the
    guest as criu, whatever its name here."""
    why = buildpaths.missing_criu()
    if why:
        pytest.fail(why)
    return f"{CRIU}:/bin/criu"


def build_helper(tmp_path_factory, name):
    """test/kernel/NAME.c, built for the guest (same libc as the host)."""
    out = tmp_path_factory.mktemp(name) / name
    subprocess.run(["cc", "-O2", "-Wall", "-pthread", "-o", str(out),
                    str(HERE / (name + ".c"))], check=True)
    return out


@pytest.fixture(scope="session")
def probe_bin(tmp_path_factory):
    return build_helper(tmp_path_factory, "probe")


@pytest.fixture(scope="session")
def subreaper_bin(tmp_path_factory):
    return build_helper(tmp_path_factory, "subreaper")


@pytest.fixture(scope="session")
def cpuns_bin(tmp_path_factory):
    return build_helper(tmp_path_factory, "cpuns")
