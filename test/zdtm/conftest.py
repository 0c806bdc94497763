"""pytest glue for the zdtm suite: reap what got reparented to us."""
import pytest

import zdtm


@pytest.fixture(autouse=True, scope="session")
def _reap_at_end():
    yield
    zdtm.reap_leftovers()
    zdtm.end_session()
