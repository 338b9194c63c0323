"""Subsampled-Gaussian RDP accountant (fedbound.privacy) against FedAda2's DP claim and quadrature."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad

from fedbound.errors import FedboundError
from fedbound.privacy import epsilon, rdp


def test_fedada2_claim_reproduced():
    """Section 6 / H.1 [004 L206, L1639]: sigma = 1, q = 0.1, 500 rounds, delta = 1/400 ->
    eps = 13.1 at the optimal order 2 (improved conversion; notes fedada2.md 4.17)."""
    eps, order = epsilon(0.1, 1.0, 500, 1 / 400)
    assert order == 2
    assert abs(eps - 13.1) < 0.05
    assert rdp(0.1, 1.0, 500, [2])[0] == pytest.approx(500 * math.log1p(0.01 * (math.e - 1)), rel=1e-12)
    assert epsilon(0.1, 1.0, 500, 1 / 400, orders=[3])[0] == pytest.approx(17.90, abs=0.01)
    classical, _ = epsilon(0.1, 1.0, 500, 1 / 400, conversion="classical")
    assert classical == pytest.approx(14.51, abs=0.01)


@settings(max_examples=20)
@given(q=st.floats(0.01, 0.5), sigma=st.floats(0.7, 4.0), alpha=st.integers(2, 6))
def test_rdp_equals_renyi_divergence_by_quadrature(q, sigma, alpha):
    """log E_Q[(P/Q)^alpha]/(alpha - 1), P = (1-q) N(0, s^2) + q N(1, s^2), Q = N(0, s^2), by
    numerical integration, equals the closed form of one round."""
    def integrand(x):
        ratio = (1 - q) + q * math.exp((2 * x - 1) / (2 * sigma ** 2))
        return ratio ** alpha * math.exp(-x * x / (2 * sigma ** 2)) / math.sqrt(2 * math.pi * sigma ** 2)
    value, _ = quad(integrand, -40 * sigma, 40 * sigma + 20, limit=400, epsabs=0, epsrel=1e-12)
    assert rdp(q, sigma, 1, [alpha])[0] == pytest.approx(math.log(value) / (alpha - 1), rel=1e-8)


def test_monotone_and_composition():
    r = rdp(0.05, 1.2, 1, range(2, 40))
    assert np.all(np.diff(r) >= 0)                      # RDP grows with the order
    np.testing.assert_allclose(rdp(0.05, 1.2, 700, range(2, 40)), 700 * r, rtol=1e-12)
    assert epsilon(0.05, 1.2, 100, 1e-5)[0] < epsilon(0.05, 1.2, 1000, 1e-5)[0]
    assert epsilon(0.0, 1.0, 100, 1e-5)[0] >= 0.0
    assert np.isfinite(rdp(0.5, 0.3, 10, [256])).all()  # large order and small sigma: log space


@pytest.mark.parametrize("kwargs", [
    dict(q=1.5), dict(q=-0.1), dict(sigma=0.0), dict(sigma=float("nan")), dict(steps=-1),
    dict(steps=2.5), dict(delta=0.0), dict(delta=1.0), dict(orders=[1]), dict(orders=[]),
    dict(orders=[2.5]), dict(conversion="best"), dict(q="0.1"),
])
def test_bad_input(kwargs):
    args = dict(q=0.1, sigma=1.0, steps=10, delta=1e-5)
    with pytest.raises(FedboundError):
        epsilon(**{**args, **kwargs})
