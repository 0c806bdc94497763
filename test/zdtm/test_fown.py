"""The owner of an open file's signals (F_SETOWN_EX) outside the tree:
the dump is refused, naming the task, the fd and the owner, and the task
goes on with its owner as it was (test_errors.py's contract). What is
dumped is static/file_fown.c's."""
from __future__ import annotations

import pytest

import zdtm
from test_errors import check_refused_dump

pytestmark = pytest.mark.usefixtures("need_criu")


def test_dump_refused_owner_outside():
    with zdtm.Run("file_fown", "refused-outside", args=["outside"]) as r:
        line = check_refused_dump(r, "an owner of signals outside the tree",
                                  ("outside the dumped tree",))
        assert "sends its signals to process" in line and "fd " in line, line
