"""MAP_HUGETLB memory (static/mem_hugetlb, in every flavour where the
machine has free huge pages, and in the kernel guest, which reserves some).
Here, on any machine: a restore whose images hold more huge pages than the
machine has free refuses with one line naming the task, the page size and
the numbers, and leaves nothing behind; the images, unchanged, restore
once that area is gone."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import zdtm
from test_cpu import read_image, write_image
from test_errors import check_clean_error, check_nothing_left

pytestmark = pytest.mark.usefixtures("need_criu")

HUGETLB_PRIVATE = 14                    # images/mm.proto vma_kind
HUGE_KB = 2048
HUGE = HUGE_KB << 10


def free_huge_pages() -> int:
    base = Path(f"/sys/kernel/mm/hugepages/hugepages-{HUGE_KB}kB")
    try:
        return int((base / "free_hugepages").read_text()) + \
            int((base / "nr_overcommit_hugepages").read_text())
    except OSError:
        return 0


def vma_fields(start: int, end: int) -> list[list[Any]]:
    # start, end, prot (rw), flags (MAP_PRIVATE), kind, huge_page_kb
    return [[1, 0, start], [2, 0, end], [3, 0, 3], [4, 0, 2], [5, 0, HUGETLB_PRIVATE],
            [16, 0, HUGE_KB]]


def add_huge_area(path: Path, pages: int) -> None:
    """A private hugetlb area of @pages huge pages in the first gap that
    holds it, the areas kept in address order."""
    import crit
    magic, f = read_image(path)
    vmas = [(i, {x[0]: x[2] for x in crit.raw_fields(fld[2])})
            for i, fld in enumerate(f) if fld[0] == 14]
    prev_end, at = 1 << 32, None
    for i, v in vmas:
        start = (prev_end + HUGE - 1) & ~(HUGE - 1)
        if v[1] >= start + pages * HUGE and start + pages * HUGE <= 1 << 46:
            at = (i, start)
            break
        prev_end = max(prev_end, v[2])
    assert at is not None, "no gap for the area"
    i, start = at
    f.insert(i, [14, 2, crit.put_raw_fields(vma_fields(start, start + pages * HUGE))])
    write_image(path, magic, f)


def test_too_few_huge_pages() -> None:
    with zdtm.Run("mem_anon", "hugetlb-room") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        mm = img / f"mm-{r.pid}.img"
        orig = mm.read_bytes()
        need = free_huge_pages() + 1
        add_huge_area(mm, need)
        res, _ = r.restore(img)
        line = check_clean_error(r, res, "restore of more huge pages than are free",
                                 ("huge pages",))
        if f"needs {need} huge pages of {HUGE_KB} kB" not in line:
            r.fail(f"the Error line does not say what is needed: {line!r}", res)
        check_nothing_left(r, "restore short of huge pages", res)
        mm.write_bytes(orig)
        r.restore_ok(img)
        r.finish()


def set_huge_kb(path: Path, kb: int) -> None:
    """The hugetlb areas of mm image @path say pages of @kb."""
    import crit
    magic, f = read_image(path)
    for fld in f:
        if fld[0] != 14:
            continue
        v = crit.raw_fields(fld[2])
        if any(x[0] == 5 and x[2] == HUGETLB_PRIVATE for x in v):
            for x in v:
                if x[0] == 16:
                    x[2] = kb
            fld[2] = crit.put_raw_fields(v)
    write_image(path, magic, f)


@pytest.mark.parametrize("kb", [3000, 4096])
def test_bad_huge_area_refused(kb: int) -> None:
    """A hugetlb area whose page size is not a power of two (3000 kB), or
    that is not aligned to it (4 MiB pages, the area on a 2 MiB
    boundary): an invalid image, by name."""
    with zdtm.Run("mem_anon", f"hugetlb-bad-{kb}") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        mm = img / f"mm-{r.pid}.img"
        orig = mm.read_bytes()
        add_huge_area(mm, 1)
        set_huge_kb(mm, kb)
        res, _ = r.restore(img)
        check_clean_error(r, res, "restore of a bad hugetlb area", ("invalid area",))
        check_nothing_left(r, "restore of a bad hugetlb area", res)
        mm.write_bytes(orig)
        r.restore_ok(img)
        r.finish()
