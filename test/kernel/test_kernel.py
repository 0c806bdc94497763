"""Boot the patched kernel (kernel/patches) under QEMU and run its
selftests inside: restoring a task's start time, and CPU namespaces.

Run with: python3 -m pytest -m kernel test/kernel
"""
import re

import pytest

pytestmark = pytest.mark.kernel

KSFT_SKIP = 4


def tap_summary(out):
    m = re.search(r"# Totals: pass:(\d+) fail:(\d+) xfail:\d+ xpass:\d+ skip:(\d+) error:(\d+)", out)
    assert m, "no kselftest totals in the output:\n" + out
    return tuple(int(x) for x in m.groups())


def run_selftest(guest, name, expect_pass, append=None):
    rc, out, err = guest.run(f"/selftests/{name}", append=append)
    if rc == KSFT_SKIP:
        pytest.fail(f"{name} skipped in the guest:\n{out}")
    assert rc == 0, f"{name} failed (status {rc}):\n{out}\n{err}"
    passed, failed, skipped, errors = tap_summary(out)
    assert (failed, errors) == (0, 0), out
    assert passed == expect_pass, out


def test_boot_reports_output_and_status(guest):
    rc, out, _ = guest.run("uname -r; nproc; echo to-stderr >&2; exit 7", selftests=False)
    assert rc == 7
    lines = out.split()
    assert lines[0].startswith("6.1.")
    assert lines[1] == "4"
    assert "to-stderr" in out


def test_boot_timeout_is_reported(guest):
    rc, _, err = guest.run("sleep 100", timeout=2, selftests=False)
    assert rc == 124
    assert "timed out" in err


def test_kernel_has_the_new_options(kernel_image):
    config = (kernel_image / "config").read_text()
    assert "CONFIG_CPU_NS=y" in config
    assert "CONFIG_RESTORE_START_TIME=y" in config
    assert "CONFIG_TIME_NS=y" in config
    assert "CONFIG_CHECKPOINT_RESTORE=y" in config


def test_start_time_selftest(guest):
    """Includes the permission model: no start time the host sees from a
    user namespace, one write only, the writer's credentials."""
    run_selftest(guest, "proc-start-time", expect_pass=12)


def test_cpu_ns_selftest(guest):
    run_selftest(guest, "cpu_ns_test", expect_pass=13)


def test_cpu_ns_confine_selftest(guest):
    """A CPU namespace within cpusets and CPU hotplug, rseq's cpu_id
    outside, membarrier and io_uring CPUs; isolcpus=3 gives sysfs
    "isolated" something to translate."""
    run_selftest(guest, "cpu_ns_confine", expect_pass=9, append="isolcpus=3")


def test_interfaces_present(guest):
    rc, out, _ = guest.run(
        "ls /proc/self/start_time /proc/$$/task/$$/start_time /proc/self/cpu_map "
        "/proc/self/ns/cpu /proc/self/ns/cpu_for_children /proc/sys/user/max_cpu_namespaces "
        "&& cat /proc/self/cpu_map", selftests=False)
    assert rc == 0, out
    assert out.strip().endswith("0 0\n1 1\n2 2\n3 3"), out
