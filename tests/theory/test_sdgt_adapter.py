"""SD-GT's adapter (fedbound.theory.sdgt.adapter): a run's constants against their closed forms on
quadratics with known L, mu and networks with known rho_s; accepted by the SD-GT results; the
deprecated verify.sdgt_constants and SDGTSetting agree with it."""
import copy
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedbound import deprecation
from fedbound.deprecation import FedboundDeprecationWarning
from fedbound.errors import ValidationError
from fedbound.network import Network
from fedbound.network.topology import ring_weights
from fedbound.tasks import Quadratic
from fedbound.theory import get
from fedbound.theory.sdgt.adapter import constants
from fedbound.verify import SDGTSetting, sdgt_constants

#: H_i = diag(eigs_i): L = 3 (largest eigenvalue of any f_i), mu = 0.25 (smallest)
EIGS = np.array([[1.0, 0.25], [3.0, 2.0], [0.5, 1.0], [2.0, 2.0], [1.5, 0.5], [1.0, 1.0], [0.75, 2.5]])
#: a complete subnet of 3 (rho = 1) and a 1/3-ring of 4 (||W - J||_2 = 1/3, rho = 8/9)
NETWORK = Network.from_blocks([np.full((3, 3), 1 / 3), ring_weights(4)])


@pytest.fixture(scope="module")
def task():
    b = np.random.default_rng(0).standard_normal(EIGS.shape)
    return Quadratic(np.stack([np.diag(e) for e in EIGS]), b)


def test_closed_forms(task):
    k = constants(task.with_noise(0.3), NETWORK, "sdgt", {"lr": 0.02, "local_steps": 4, "clients_per_subnet": [2, 1]})
    assert k["L"] == pytest.approx(3.0, rel=1e-14) and k["mu"] == pytest.approx(0.25, rel=1e-14)
    assert k["sigma"] == pytest.approx(0.3, rel=1e-14)
    assert k["q"] == pytest.approx(8 / 9, rel=1e-14)
    assert k["p"] == pytest.approx(min(2 * 4 / 9, 1 * 7 / 16), rel=1e-15)     # h (2m - h)/m^2 per subnet
    assert (k["n"], k["K"], k["gamma"]) == (7, 4, 0.02)


def test_defaults_are_sdgts(task):
    """lr 0.01, local_steps 5, every client of each subnet (p = 1); noise-free: sigma = 0."""
    assert constants(task, NETWORK, "sdgt", {}) | {"L": 0, "mu": 0, "q": 0} == \
        {"L": 0, "mu": 0, "sigma": 0.0, "p": 1.0, "q": 0, "n": 7, "K": 5, "gamma": 0.01}


@given(h=st.tuples(st.integers(1, 3), st.integers(1, 4)))
def test_p_is_the_worst_subnets_sampling(h):
    task = Quadratic(np.stack([np.eye(2)] * 7), np.zeros((7, 2)))
    k = constants(task, NETWORK, "sdgt", {"clients_per_subnet": list(h)})
    exact = min(Fraction(hs * (2 * m - hs), m * m) for hs, m in zip(h, (3, 4)))
    assert k["p"] == pytest.approx(float(exact), rel=1e-15)


def test_accepted_by_the_results(task):
    """Theorem 3 at gamma <= gamma_bar: evaluated, every condition holds; Theorems 1-2 and Lemma 2
    take the same dict (c2, D, D5, E1, R: the caller's)."""
    k = constants(task.with_noise(0.1), NETWORK, "sdgt", {"local_steps": 2})
    thm3 = get("sdgt.thm3")
    k["gamma"] = 0.5 * min(float(thm3.max_step(v, **k)[0]) for v in thm3.variants)
    for v in thm3.variants:
        ev = thm3.evaluate(v, **k, T=np.arange(1, 5), Lyap1=1.0)
        assert all(np.all(h) for h in ev.conditions_hold.values()) and np.all(np.isfinite(ev.bound))
    assert np.isfinite(get("sdgt.thm2").evaluate("printed", **k, T=10, R=1.0).bound)
    assert np.isfinite(get("sdgt.thm1").evaluate("printed", **k, T=10, E1=1.0, c2=2.01, D=0.25, D5=1.0).bound)


def test_unknown_constants_and_missing_network_are_named(task):
    no_L = copy.copy(task)
    no_L.L = None
    with pytest.raises(ValidationError, match=r"SD-GT's results need L \(Assumption 1\); the Quadratic task"):
        constants(no_L, NETWORK, "sdgt", {})
    with pytest.raises(ValidationError, match="need the run's network"):
        constants(task, None, "sdgt", {})
    with pytest.raises(ValidationError, match="the network has 9 clients but the task has n = 7"):
        constants(task, Network.from_topology("ring", 3, 3), "sdgt", {})


def test_verify_uses_the_adapter(task, monkeypatch):
    setting = SDGTSetting(task, NETWORK, K=3, gamma=0.04, h=[1, 2], sigma=0.2)
    options = {"lr": 0.04, "local_steps": 3, "clients_per_subnet": [1, 2]}
    assert setting.options == options
    assert setting.constants() == constants(task.with_noise(0.2), NETWORK, "sdgt", options)
    monkeypatch.setattr(deprecation, "_WARNED", set())       # it warns once per process
    with pytest.warns(FedboundDeprecationWarning, match="sdgt_constants"):
        old = sdgt_constants(task.with_noise(0.2), NETWORK, K=3, gamma=0.04, h=[1, 2])
    assert old == setting.constants()
