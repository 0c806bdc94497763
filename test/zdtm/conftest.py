"""pytest glue for the zdtm suite: reap what got reparented to us, fail a
test (and the session) that left the host changed (hoststate.py), list the
skipped tests with their reasons at the end, and need_criu for the modules
whose every test runs criu (pytestmark = pytest.mark.usefixtures("need_criu"))."""
from typing import Iterator

import pytest

import zdtm
from hoststate import host_unchanged_by_session, host_unchanged_by_test  # noqa: F401


def pytest_configure(config: pytest.Config) -> None:
    # a test program whose feature is missing here says why: show it
    chars = config.option.reportchars or ""
    if not any(c in chars for c in "saA"):
        config.option.reportchars = chars + "s"


@pytest.fixture(autouse=True, scope="session")
def _reap_at_end() -> Iterator[None]:
    yield
    zdtm.reap_leftovers()
    zdtm.end_session()


@pytest.fixture
def need_criu() -> None:
    """Skipped with ZDTM_SELFCHECK=1, failed when criu is not built."""
    zdtm.need_criu()
