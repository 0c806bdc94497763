"""The repository's root, and where the tests find what the build made,
resolved the way scripts/lib.sh does it, so that every script and test
directory agrees:

  ROOT        the repository's root: the one definition for all the
              Python of the tree (crit.py, test/unit, test/kernel,
              test/bench import it from here)
  CRIT        contrib/crit/crit.py (its directory goes on sys.path
              before an "import crit")
  CRIU        the criu binary            (default BUILD_DIR/criu/criu)
  ZDTM_BUILD  the built zdtm programs    (default BUILD_DIR/test/zdtm)
  BUILD_DIR   meson's build directory    (default build; a relative path
              is taken from ROOT, as scripts/lib.sh does)

A module of its own, free of side effects, so that everything can import
it (zdtm.py makes the runner a subreaper). Files outside test/zdtm put
this directory on sys.path first.
"""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CRIT = ROOT / "contrib" / "crit" / "crit.py"


def build_dir() -> Path:
    d = Path(os.environ.get("BUILD_DIR") or "build")
    return d if d.is_absolute() else ROOT / d


def criu() -> Path:
    env = os.environ.get("CRIU")
    return Path(env) if env else build_dir() / "criu" / "criu"


def zdtm_build() -> Path:
    env = os.environ.get("ZDTM_BUILD")
    return Path(env) if env else build_dir() / "test" / "zdtm"


def missing_criu() -> str:
    """Why criu can't be run, for a test failure; "" when it can."""
    path = criu()
    if os.access(path, os.X_OK):
        return ""
    return (f"criu not found at {path}: build it (ninja -C {build_dir()}) or set "
            "CRIU or BUILD_DIR")
