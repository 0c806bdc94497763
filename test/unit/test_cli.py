"""criu's command line, as a user types it: what test/fuzz/fuzz_opts found
in parse_opts() (criu/main.c), kept from coming back."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CRIU = Path(os.environ.get("CRIU", REPO / "build" / "criu" / "criu"))


def criu(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    if not CRIU.exists():
        pytest.skip(f"{CRIU} is not built (ninja -C build)")
    return subprocess.run([str(CRIU), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=60)


def no_such_pid() -> int:
    pid = int(Path("/proc/sys/kernel/pid_max").read_text()) - 1
    while Path(f"/proc/{pid}").exists():
        pid -= 1
    return pid


@pytest.mark.parametrize("args", [["-v2147483647", "-v"], ["-v4", "-vvvv"],
                                  ["--verbosity=2147483647", "-vv"]])
def test_verbosity_past_the_top_is_the_top(tmp_path: Path, args: list[str]) -> None:
    """-v2147483647 -v overflowed an int: the log level wrapped to a negative
    one and the log stayed empty. More than 4 is 4."""
    r = criu("dump", *args, "-t", str(no_such_pid()), "-D", "d", "-o", "dump.log",
             cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    log = (tmp_path / "d" / "dump.log").read_text()
    assert "Error (" in log, f"nothing logged with {args}: {r.stderr}"


def test_help_and_version_exit_0(tmp_path: Path) -> None:
    for opt, word in (("-h", "Usage:"), ("--version", "Version:")):
        r = criu(opt, cwd=tmp_path)
        assert r.returncode == 0 and word in r.stdout, (opt, r.stdout, r.stderr)
