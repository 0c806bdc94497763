"""Deleted files ("ghost files") criu refuses to dump: bigger than
--ghost-limit (held open, or only mapped), or still linked under another
name (CRIU's --link-remap, not implemented). criu must fail cleanly with one
line naming the task, the fd or area, the path, and the size and option
(test_errors.py's contract), and the task goes on untouched."""
from __future__ import annotations

import pytest

import zdtm
from test_errors import check_refused_dump

pytestmark = pytest.mark.usefixtures("need_criu")

REFUSED: dict[str, tuple[list[str], tuple[str, ...]]] = {
    # argument of static/file_ghost_refused -> dump options, words the line must hold
    "big": ([], ("fd 3: deleted file", "2097152 bytes, over --ghost-limit 1048576")),
    "big-mapped": ([], ("the area at 0x", "2097152 bytes, over --ghost-limit 1048576")),
    "linked": ([], ("other link(s)", "--link-remap")),
    "small-limit": (["--ghost-limit", "4K"], ("over --ghost-limit 4096",)),
}


@pytest.mark.parametrize("what", list(REFUSED))
def test_dump_refused_ghost(what: str) -> None:
    opts, words = REFUSED[what]
    arg = "big" if what == "small-limit" else what
    with zdtm.Run("file_ghost_refused", f"refused-{what}", args=[arg]) as r:
        line = check_refused_dump(r, f"a task holding a {what} ghost", words[:1], opts=opts)
        for w in words[1:]:
            assert w in line, f"'{w}' is not in: {line}"
        assert "file_ghost_refused.ghost (deleted)" in line, line
