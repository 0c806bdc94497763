"""Paths and helpers the kernel tests share (conftest.py has the fixtures).
A module of its own: "from conftest import" would find another directory's
conftest when pytest collects several test directories at once.

criu and the zdtm programs are found the way scripts/test.sh and the zdtm
runner find them (test/zdtm/buildpaths.py: CRIU, ZDTM_BUILD, BUILD_DIR)."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# test/zdtm holds the modules the tests share
sys.path.insert(0, str(HERE.parent / "zdtm"))

import buildpaths  # noqa: E402
from buildpaths import ROOT  # noqa: E402,F401 (for the tests here)

BUILD_DIR = buildpaths.build_dir()
CRIU = buildpaths.criu()
ZDTM_BUILT = buildpaths.zdtm_build() / "static"


def parse_probe(line: str) -> dict[str, str]:
    """One line of the probe's (probe.c) output as a dict of strings."""
    return dict(kv.split("=", 1) for kv in line.split())
