# SPDX-License-Identifier: GPL-2.0-only
"""Tests of scripts/check-layers.py: it passes criu/ as it is, and it fails,
naming the arrow, on small trees that break each of its rules (a circle, an
arrow up the layers, a part using another group's file, a module in no
layer), including an arrow seen only in the objects' symbols."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# test/zdtm holds the modules the tests share
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "zdtm"))
from buildpaths import ROOT as REPO  # noqa: E402
SCRIPT = REPO / "scripts" / "check-layers.py"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                          text=True, timeout=120)


def tree(root: Path, files: dict[str, str]) -> Path:
    """A tree of sources under @root/criu, as {path: text}."""
    src = root / "criu"
    for name, text in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    return src


def test_criu_passes() -> None:
    res = run()
    assert res.returncode == 0, res.stderr
    assert "0 broken rule(s)" in res.stdout


def test_circle(tmp_path: Path) -> None:
    src = tree(tmp_path, {
        "core/a.c": '#include "core/b.h"\n', "core/a.h": "",
        "core/b.c": '#include "core/a.h"\n', "core/b.h": "",
    })
    res = run("--src", str(src))
    assert res.returncode == 1
    assert "circle: core/a, core/b" in res.stderr


def test_upward_arrow(tmp_path: Path) -> None:
    src = tree(tmp_path, {
        "parts/x.c": '#include "restore/rtree.h"\n', "restore/rtree.h": "",
    })
    res = run("--src", str(src))
    assert res.returncode == 1
    assert "upward arrow: parts/x (parts) -> restore/rtree (drivers)" in res.stderr


def test_part_of_another_group(tmp_path: Path) -> None:
    src = tree(tmp_path, {
        "parts/mm.c": '#include "parts/shmem.h"\n#include "parts/mm-vma.h"\n',
        "parts/mm-vma.h": "", "parts/shmem.h": "",
        "parts/parts.c": '#include "parts/mm.h"\n#include "parts/shmem.h"\n',
        "parts/mm.h": "",
    })
    res = run("--src", str(src))
    assert res.returncode == 1
    assert "a part reaches into another group: parts/mm -> parts/shmem" in res.stderr
    # its own group, and the table of parts, may
    assert "parts/mm-vma" not in res.stderr and "parts/parts ->" not in res.stderr


def test_module_in_no_layer(tmp_path: Path) -> None:
    src = tree(tmp_path, {"attic/old.c": ""})
    res = run("--src", str(src))
    assert res.returncode == 1
    assert "attic/old: in no layer" in res.stderr


@pytest.mark.skipif(not shutil.which("cc") or not shutil.which("nm"),
                    reason="no cc or nm to make objects with")
def test_symbol_arrow(tmp_path: Path) -> None:
    """A part calling the driver through a prototype of part.h: no include
    shows it, the objects do."""
    src = tree(tmp_path, {
        "parts/part.h": "int driver_service(void);\n",
        "parts/p.c": '#include "parts/part.h"\nint p(void) { return driver_service(); }\n',
        "restore/r.c": "int driver_service(void) { return 1; }\n",
    })
    objs = tmp_path / "build" / "criu" / "criu.p"
    objs.mkdir(parents=True)
    for name in ("parts/p.c", "restore/r.c"):
        subprocess.run(["cc", "-c", "-I", str(src), str(src / name), "-o",
                        str(objs / (name.replace("/", "_") + ".o"))], check=True)
    assert run("--src", str(src)).returncode == 0
    res = run("--src", str(src), "--build", str(tmp_path / "build"))
    assert res.returncode == 1
    assert "upward arrow: parts/p (parts) -> restore/r (drivers): driver_service" in res.stderr
