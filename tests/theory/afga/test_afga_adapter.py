"""AFGA's adapter (fedbound.theory.afga.adapter): a run's constants against closed forms (a shared
Hessian quadratic: sigma_g, sigma_k, sigma_c exactly, afga.md 4.3; rings with known ||W - J||_2);
Theorem 4.6 and D.3 accept them (D.3 at K = 1 is 4.6, (37)); runs outside the theorems refused."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.errors import UnknownNameError, ValidationError
from fedbound.network import Network
from fedbound.network.topology import ring_weights
from fedbound.tasks import Quadratic, RobustRegression
from fedbound.theory import get
from fedbound.theory.afga.adapter import DEFAULT_CLUSTERS, constants
from fedbound.theory.afga.common import DEFAULT_CONSTANTS

H = np.array([2.0, 0.5, 1.0])
OPTIONS = {"lr": 0.01, "server_lr": 2.0, "local_steps": 3, "beta1": 0.8, "tau": 0.5}


def shared_quadratic(N, seed=0):
    """f_i = 1/2 (x - b_i)^T diag(H) (x - b_i): grad f_i - grad f = H (b - b_i) for every x."""
    b = np.random.default_rng(seed).standard_normal((N, H.size))
    return Quadratic(np.stack([np.diag(H)] * N), b), b


def ring_rho(m):
    """||ring(m) - J||_2 from the eigenvalues 1/3 + (2/3) cos(2 pi k/m), k != 0 (topology.ring_weights)."""
    return max(abs(1 / 3 + 2 / 3 * np.cos(2 * np.pi * k / m)) for k in range(1, m))


def test_afga_closed_forms():
    N = 8
    task, b = shared_quadratic(N)
    k = constants(task.with_noise(0.7), None, "afga", {**OPTIONS, "clients_per_round": 4})
    sigma_g2 = np.mean(np.sum((H * (b - b.mean(0))) ** 2, 1))
    x0 = task.x0.numpy()
    f = lambda x: 0.5 * np.mean(np.sum(H * (x - b) ** 2, 1))       # noqa: E731
    expected = {"eta_l": 0.01, "eta": 2.0, "I": 3, "beta1": 0.8, "eps_ams": 0.5, "N": N, "M": 4, "K": 1,
                "n": N, "m": 4, "rho": ring_rho(N), "L": 2.0, "sigma": 0.7, "G": np.inf,
                "sigma_g": np.sqrt(sigma_g2), "sigma_l": np.sqrt(sigma_g2), "sigma_c": 0.0, "alpha": 1.0,
                "d": 3, "f_gap": f(x0) - f(b.mean(0))}
    assert k.keys() == expected.keys()
    for name, value in expected.items():
        assert k[name] == pytest.approx(value, rel=1e-10, abs=1e-14), name


@settings(max_examples=20)
@given(K=st.sampled_from([2, 3, 4]), n=st.integers(2, 5), seed=st.integers(0, 2 ** 16))
def test_cafga_cluster_heterogeneity(K, n, seed):
    """sigma_k^2 = (1/n) sum_{V_k} ||H(b_i - b_k)||^2, sigma_c^2 = (1/K) sum_k ||H(b_k - b)||^2 (alpha = 1)."""
    task, b = shared_quadratic(K * n, seed)
    network = Network.from_blocks([ring_weights(n)] * K)
    k = constants(task, network, "cafga", {"lr": 0.01, "clients_per_round": K})
    centres = b.reshape(K, n, -1).mean(1)
    intra = np.mean([np.mean(np.sum((H * (b.reshape(K, n, -1)[c] - centres[c])) ** 2, 1)) for c in range(K)])
    inter = np.mean(np.sum((H * (centres - b.mean(0))) ** 2, 1))
    assert (k["K"], k["n"], k["m"], k["N"], k["M"]) == (K, n, 1, K * n, K)
    assert k["sigma_l"] ** 2 == pytest.approx(intra, rel=1e-9)
    assert k["sigma_c"] ** 2 == pytest.approx(inter, rel=1e-9, abs=1e-12)
    assert k["rho"] == pytest.approx(ring_rho(n) if n > 1 else 0.0, abs=1e-12)


def test_cafga_without_network_uses_its_default_rings():
    task, _ = shared_quadratic(10)
    k = constants(task, None, "cafga", {"lr": 0.01, "clients_per_round": 5})
    assert (k["K"], k["n"], k["m"]) == (DEFAULT_CLUSTERS, 2, 1)
    assert k["rho"] == pytest.approx(1 / 3, rel=1e-12)                    # ring(2): [[1/3, 2/3], [2/3, 1/3]]
    assert constants(task, None, "cafga", {"lr": 0.01, "clusters": 2})["rho"] == pytest.approx(ring_rho(5))


def test_theorems_accept_the_constants():
    """Robust regression (G = sqrt(d), L = 2) on the complete graph (rho = 0 <= M/(M+N)): Theorem 4.6
    evaluates, equals Theorem D.3 at K = 1 (37), and the rho-condition holds; CAFGA's D.3 too."""
    task = RobustRegression.generate(8, 4, seed=0).with_noise(0.5, kind="sphere")
    k = constants(task, Network.from_topology("complete", 1, 8), "afga", {**OPTIONS, "clients_per_round": 4})
    assert k["G"] == pytest.approx(2.5) and k["L"] == 2.0 and k["rho"] == pytest.approx(0.0, abs=1e-12)
    extra = {**DEFAULT_CONSTANTS, "R": np.array([10.0, 1000.0])}
    thm46 = get("afga.thm46").evaluate("printed", **k, **extra).bound
    assert np.all(np.isfinite(thm46))
    np.testing.assert_allclose(get("afga.thmD3").evaluate("printed", **k, **extra).bound, thm46, rtol=1e-12)
    assert all(get("afga.rho_condition").evaluate("theorem", **k).predicates.values())
    clustered = constants(task, Network.from_topology("complete", 2, 4), "cafga", {**OPTIONS, "clients_per_round": 4})
    assert np.all(np.isfinite(get("afga.thmD3").evaluate("printed", **clustered, **extra).bound))


def test_gaussian_noise_gives_an_unbounded_G_that_the_theorem_refuses():
    task, _ = shared_quadratic(4)
    k = constants(task.with_noise(1.0), None, "afga", {"lr": 0.01})
    assert k["G"] == np.inf
    with pytest.raises(ValidationError, match=r"G \(bound G on stochastic-gradient norms"):
        get("afga.thm46").evaluate("printed", **k, **DEFAULT_CONSTANTS, R=10.0)


@pytest.mark.parametrize("algorithm, network, options, error, message", [
    ("afga-a", None, {}, UnknownNameError, "do not cover the algorithm 'afga-a'"),
    ("fedamsgrad", None, {}, UnknownNameError, "do not cover"),
    ("afga", None, {"server_optimizer": "adam"}, ValidationError, "AMSGrad server"),
    ("afga", None, {"bias_correction": "adam"}, ValidationError, "no bias correction"),
    ("cafga", None, {"eps_inside_sqrt": False}, ValidationError, "eps inside the root"),
    ("afga", Network.from_topology("ring", 2, 4), {}, ValidationError, "disconnected"),
    ("cafga", Network.from_blocks([ring_weights(3), ring_weights(5)]), {}, ValidationError, "equal clusters"),
    ("cafga", Network.from_topology("ring", 2, 4), {"clients_per_round": 3}, ValidationError, "multiple of the K = 2"),
    ("cafga", Network.from_topology("ring", 2, 4), {"clusters": 2}, ValidationError, "not both"),
    ("afga", None, {"eps": 1e-3}, UnknownNameError, "unknown option of afga for AFGA's constants 'eps'"),
])
def test_runs_outside_the_theorems_are_refused(algorithm, network, options, error, message):
    task, _ = shared_quadratic(8)
    with pytest.raises(error, match=message):
        constants(task, network, algorithm, {"lr": 0.01, **options})


def test_what_the_task_cannot_supply_is_named():
    task, _ = shared_quadratic(4)
    task.f_star = None
    with pytest.raises(ValidationError, match=r"AFGA's results need f\* \(for the initial gap"):
        constants(task, None, "afga", {"lr": 0.01})
