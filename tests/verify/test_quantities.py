"""Error quantities of the SD-GT analysis from recorded runs (fedbound.verify.quantities)."""
import numpy as np
import torch

from fedbound.algorithms import SDGT
from fedbound.tasks import LeastSquares
from fedbound.verify import error_quantities, record_sdgt


def _record(task, network, seeds, rounds=6, h=None, x0=None):
    return record_sdgt(lambda s: SDGT(task, network, lr=0.05, local_steps=3, clients_per_subnet=h, seed=s,
                                      record_inner=True), rounds, seeds, x0=x0)


def test_deterministic_run_matches_trajectory_and_has_zero_width(quadratic, ring3x4):
    record = _record(quadratic, ring3x4, seeds=[0, 1])            # full participation, sigma = 0
    assert record.x_g.shape == (2, 7, 4) and record.inner_X.shape == (2, 6, 3, 12, 4)
    q = error_quantities(record, quadratic)
    for est in (q.E, q.D, q.Gamma, q.Y, q.Z, q.Delta):
        assert np.all(est.stderr == 0)
    x = torch.as_tensor(q.x_bar)
    gaps = np.array([quadratic.loss(xt) for xt in x]) - quadratic.f_star
    np.testing.assert_allclose(q.E.mean, gaps, rtol=1e-12, atol=1e-15)
    # SD-GT's init: Gamma_1 = 0 (every client starts at x^0 = x_g^1), and with exact gradients the
    # trackers start at their targets at x^0: Y_1 = Z_1 = 0
    assert q.Gamma.mean[0] == 0.0
    assert q.Y.mean[0] < 1e-28 and q.Z.mean[0] < 1e-28


def test_all_quantities_vanish_at_the_fixed_point(ring3x4):
    rng = np.random.default_rng(3)
    task = LeastSquares(rng.normal(size=(12, 6, 3)), rng.normal(size=(12, 6)))
    record = _record(task, ring3x4, seeds=[0, 1, 2], h=2, x0=task.x_star)
    q = error_quantities(record, task)
    for est in (q.D, q.G, q.Gamma, q.Y, q.Z, q.Delta):
        assert np.max(np.abs(est.mean)) < 1e-24
    assert np.max(np.abs(q.E.mean)) < 1e-13


def test_monte_carlo_estimates_have_intervals(quadratic, ring3x4):
    record = _record(quadratic.with_noise(0.5), ring3x4, seeds=8, h=2)
    q = error_quantities(record, quadratic)
    lyap = q.lyapunov_estimate(0.05)
    assert np.all(lyap.low <= lyap.mean) and np.all(lyap.mean <= lyap.high)
    assert np.all(q.Delta.stderr[1:] > 0) and np.all(q.D.stderr[1:] > 0)
    np.testing.assert_allclose(lyap.mean, q.lyapunov(0.05))
