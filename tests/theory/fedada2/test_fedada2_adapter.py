"""FedAda2's adapter (fedbound.theory.fedada2.adapter): a run's constants on robust regression
(L = 2, coordinate bound G = 1 exactly), accepted by Theorem 20 and Corollaries 27/29; the runs
outside them refused."""
import numpy as np
import pytest

from fedbound.errors import ValidationError
from fedbound.tasks import RobustRegression
from fedbound.theory import get
from fedbound.theory.fedada2.adapter import constants

OPTIONS = {"lr": 0.05, "local_steps": 3, "client_eps": 0.1, "eps_s": 1e-3, "server_lr": 1.0, "tau": 1e-2,
           "beta1": 0.9, "delay": 2}


@pytest.fixture(scope="module")
def task():
    return RobustRegression.generate(5, 4, heterogeneity=1.0, seed=0)


def test_theorem20_constants(task):
    """Algorithm 2's constants: the options by the paper's names, v0 = 0, v~0 = tau^2, the task's
    G (coordinate-wise), L, d and f(x0) - f*; the same dict as written by hand in the Theorem 20
    notebook."""
    k = constants(task, None, "fedada2", OPTIONS)
    assert k == {"eta_l": 0.05, "K": 3, "z": 2, "eps": 0.1, "eps_s": 1e-3, "v0": 0.0, "eta": 1.0, "tau": 1e-2,
                 "vtilde0": 1e-4, "beta1_tilde": 0.9, "G": 1.0, "L": 2.0, "d": 4,
                 "f_gap": float(task.loss(task.x0)) - task.f_star}
    thm = get("fedada2.thm20")
    T = np.array([64.0, 4096.0])
    for v in thm.variants:
        assert np.all(np.isfinite(thm.bound(v, **k, T=T))) and np.all(thm.bound(v, **k, T=T) > 0)


def test_the_initial_second_moments_are_the_runs(task):
    """v~0 is the server's ``v0`` (default tau^2), v0 JointZero's AdaGrad client's ``client_v0``."""
    assert constants(task, None, "fedada2", {**OPTIONS, "v0": 0.5})["vtilde0"] == 0.5
    k = constants(task, None, "jointzero", {**OPTIONS, "client_optimizer": "adagrad", "client_v0": 0.25})
    assert (k["v0"], k["vtilde0"]) == (0.25, 1e-4)


def test_defaults_are_the_constructors(task):
    """server_lr 0.1, tau 1e-3, client_eps 1e-3, delay 1, server momentum 0."""
    k = constants(task, None, "fedada2", {"lr": 0.05, "eps_s": 1e-3})
    assert (k["K"], k["eta"], k["tau"], k["eps"], k["z"], k["beta1_tilde"]) == (1, 0.1, 1e-3, 1e-3, 1, 0.0)


@pytest.mark.parametrize("client, result", [("adam", "fedada2.cor27"), ("adagrad", "fedada2.cor29")])
def test_full_diagonal_clients_give_corollaries_27_and_29(task, client, result):
    """jointzero is Algorithm 8 (Adam clients) or 10 (AdaGrad clients): K = max, K^- = min of the
    per-client steps, Xi = B = eps_w = 1; the client Adam decays for Algorithm 8 only."""
    k = constants(task, None, "jointzero", {**OPTIONS, "local_steps": [3, 1, 2, 3, 2], "client_optimizer": client,
                                            "client_beta1": 0.8})
    assert (k["K"], k["K_minus"], k["B"], k["eps_w"]) == (3, 1, 1.0, 1.0)
    assert ("beta1" in k) == (client == "adam")
    if client == "adam":
        assert (k["beta1"], k["beta2"]) == (0.8, 0.999)
    r = get(result)
    for v in r.variants:
        assert np.all(np.isfinite(r.bound(v, **k, T=np.array([64.0, 4096.0]))))


@pytest.mark.parametrize("algorithm, options, message", [
    ("fedada2", {"eps_s": None}, "need the eps_s rule"),
    ("fedada2", {"server_optimizer": "adam"}, "AdaGrad server"),
    ("fedada2", {"sm3_variant": "I"}, "SM3-II client"),
    ("fedada2", {"client_optimizer": "sm3_adam"}, "SM3-II client"),
    ("fedada2", {"local_steps": [1, 2, 3, 1, 2]}, "same K local steps"),
    ("fedada2", {"eps_inside_sqrt": True}, "tau outside the root"),
    ("fedada2", {"carry_over": False}, "carried over"),
    ("jointzero", {"client_optimizer": "adam", "client_bias_correction": False}, "bias-corrected ADMU"),
    ("dja", {}, "do not cover the algorithm 'dja'"),
])
def test_runs_outside_the_theorems_are_refused(task, algorithm, options, message):
    with pytest.raises(ValidationError, match=message):
        constants(task, None, algorithm, {**OPTIONS, **options})


def test_noise_and_unequal_weights_are_refused(task):
    with pytest.raises(ValidationError, match="full-batch local gradients"):
        constants(task.with_noise(0.1, kind="sphere"), None, "fedada2", OPTIONS)
    weighted = RobustRegression(task.centers.numpy(), weights=[0.1, 0.2, 0.3, 0.2, 0.2])
    with pytest.raises(ValidationError, match="not uniform"):
        constants(weighted, None, "fedada2", OPTIONS)
