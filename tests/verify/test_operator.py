"""The exact linear iteration operator of SD-GT (fedbound.verify.operator)."""
import numpy as np
import pytest

from fedbound.algorithms import SDGT
from fedbound.errors import ValidationError
from fedbound.tasks import RobustRegression
from fedbound.verify import analytic_fixed_point, sdgt_operator
from fedbound.verify.operator import FIELDS


@pytest.fixture(scope="module")
def sdgt_and_operator(quadratic, ring3x4):
    alg = SDGT(quadratic, ring3x4, lr=0.05, local_steps=3)
    return alg, sdgt_operator(alg)


def test_operator_reproduces_the_algorithm(sdgt_and_operator):
    alg, op = sdgt_and_operator
    state = alg.init()
    s = np.concatenate([getattr(state, f).numpy().ravel() for f in FIELDS])
    for _ in range(5):
        state = alg.step(state)
        s = op.M @ s + op.c
        flat = np.concatenate([getattr(state, f).numpy().ravel() for f in FIELDS])
        np.testing.assert_allclose(s, flat, rtol=0, atol=1e-12)
    X_end = op.E @ s + op.e       # observation map: next round's X^{t,K+1}
    assert X_end.shape == (12 * 4,)


def test_fixed_point_is_the_derived_one(sdgt_and_operator):
    alg, op = sdgt_and_operator
    expected = analytic_fixed_point(alg)
    for f in FIELDS:
        np.testing.assert_allclose(op.field(op.fixed_point, f), expected[f], atol=1e-10)
    np.testing.assert_allclose(op.M @ op.fixed_point + op.c, op.fixed_point, atol=1e-12)


def test_conserved_directions_are_excluded(sdgt_and_operator, ring3x4):
    alg, op = sdgt_and_operator
    d = alg.task.d
    eig = np.linalg.eigvals(op.M)
    # the subnet sums of z are conserved: eigenvalue 1 with multiplicity >= S d
    assert np.sum(np.abs(eig - 1.0) < 1e-9) >= ring3x4.S * d
    assert op.full_spectral_radius >= 1.0 - 1e-12
    assert op.spectral_radius < 1.0
    assert op.basis.shape[1] == op.M.shape[0] - ring3x4.S * d


def test_non_quadratic_task_is_refused(ring3x4):
    task = RobustRegression.generate(12, 3, seed=0)
    with pytest.raises(ValidationError, match="not affine"):
        sdgt_operator(SDGT(task, ring3x4, lr=0.05, local_steps=2))
