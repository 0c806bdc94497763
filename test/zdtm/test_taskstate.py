"""Task state criu refuses, and refuses clearly (static/task_refused.c,
static/task_oom_score.c): a userfaultfd with a registered area (held
by the task, or only by a process outside the tree), a
MAP_HUGETLB area, a traced task inside the tree are refused at the dump,
naming the task and the resource, and the task goes on unchanged
(test_errors.py's contract); an oom_score_adj criu may not give (lowering
it below criu's own floor needs CAP_SYS_RESOURCE) is refused at restore
before any task exists. What is kept is in the static programs task_*."""
from __future__ import annotations

import shutil
import sys

import pytest

import buildpaths
import zdtm
from test_errors import check_refused_dump
from test_file_locks import restore_refused

sys.path.insert(0, str(buildpaths.CRIT.parent))
import crit  # noqa: E402

pytestmark = pytest.mark.usefixtures("need_criu")

REFUSED = {
    # argument of static/task_refused -> words one of which the line must hold
    "userfaultfd": ("userfaultfd",),
    "uffd_area": ("userfaultfd",),
    "hugetlb": ("hugetlb",),
    "ptraced": ("traced",),
}


@pytest.mark.parametrize("what", list(REFUSED))
def test_dump_refused_task_state(what):
    with zdtm.Run("task_refused", f"refused-{what}", args=[what]) as r:
        check_refused_dump(r, f"a task with {what}", REFUSED[what])


def have_cap(cap: int) -> bool:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> cap & 1)
    return False


def oom_floor() -> int:
    with open("/proc/self/oom_score_adj") as f:
        return int(f.read())


def test_oom_score_below_floor():
    """An oom_score_adj lower than criu's own, where criu lacks
    CAP_SYS_RESOURCE (as here): the restore names the task, the value and
    the capability, and fails before any task exists; the good images
    still restore."""
    if have_cap(24):  # CAP_SYS_RESOURCE
        pytest.skip("criu has CAP_SYS_RESOURCE: any oom_score_adj can be set")
    low = oom_floor() - 1
    if low < -1000:
        pytest.skip("criu's own oom_score_adj is already -1000")
    with zdtm.Run("task_oom_score", "below-floor") as r:
        r.start()
        good = r.imgdir("img")
        r.dump_ok(good)
        bad = r.dir / "bad"
        shutil.copytree(good, bad)
        name = f"task_props-{r.pid}.img"
        doc = crit.read_image(bad / name, full_bytes=True)
        doc["entry"]["oom_score_adj"] = low
        (bad / name).write_bytes(crit.encode_image(doc))
        restore_refused(r, bad, "restore of an oom_score_adj below criu's",
                        ("cap_sys_resource",), r.pid)
        r.restore_ok(good)
        r.finish()
