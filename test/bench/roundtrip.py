# SPDX-License-Identifier: GPL-2.0-only
"""What the benchmarks of one target share: start it, wait until it says it
is ready, dump it and restore it, timing both by the wall clock."""
import os
import shutil
import signal
import subprocess
import sys
import time
from typing import Sequence

# test/zdtm holds the modules the tests and benchmarks share
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zdtm"))
from reap import reap_leftovers  # noqa: E402


def time_round_trip(criu: str, argv: list[str], work: str,
                    opts: Sequence[str] = ()) -> tuple[float, float]:
    """(dump, restore) seconds of the target argv, whose last argument is
    the file it writes its pid to when ready; opts go to both criu runs."""
    img = os.path.join(work, "img")
    shutil.rmtree(img, ignore_errors=True)
    os.mkdir(img, 0o700)
    ready = os.path.join(work, "ready")
    if os.path.exists(ready):
        os.unlink(ready)
    p = subprocess.Popen([*argv, ready], stdin=subprocess.DEVNULL, start_new_session=True)
    while not os.path.exists(ready):
        if p.poll() is not None:
            sys.exit(f"{argv[0]} exited with {p.returncode}")
        time.sleep(0.05)
    t = time.monotonic()
    subprocess.run([criu, "dump", "-t", str(p.pid), "-D", img, "-o", "dump.log", *opts],
                   check=True)
    dump = time.monotonic() - t
    p.wait()
    time.sleep(0.2)
    reap_leftovers()
    t = time.monotonic()
    subprocess.run([criu, "restore", "-D", img, "-d", "-o", "restore.log", *opts], check=True)
    restore = time.monotonic() - t
    os.killpg(p.pid, signal.SIGKILL)
    time.sleep(0.2)
    reap_leftovers()
    return dump, restore
