"""Tests of the plugin junk, written with fedbound.testing: the algorithm against Theorem 1 on
Monte-Carlo runs (bound and rate), its exact contraction within the theorem's rate, the theorem on
every admissible constant, and the worst case of PEP below the theorem.

Run with ``pytest tests`` after ``pip install -e .`` (or with the package on sys.path)."""
from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import fedbound_junk  # noqa: F401  (registers the plugin when it is not installed)
from fedbound.algorithms import registry
from fedbound.pep import certify
from fedbound.tasks import Quadratic, make_task
from fedbound.testing import (admissible_constants, assert_bound_held, assert_linear_rate,
                              assert_matches_theory, quadratic_tasks)
from fedbound.theory import get
from fedbound.verify import exact_round
from fedbound_junk.theory import THM1

torch.set_num_threads(1)


def largest_step(task, local_steps: int, beta: float) -> float:
    """The largest gamma of the step condition (1) for ``task``."""
    return float(THM1.max_step(L=task.L, K=local_steps, beta=beta)[0])


def test_bound_and_rate_on_runs_with_noise_and_sampling():
    task = make_task("quadratic", n=8, d=4, seed=0, float64=True).with_noise(0.1)
    options = {"lr": largest_step(task, 2, 0.5), "local_steps": 2, "clients_per_round": 4,
               "server_momentum": 0.5}
    match = assert_matches_theory("junk", THM1, task, options=options, rounds=80, seeds=20)
    assert match.check.holds and match.measure == "dist2"


def test_bound_and_linear_rate_without_noise():
    """Identical optima (zeta^2 = 0), no noise, every client: (2) is a pure linear rate, and the
    measured contraction must be at most 1 - mu gamma K/4."""
    task = Quadratic.generate(6, 3, kappa=5.0, mu=0.5, heterogeneity=0.0, seed=1)
    options = {"lr": largest_step(task, 3, 0.5), "local_steps": 3, "server_momentum": 0.5}
    match = assert_matches_theory("junk", THM1, task, options=options, rounds=60, seeds=2)
    assert match.check.holds and match.rate == "linear"


@settings(max_examples=10, deadline=None)
@given(task=quadratic_tasks(n=st.integers(2, 6), d=st.integers(2, 4), kappa=(2.0, 10.0)),
       local_steps=st.integers(1, 4), beta=st.sampled_from([0.0, 0.3, 0.6, 0.9]),
       fraction=st.floats(0.05, 1.0))
def test_exact_contraction_is_within_the_theorem_rate(task, local_steps, beta, fraction):
    """The exact round map (autograd of one round, full participation, no noise) contracts
    towards its fixed point at rho, which does not depend on the clients' optima; with equal optima
    (2) says ||x_T - x*||^2 <= C (1 - mu gamma K/4)^T, so rho^2 <= 1 - mu gamma K/4. The run's
    squared distance to the exact fixed point contracts at a rate within that."""
    lr = fraction * largest_step(task, local_steps, beta)
    alg = registry.build("junk", task, lr=lr, local_steps=local_steps, server_momentum=beta)
    exact = exact_round(alg)
    rate = 1 - task.mu * lr * local_steps / 4
    assert exact.spectral_radius ** 2 <= rate * (1 + 1e-12)
    fixed = torch.as_tensor(exact.fixed_point, dtype=task.x0.dtype)
    state, errors = alg.init(), []
    for _ in range(60):
        state = alg.step(state)
        errors.append(float(torch.sum((state.x_g - fixed) ** 2)))
    assert_linear_rate(np.array(errors[20:]), at_most=rate, min_r2=0.9)


@settings(max_examples=50, deadline=None)
@given(constants=admissible_constants("junk.thm1"))
def test_the_bound_decreases_to_its_floor(constants):
    """Theorem 1 on every admissible constant (its own domains and step condition (1)): (2) does not
    increase from T to T + 1, and stays above its floor, the value as T -> infinity."""
    result, T = get("junk.thm1"), constants["T"]
    now, later = (float(result.bound(**{**constants, "T": t})) for t in (T, T + 1))
    floor = float(result.bound(**{**constants, "D": 0.0}))
    assert_bound_held(later, now, rtol=1e-12, name="bound(T + 1) <= bound(T)")
    assert_bound_held(floor, later, rtol=1e-12, name="floor <= bound(T + 1)")


def test_pep_worst_case_is_below_the_theorem():
    cert = certify("junk", R=2, local_steps=2, lr=0.01, server_momentum=0.5, zeta=0.3)
    assert cert.theory_applies and cert.worst_case <= cert.theory
    assert cert.lower_bound <= cert.worst_case * (1 + 1e-6)
