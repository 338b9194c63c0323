"""FedNova's adapter (fedbound.theory.fednova.adapter): the constants of a run against the closed
forms of App. E ((121)-(131)), the vector preparations of the results, and Assumption 3 on
quadratics with identity Hessians; the runs outside the theorems are refused."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.errors import ValidationError
from fedbound.network import Network
from fedbound.tasks import Quadratic
from fedbound.theory import get
from fedbound.theory.fednova import preparation
from fedbound.theory.fednova.accumulation import (closed_form_norms, fedavg_closed_forms,
                                                  fedprox_closed_forms)
from fedbound.theory.fednova.adapter import constants, surrogate_weights

LR = 0.02


def identity_task(p, d=3, seed=0):
    """F_i = 1/2 ||x - b_i||^2 with weights p: L = 1, beta^2 = 1 at any w,
    kappa^2 = sum_i w_i ||b_i - b_w||^2 (fednova.md 4.12)."""
    b = np.random.default_rng(seed).standard_normal((len(p), d))
    return Quadratic(np.stack([np.eye(d)] * len(p)), b, weights=p), b


clients = st.integers(2, 5).flatmap(lambda m: st.tuples(
    st.lists(st.floats(0.05, 1.0), min_size=m, max_size=m),
    st.lists(st.integers(1, 9), min_size=m, max_size=m)))


def normalized(raw):
    p = np.asarray(raw, dtype=float)
    return p / p.sum()


@settings(max_examples=30)
@given(clients)
def test_fedavg_matches_the_closed_forms(case):
    p, tau = normalized(case[0]), np.array(case[1])
    task, b = identity_task(p)
    k = constants(task.with_noise(0.5), None, "fedavg", {"lr": LR, "local_steps": tau.tolist()})
    closed = fedavg_closed_forms(p, tau)
    for name in ("tau_eff", "A", "B", "C"):
        assert k[name] == pytest.approx(float(closed[name]), rel=1e-12)
    w = closed["w"]
    assert k["chi2"] == pytest.approx(float(np.sum((p - w) ** 2 / w)), rel=1e-10, abs=1e-15)
    assert k["beta2"] == pytest.approx(1.0, rel=1e-12) and k["L"] == 1.0 and k["sigma"] == pytest.approx(0.5)
    assert k["kappa2"] == pytest.approx(float(w @ np.sum((b - w @ b) ** 2, 1)), rel=1e-9)
    assert (k["eta"], k["m"], k["a1_max"], k["tau_bar"]) == (LR, len(p), tau.max(), tau.mean())
    assert "A_tilde" not in k and "q" not in k


@settings(max_examples=30)
@given(clients, st.floats(0.5, 20.0))
def test_fedprox_matches_the_closed_forms(case, mu):
    p, tau = normalized(case[0]), np.array(case[1])
    task, _ = identity_task(p)
    k = constants(task, None, "fedprox", {"lr": LR, "proximal_mu": mu, "local_steps": tau.tolist()})
    closed = fedprox_closed_forms(p, tau, LR * mu)
    for name in ("tau_eff", "A", "B", "C"):
        assert k[name] == pytest.approx(float(closed[name]), rel=1e-10)


@settings(max_examples=30)
@given(clients)
def test_fednova_matches_its_preparation(case):
    """SGD clients: the scalars equal those the results prepare from (p_i, tau_i), Theorem 3's too."""
    p, tau = normalized(case[0]), np.array(case[1])
    task, _ = identity_task(p)
    k = constants(task, None, "fednova", {"lr": LR, "local_steps": tau.tolist()})
    prepared = preparation.fednova(p, tau)
    for name in ("tau_eff", "A", "B", "C", "A_tilde", "B_tilde", "C_tilde", "tau_tilde"):
        assert k[name] == pytest.approx(float(prepared[name]), rel=1e-12)
    assert k["chi2"] == 0.0


@pytest.mark.parametrize("rho", [0.3, 0.9])
def test_momentum_norms_are_the_closed_forms(rho):
    p, tau = np.array([0.2, 0.3, 0.5]), np.array([2, 5, 7])
    task, _ = identity_task(p)
    a1 = closed_form_norms("momentum", tau, rho=rho)[0]
    k = constants(task, None, "fednova", {"lr": LR, "local_steps": tau.tolist(), "momentum": rho})
    assert k["tau_eff"] == pytest.approx(float(p @ a1), rel=1e-12)
    assert k["a1_max"] == pytest.approx(float(a1.max()), rel=1e-12)
    tau_eff, w = surrogate_weights(task, "fedavg", {"lr": LR, "local_steps": tau.tolist(), "server_lr": 1.0})
    assert tau_eff == pytest.approx(float(p @ tau)) and np.allclose(w, p * tau / (p @ tau))


def test_server_lr_scales_tau_eff():
    """x + s (update (4)) is (4) with s tau_eff: tau_eff and A scale by s, w, B, C do not."""
    p = np.array([0.25, 0.75])
    task, _ = identity_task(p)
    one = constants(task, None, "fedavg", {"lr": LR, "local_steps": [2, 6]})
    two = constants(task, None, "fedavg", {"lr": LR, "local_steps": [2, 6], "server_lr": 2.0})
    assert two["tau_eff"] == 2 * one["tau_eff"] and two["A"] == pytest.approx(2 * one["A"], rel=1e-14)
    assert (two["B"], two["C"], two["chi2"], two["kappa2"]) == (one["B"], one["C"], one["chi2"], one["kappa2"])
    nova = constants(task, None, "fednova", {"lr": LR, "local_steps": [2, 6], "tau_eff": 3.0, "server_lr": 0.5})
    assert nova["tau_eff"] == 1.5


def test_accepted_by_the_results():
    """Theorem 1 for FedAvg gives the bound of its (p_i, tau_i) preparation; Theorem 3 for FedNova
    likewise; Corollary 3 takes FedNova's sampled run."""
    p, tau = np.array([0.1, 0.2, 0.3, 0.4]), [1, 3, 5, 8]
    task, _ = identity_task(p)
    noisy = task.with_noise(0.3)
    extra = {"T": np.array([10.0, 100.0]), "Delta": 2.0}
    avg = constants(noisy, None, "fedavg", {"lr": LR, "local_steps": tau})
    thm1 = get("fednova.thm1")
    scalar = thm1.evaluate("printed", **avg, **extra)
    vector = thm1.evaluate("printed", p_i=p, tau_i=tau, **extra,
                           **{c: avg[c] for c in ("L", "sigma", "eta", "beta2", "kappa2")})
    np.testing.assert_allclose(scalar.bound, vector.bound, rtol=1e-12)
    assert all(np.all(h) for h in scalar.conditions_hold.values())
    assert np.all(np.isfinite(get("fednova.thm2").evaluate("explicit", **avg, **extra).bound))
    nova = constants(noisy, None, "fednova", {"lr": LR, "local_steps": tau})
    thm3 = get("fednova.thm3")
    np.testing.assert_allclose(
        thm3.evaluate("printed", **nova, **extra).bound,
        thm3.evaluate("printed", p_i=p, tau_i=tau, **extra,
                      **{c: nova[c] for c in ("L", "sigma", "eta", "beta2", "kappa2")}).bound, rtol=1e-12)
    sampled = constants(noisy, None, "fednova", {"lr": LR, "local_steps": 4, "clients_per_round": 2,
                                                 "participation": "with-replacement"})
    assert sampled["q"] == 2
    assert np.all(np.isfinite(get("fednova.cor3").evaluate("printed", **sampled, **extra).bound))


@pytest.mark.parametrize("algorithm, options, message", [
    ("fednova", {"vr": "corrected"}, "variance reduction"),
    ("fednova", {"server_momentum": 0.5}, "server momentum"),
    ("fednova", {"momentum": 0.5, "nesterov": True}, "not nesterov"),
    ("fedavg", {"clients_per_round": 2}, "full participation"),
    ("fednova", {"clients_per_round": 2, "participation": "unbiased"}, "full participation"),
    ("fednova", {"clients_per_round": 2, "participation": "with-replacement", "local_steps": [1, 2, 3, 4]},
     "fixed tau_eff"),
    ("fedprox", {"proximal_mu": 100.0}, "lr mu <= 1"),
    ("fednova", {"proximal_mu": 0.1, "momentum": 0.5}, "at most one of proximal_mu, momentum and lr_decay"),
    ("fedavg", {"local_steps": [1, 2]}, "one per client"),
    ("fedprox", {}, "need the option.s. proximal_mu"),
])
def test_runs_outside_the_theorems_are_refused(algorithm, options, message):
    task, _ = identity_task(np.full(4, 0.25))
    with pytest.raises(ValidationError, match=message):
        constants(task, None, algorithm, {"lr": LR, **options})


def test_what_the_task_cannot_supply_is_named():
    task, _ = identity_task(np.full(4, 0.25))
    task.L = None
    with pytest.raises(ValidationError, match="FedNova's results need L"):
        constants(task, None, "fedavg", {"lr": LR})
    with pytest.raises(ValidationError, match="takes no network"):
        constants(identity_task(np.full(4, 0.25))[0], Network.from_topology("ring", 1, 4), "fedavg", {"lr": LR})
