"""Monte-Carlo checks of FedNova's Theorems 1 (97), 2 (10), 3 (147) and Corollary 3 (182) (seed 001_530825e753327090.txt
[L155-L175, L612-L631]) on the stochastic quadratic of fednova.md 4.3(a): m = 4, H_i = I (L = 1),
e_i ~ N(0, I) in R^2, tau = (1, 2, 5, 10), gradient noise with E||noise||^2 = sigma^2 = 0.1,
x^(0,0) = 3 * 1, eta = 0.02, T = 300.

The R Monte-Carlo replicates run as R independent coordinate blocks of one run: with H_i = I, linear
local solvers and deterministic aggregation factors every coordinate evolves on its own, so a run in
R^(2R) whose clients hold e_i repeated in every block and whose Gaussian noise has E||noise||^2 =
R sigma^2 (sigma^2/2 per coordinate) is R independent runs of the 2-d problem. The checked quantity
is (1/T) sum_{t<T} E||grad F~(x^(t,0))||^2 (>= min_t), with a 95% Student-t upper limit below the
bound, evaluated by the registered results ``fednova.thm1`` and ``fednova.thm2`` with the
constants of the algorithm's weights (Assumption 3 at w, beta^2 = 1 since H_i = I).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from fedbound.algorithms import FedAvg, FedNova, run
from fedbound.theory.fednova.adapter import assumption3
from fedbound.tasks import Quadratic
from fedbound.theory.fednova.accumulation import theorem_constants
from fedbound.theory.registry import get
from fedbound.verify.montecarlo import mean_ci

M, D, R, T, ETA, SIGMA2 = 4, 2, 200, 300, 0.02, 0.1
TAU = np.array([1, 2, 5, 10])


def replicated_task(blocks=R):
    e = np.random.default_rng(0).standard_normal((M, D))
    task = Quadratic(np.stack([np.eye(D * blocks)] * M), np.tile(e, (1, blocks)),
                     x0=np.full(D * blocks, 3.0))
    return task, e


def block_grad_sq(X: torch.Tensor, centre: np.ndarray, blocks=R) -> np.ndarray:
    """||grad F~||^2 = ||x - centre||^2 per replicate block, (T, R), for F~ = sum_i w_i 1/2||x - e_i||^2."""
    G = X.numpy().reshape(X.shape[0], blocks, D) - centre
    return np.sum(G * G, axis=2)


@pytest.mark.parametrize("name", ["fedavg", "fednova"])
def test_theorem1_and_theorem2_hold_by_monte_carlo(name):
    task, e = replicated_task()
    build = FedAvg if name == "fedavg" else FedNova
    alg = build(task.with_noise(float(np.sqrt(R * SIGMA2))), lr=ETA, local_steps=TAU, seed=0)
    at_w = assumption3(task, name, {"lr": ETA, "local_steps": TAU})
    w, p = at_w["w"], task.arrays()[2]
    X = run(alg, T).x_g[:T]
    surrogate = mean_ci(block_grad_sq(X, w @ e).mean(axis=0))
    true = mean_ci(block_grad_sq(X, p @ e).mean(axis=0))
    kappa2 = float(w @ np.sum((e - w @ e) ** 2, axis=1))        # Assumption 3 at w, beta^2 = 1, per block
    constants = theorem_constants(p, [np.ones(t) for t in TAU],
                                  "mean" if name == "fedavg" else "normalized")
    delta = 0.5 * float(np.sum((3.0 - w @ e) ** 2))            # F~(x0) - F~_inf, one block
    common = {"eta": ETA, "L": 1.0, "sigma": np.sqrt(SIGMA2), "T": T, "Delta": delta,
              "kappa2": kappa2, "beta2": 1.0}
    thm1 = get("fednova.thm1").evaluate(
        "printed", **common, **{k: constants[k] for k in ("tau_eff", "A", "B", "C", "m")})
    assert all(bool(v) for v in thm1.conditions_hold.values()), thm1.conditions_hold
    assert float(surrogate.high) <= float(thm1.bound), (surrogate.high, thm1.bound)
    thm2 = get("fednova.thm2").evaluate(
        "explicit", **common, chi2=at_w["chi2"], **{k: constants[k] for k in ("tau_eff", "A", "B", "C", "m")})
    assert float(true.high) <= float(thm2.bound), (true.high, thm2.bound)
    if name == "fedavg":   # the floor 2 chi^2 kappa^2 of (10) is positive: w != p
        assert float(thm2.extras["floor"]) > 0


def test_theorem3_holds_with_random_local_steps_by_monte_carlo():
    """Theorem 3 (147) [L806-L817] (fednova.md 4.9 check (a)): FedNova with tau_i(t) re-drawn every
    round (Gaussian, mean 5, std 3, clipped to [1, 12]) and a fixed server tau_eff = 5 (the proof's
    constant tau_eff, 4.9 flag); A~, B~, C~ are the time averages of (143)-(145) over the drawn
    tau_i(t) (vanilla SGD: ||a||_1 = ||a||_2^2 = tau, a_{-1} = 1), a1_max their largest ||a||_1."""
    from fedbound.algorithms import GaussianSteps
    from fedbound.theory.fednova.accumulation import time_averaged_abc

    task, e = replicated_task()
    alg = FedNova(task.with_noise(float(np.sqrt(R * SIGMA2))), lr=ETA,
                  local_steps=GaussianSteps(5.0, 3.0, 1, 12), tau_eff=5.0, seed=0)
    taus = []
    X = run(alg, T, callback=lambda state: taus.append(state.tau.numpy().astype(float))).x_g[:T]
    p = task.arrays()[2]
    lhs = mean_ci(block_grad_sq(X, p @ e).mean(axis=0))
    a1 = np.array(taus)
    avg = time_averaged_abc(p, a1, a1, np.ones_like(a1), 5.0)
    kappa2 = float(p @ np.sum((e - p @ e) ** 2, axis=1))
    thm3 = get("fednova.thm3").evaluate(
        "printed", eta=ETA, L=1.0, sigma=np.sqrt(SIGMA2), T=T, Delta=0.5 * float(np.sum((3.0 - p @ e) ** 2)),
        kappa2=kappa2, beta2=1.0, tau_eff=5.0, m=M, A_tilde=avg["A_tilde"], B_tilde=avg["B_tilde"],
        C_tilde=avg["C_tilde"], a1_max=avg["a1_max"])
    assert len(np.unique(a1)) > 3                                   # the steps did vary
    assert all(bool(v) for v in thm3.conditions_hold.values()), thm3.conditions_hold
    assert float(lhs.high) <= float(thm3.bound), (lhs.high, thm3.bound)


def test_corollary3_holds_with_sampling_with_replacement_by_monte_carlo():
    """Corollary 3 (182) [L835-L955] (fednova.md 4.10): q = 2 clients drawn with replacement by p_i
    each round, averaged with weights 1/q (scheme (i), App. G (153)), fixed tau_eff = sum_i p_i tau_i,
    eta = 0.01 (the conditions of [L920, L930] computed). The sampling is shared by the coordinate
    blocks of one run, so the replicates are 16 runs (seeds) of 12 blocks each, i.i.d. across seeds."""
    from fedbound.network.sampling import WithReplacement

    blocks, seeds, eta = 12, 16, 0.01
    task, e = replicated_task(blocks)
    p = task.arrays()[2]
    tau_eff = float(p @ TAU)
    per_seed = []
    for seed in range(seeds):
        alg = FedNova(task.with_noise(float(np.sqrt(blocks * SIGMA2))), lr=eta, local_steps=TAU,
                      tau_eff=tau_eff, participation=WithReplacement(2), seed=seed)
        per_seed.append(block_grad_sq(run(alg, T).x_g[:T], p @ e, blocks).mean())
    lhs = mean_ci(np.array(per_seed))
    const = theorem_constants(p, [np.ones(t) for t in TAU], "normalized", tau_eff=tau_eff)
    cor3 = get("fednova.cor3").evaluate(
        "printed", eta=eta, L=1.0, sigma=np.sqrt(SIGMA2), T=T, q=2, beta2=1.0, tau_eff=tau_eff,
        Delta=0.5 * float(np.sum((3.0 - p @ e) ** 2)), kappa2=float(p @ np.sum((e - p @ e) ** 2, axis=1)),
        B=const["B"], C=const["C"])
    assert all(bool(v) for v in cor3.conditions_hold.values()), cor3.conditions_hold
    assert float(lhs.high) <= float(cor3.bound), (lhs.high, cor3.bound)
