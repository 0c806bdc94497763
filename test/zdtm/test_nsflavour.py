"""The zdtm `ns` flavour's machinery (nsflavour.py, ns.md): the pieces the
flavour stands on, checked on every run (also with ZDTM_NS=0).

- A sample of programs passes inside ctr containers without criu (the
  container side of the flavour works today).
- The probe: one dump of a container per session; while criu refuses
  containers it gives the issue-12 reason with criu's Error line, the
  probe's container runs on until killed and nothing of it is left; once
  criu dumps containers, a program goes through the whole flavour.
- The flavour is on unless ZDTM_NS=0, and excluded programs say why.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import container as ct
import nsflavour
import test_zdtm
import zdtm

SAMPLE = ["mem_anon", "sig_pending", "tree_session", "file_shared", "thread_state",
          "timerfd_periodic", "tree_zombie", "task_cwd"]


@pytest.fixture(autouse=True)
def _ctr_here() -> None:
    why = ct.available()
    if why:
        pytest.skip(why)


def descendants() -> set[int]:
    """Our children and theirs: containers' inits are reparented to us."""
    out: set[int] = set()
    todo = [os.getpid()]
    while todo:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                kids = [int(k) for k in Path(f"/proc/{pid}/task/{t}/children").read_text().split()]
            except OSError:
                continue
            out.update(kids)
            todo += kids
    return out


@pytest.mark.parametrize("name", SAMPLE)
def test_ns_selfcheck(name: str) -> None:
    """The program, started in a container by the runner, becomes ready,
    gets SIGTERM and passes: its files are in the container's root, its
    host pid and its pid inside are told apart."""
    before = descendants()
    nsflavour.run(zdtm.load_desc(name), selfcheck=True)
    assert descendants() <= before, "a container of the flavour is still there"


def test_ns_probe():
    """Today the probe says why the flavour skips (criu's Error line naming
    a namespace); once criu dumps containers, a program goes through the
    flavour for real."""
    zdtm.need_criu()
    before = descendants()
    why = nsflavour.probe()
    assert descendants() <= before, "the probe's container is still there"
    assert nsflavour.probe() == why, "probed twice"
    if why:
        assert why.startswith(ct.ISSUE12) and any(w in why for w in ct.NS_REFUSED), why
        with pytest.raises(pytest.skip.Exception, match="issue 12"):
            nsflavour.run_or_skip(zdtm.load_desc("mem_anon"))
        return
    nsflavour.run(zdtm.load_desc("mem_anon"), selfcheck=False)


def test_ns_on_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """One ns parameter per program; none with ZDTM_NS=0."""
    assert nsflavour.ENABLED == (os.environ.get("ZDTM_NS", "1") != "0")
    monkeypatch.setattr(nsflavour, "ENABLED", False)
    assert not [p for p in test_zdtm._params() if p.id.endswith("-ns")]
    monkeypatch.setattr(nsflavour, "ENABLED", True)
    ns = [p.id for p in test_zdtm._params() if p.id.endswith("-ns")]
    assert len(ns) == len(zdtm.all_descs())


def test_ns_excluded_say_why():
    for name, why in nsflavour.EXCLUDED.items():
        assert nsflavour.applies(zdtm.load_desc(name)) == why
    assert nsflavour.applies(zdtm.load_desc("mem_anon")) is None
