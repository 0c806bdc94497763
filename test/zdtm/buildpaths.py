"""Where the tests find what the build made, resolved the way scripts/test.sh
does it, so that every test directory agrees:

  CRIU        the criu binary            (default BUILD_DIR/criu/criu)
  ZDTM_BUILD  the built zdtm programs    (default BUILD_DIR/test/zdtm)
  BUILD_DIR   meson's build directory    (default build; a relative path
              is taken from the repository's root, as scripts/test.sh does)

A module of its own, free of side effects, so that test/unit and
test/kernel can import it (zdtm.py makes the runner a subreaper).
"""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def build_dir() -> Path:
    d = Path(os.environ.get("BUILD_DIR") or "build")
    return d if d.is_absolute() else REPO / d


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
