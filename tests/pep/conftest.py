"""The check every certificate of the PEP tests passes: the ``consistent`` fixture."""
import math

import pytest

from fedbound.pep.certificate import RTOL


def _consistent(c):
    """lower <= worst (<= theory where it applies) and the replayed worst function reproduces it."""
    assert c.status == "optimal" and c.duality_gap < 1e-5
    assert c.lower_bound <= c.worst_case * (1 + RTOL) + 1e-9
    assert math.isclose(c.replay_value, c.worst_case, rel_tol=1e-5, abs_tol=1e-8)
    assert c.replay_mismatch < 1e-5
    if c.theory is not None and c.theory_applies:
        assert c.worst_case <= c.theory * (1 + RTOL)
        assert "theory holds" in c.verdict


@pytest.fixture
def consistent():
    """The check of a certificate (:func:`_consistent`)."""
    return _consistent
