"""Paths and helpers the kernel tests share (conftest.py has the fixtures).
A module of its own: "from conftest import" would find another directory's
conftest when pytest collects several test directories at once."""
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CRIU = ROOT / "build" / "criu" / "criu"


def parse_probe(line):
    """One line of the probe's (probe.c) output as a dict of strings."""
    return dict(kv.split("=", 1) for kv in line.split())
