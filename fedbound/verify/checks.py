r"""Named checks of SD-GT's theory against runs (papers/sdgt.md 4.2-4.6 "Numerical check",
7.4): each function takes an :class:`SDGTSetting` and returns a list of
:class:`~fedbound.verify.check.Check` (one per variant where the theory has variants).

* :func:`fixed_point`: sigma = 0, any sampling: SD-GT reaches x* (exactness, [DERIVED] fixed point
  of papers/sdgt.md 2.1; 7.4 item 1).
* :func:`server_recursion`: the server-model recursion (40) [L684],
  :math:`E[x_g^{t+1}] - E[x_g^t] = -\gamma (1/n) \sum_k \sum_i E\, g_i^{t,k}` (exact every round with
  full participation; a Monte-Carlo mean otherwise).
* :func:`linear_rate`: sigma = 0, full participation, quadratic task: the measured contraction of
  :math:`\|x_g^t - x^\star\|` equals the spectral radius of the exact operator
  (:mod:`fedbound.verify.operator`), and its square is at most Theorem 3's
  :math:`1 - \mu K\gamma/4` (for the squared distance, (98)).
* :func:`thm3_bound`: Theorem 3's (98), :math:`\mathcal{L}_{T+1} \le (1-\mu K\gamma/4)^T
  \mathcal{L}_1 + \|(I-A)^{-1}b\|_1`, per variant, for gamma <= gamma_bar, with Monte-Carlo
  estimates of :math:`\mathcal{L}_t` (:mod:`fedbound.verify.quantities`), and its premise
  :math:`\|A\|_1 \le 1 - \mu K\gamma/4` at the run's constants.
* :func:`average_bound`: Theorem 1 (76) and Theorem 2 (89), running averages against the bound
  per variant.
* :func:`lemmas`: one-step ratios of Lemmas 1-6 (:mod:`fedbound.verify.lemmas`).
* :func:`noise_floor`: the exact stationary error under gradient noise against Theorem 3's floor
  (:mod:`fedbound.verify.stationary`), plus a Monte-Carlo check of the stationary value.
* :func:`thm1_estimated_bound`: Theorem 1 (76) on a task that knows neither L nor f* (the MLP
  classifier): L estimated by :func:`estimate_smoothness` (client Hessian norms along the run),
  E1 bracketed by f* in [0, min_t f(xbar_g^t)].

``fedbound verify sdgt CHECK --task T`` takes quadratic, lsq, lsq-convex (exact constants) and
mlp-gmm, mlp-digits; a check whose theorem or setting does not cover the task (Theorems 2-3 on the
non-convex MLP, Theorem 3 with mu = 0, the exact-operator checks without x*) ends "not applicable:
CONDITION" naming what is missing, never a verdict.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Annotated, Sequence

import numpy as np
import torch
from scipy import stats

from fedbound.algorithms.run import run
from fedbound.algorithms.semidecentralized.sdgt import SDGT
from fedbound import resources, validate
from fedbound.argtypes import Count, NonNegative, Positive, Range, Seed
from fedbound.errors import require
from fedbound.network import Network
from fedbound.network.sampling import check_h, p_from_h
from fedbound.tasks import Task
from fedbound.theory import get
from fedbound.theory.sdgt import adapter as sdgt_adapter
from fedbound.algorithms.options import CLIENTS_PER_SUBNET
from fedbound.registry import integer_option, number_option
from fedbound.verify.check import Check, bound_check, equality_check, interval_check, not_applicable
from fedbound.verify.registry import ROUNDS, SEEDS, SIGMA, VerifyCheck, register
from fedbound.verify.lemmas import lemma_checks
from fedbound.stats import Estimate, mean_ci
from fedbound.verify.montecarlo import monte_carlo
from fedbound.verify.operator import sdgt_operator
from fedbound.verify.quantities import error_quantities, record_sdgt
from fedbound.verify.contraction import renormalized_contraction
from fedbound.verify.rates import fit_log_linear
from fedbound.verify.stationary import stationary_moments


@dataclass(frozen=True)
class SDGTSetting:
    """What an SD-GT run is made of: a noise-free task, a network, K, gamma, per-subnet sample
    sizes h (None = full participation) and the gradient-noise std sigma added to the task."""

    task: Task
    network: Network
    K: int
    gamma: float
    h: int | np.ndarray | None = None
    sigma: float = 0.0

    def __post_init__(self):
        """Every field checked (validate): a Task and a Network with the same n, K >= 1, gamma > 0,
        h within 1..m_s per subnet (or None), sigma >= 0."""
        require(isinstance(self.task, Task), f"task must be a fedbound Task, got {type(self.task).__name__}")
        require(isinstance(self.network, Network),
                f"network must be a fedbound Network, got {type(self.network).__name__}")
        require(self.network.n == self.task.n,
                f"the network has {self.network.n} clients but the task has n = {self.task.n}")
        set_ = object.__setattr__
        set_(self, "K", validate.integer("K", self.K, low=1, high=10 ** 6))
        set_(self, "gamma", validate.number("gamma", self.gamma, low=0.0, low_open=True))
        set_(self, "sigma", validate.number("sigma", self.sigma, low=0.0, high=1e100))
        if self.h is not None:
            check_h(self.h, self.network.m)

    @property
    def noisy_task(self):
        return self.task.with_noise(self.sigma) if self.sigma > 0 else self.task

    @property
    def full_participation(self) -> bool:
        return self.h is None or bool(np.all(np.broadcast_to(self.h, self.network.m.shape)
                                             == self.network.m))

    @property
    def options(self) -> dict:
        """The run's options by the registry's names (``lr`` = gamma, ``local_steps`` = K,
        ``clients_per_subnet`` = h)."""
        return {"lr": self.gamma, "local_steps": self.K, "clients_per_subnet": self.h}

    def algorithm(self, seed: Seed = 0, record_inner: bool = False) -> SDGT:
        return SDGT(self.noisy_task, self.network, **self.options, seed=seed, record_inner=record_inner)

    def constants(self) -> dict[str, float]:
        """{L, mu, sigma, p, q, n, K, gamma} of the run (:mod:`fedbound.theory.sdgt.adapter`)."""
        return sdgt_adapter.constants(self.noisy_task, self.network, "sdgt", self.options)

    def describe(self) -> dict:
        return {"n": self.task.n, "d": self.task.d, "S": self.network.S,
                "m": self.network.m.tolist(), "K": self.K, "gamma": self.gamma,
                "h": None if self.h is None else np.broadcast_to(self.h, self.network.m.shape).tolist(),
                "sigma": self.sigma}


def _rounds(setting: SDGTSetting, rounds, name: str = "rounds") -> int:
    """``rounds`` as an int >= 1 whose run fits the memory budget."""
    rounds = validate.integer(name, rounds, low=1)
    resources.require_run_memory("an SD-GT verification run", rounds, setting.task.n, setting.task.d)
    return rounds


def fixed_point(setting: SDGTSetting, rounds: int = 600, seed: int = 0,
                tol: float = 1e-10) -> list[Check]:
    """Noise-free SD-GT reaches x*: ||x_g^T - x*|| and max_i ||x_i^T - x*|| <= tol max(1, ||x*||)."""
    setting = replace(setting, sigma=0.0)
    rounds = _rounds(setting, rounds)
    tol = validate.number("tol", tol, low=0.0, low_open=True)
    alg = setting.algorithm(validate.seed(seed))
    traj = run(alg, rounds)
    x_star = torch.as_tensor(setting.task.x_star, dtype=torch.float64)
    dist = np.sqrt(traj.dist2)
    clients = float(torch.max(torch.linalg.vector_norm(traj.final_state.X - x_star, dim=1)))
    scale = max(1.0, float(torch.linalg.vector_norm(x_star)))
    keep = np.flatnonzero(dist > 1e3 * tol * scale)
    slope = fit_log_linear(keep, dist[keep]) if keep.size >= 3 else None
    return [bound_check("fixed-point", max(dist[-1], clients), tol * scale, slope=slope,
                        rtol=0.0, global_distance=dist[-1], max_client_distance=clients,
                        rounds=rounds, setting=setting.describe())]


def server_recursion(setting: SDGTSetting, rounds: int = 20, seeds: int = 200,
                     tol: float = 1e-12) -> list[Check]:
    r"""(40): u^t = x_g^{t+1} - x_g^t + gamma (1/n) sum_k sum_i g_i^{t,k} has E u^t = 0.

    Full participation: u^t = 0 for every realisation (also with noise), checked to ``tol`` x
    scale. Partial participation: every coordinate's Monte-Carlo mean must be within the
    Bonferroni-corrected Student-t critical value of 0 (family-wise level 5%); the measured number is
    the largest ``|t|`` statistic, the predicted one the critical value.
    """
    seeds = 1 if setting.full_participation and setting.sigma == 0 else seeds
    record = record_sdgt(lambda s: setting.algorithm(s, record_inner=True), rounds, seeds)
    n = record.Y.shape[2]
    step = record.x_g[:, 1:] - record.x_g[:, :-1]                       # (R, T, d)
    drift = setting.gamma / n * record.inner_G.sum(axis=(2, 3))         # (R, T, d)
    u = step + drift
    details = {"rounds": rounds, "seeds": record.seeds, "setting": setting.describe()}
    if setting.full_participation:
        scale = max(1.0, float(np.max(np.abs(step))))
        return [bound_check("server-recursion", float(np.max(np.abs(u))), tol * scale, rtol=0.0,
                            mode="exact per realisation (full participation)", **details)]
    est = mean_ci(u)
    with np.errstate(divide="ignore", invalid="ignore"):
        tstat = np.where(est.stderr > 0, np.abs(est.mean) / est.stderr,
                         np.where(np.abs(est.mean) > tol, np.inf, 0.0))
    critical = float(stats.t.ppf(1 - 0.05 / (2 * u[0].size), record.seeds - 1))
    return [bound_check("server-recursion", float(np.max(tstat)), critical, rtol=0.0,
                        mode="Monte-Carlo mean, Bonferroni max |t| at family-wise level 0.05",
                        max_abs_mean=float(np.max(np.abs(est.mean))), **details)]


def linear_rate(setting: SDGTSetting, rounds: int = 400, tol: float = 1e-6,
                floor: float = 1e-9, power_rounds: int = 5000) -> list[Check]:
    """Measured contraction vs the operator's spectral radius vs Theorem 3's 1 - mu K gamma/4.

    Forces full participation and sigma = 0 (the operator is exact there). Returns three checks:
    ``linear-rate:operator`` (``|c - rho(M|_V)|`` <= tol, c the per-round contraction of SD-GT's own
    steps measured by the power method over ``power_rounds`` rounds,
    :func:`~fedbound.verify.contraction.renormalized_contraction`; a plain run of ``rounds`` rounds
    gives the log-linear slope fit down to ``floor``) and
    ``linear-rate:thm3`` (c^2 <= 1 - mu K gamma/4) and ``linear-rate:thm3-operator``
    (rho(M|_V)^2 <= 1 - mu K gamma/4, exact, so also meaningful at gamma <= gamma_bar where the
    contraction is too slow to measure), one per variant of Theorem 3; a variant whose gamma_bar
    (Theorem 3 [L303-L304], (97) [L1029]) is below the run's gamma gives "not applicable: gamma <=
    gamma_bar (VARIANT) = ..." for both, never a verdict.
    """
    setting = replace(setting, sigma=0.0, h=None)
    rounds, power_rounds = _rounds(setting, rounds), _rounds(setting, power_rounds, "power_rounds")
    tol = validate.number("tol", tol, low=0.0, low_open=True)
    floor = validate.number("floor", floor, low=0.0, high=1.0, low_open=True, high_open=True)
    alg = setting.algorithm()
    op = sdgt_operator(alg)
    traj = run(alg, rounds)
    dist = np.sqrt(traj.dist2)
    c, error, measured_rounds = renormalized_contraction(alg, rounds=power_rounds)
    keep = np.flatnonzero(dist >= floor * dist[0])
    tail = keep[keep >= keep.size // 2]
    slope = fit_log_linear(tail, dist[tail]) if tail.size >= 3 else None
    k = setting.constants()
    rate = 1 - k["mu"] * k["K"] * k["gamma"] / 4
    thm3 = get("sdgt.thm3")
    caps = {v: float(thm3.max_step(v, **k)[0]) for v in thm3.variants}
    details = {"spectral_radius": op.spectral_radius, "top_eigenvalues": op.eigenvalues[:4],
               "power_method_rounds": measured_rounds, "rounds": rounds,
               "setting": setting.describe()}
    out = [equality_check("linear-rate:operator", c, op.spectral_radius, tol, measurement_error=error,
                          slope=slope, **details)]
    for v, cap in caps.items():
        if k["gamma"] > cap:   # Theorem 3 says nothing about this step: never "holds"
            condition = f"gamma <= gamma_bar ({v}) = {cap:.6g} (gamma = {k['gamma']:.6g})"
            out += [not_applicable(name, [condition], variant=v, gamma_bar=cap, **details)
                    for name in ("linear-rate:thm3", "linear-rate:thm3-operator")]
            continue
        out += [bound_check("linear-rate:thm3", c ** 2, rate, variant=v, slope=slope, contraction=c,
                            quantity="measured contraction squared (Theorem 3 bounds squared distances)",
                            gamma_bar=cap, theorem_applies=True, **details),
                bound_check("linear-rate:thm3-operator", op.spectral_radius ** 2, rate, variant=v,
                            quantity="rho(M|_V)^2, exact (no measurement)", gamma_bar=cap,
                            theorem_applies=True, **details)]
    return out


def thm3_step(setting: SDGTSetting) -> float:
    """The largest gamma admissible for every variant of Theorem 3 (min over variants of
    gamma_bar)."""
    k = setting.constants()
    thm3 = get("sdgt.thm3")
    return float(min(thm3.max_step(v, **k)[0] for v in thm3.variants))


def thm3_bound(setting: SDGTSetting, rounds: int = 100, seeds: int = 50,
               variants: Sequence[str] | None = None) -> list[Check]:
    r"""Theorem 3 (98) per variant: measured :math:`\mathcal{L}_{T+1}` (Monte Carlo, with its
    interval) against :math:`(1-\mu K\gamma/4)^T \mathcal{L}_1 + \|(I-A)^{-1}b\|_1` at the measured
    :math:`\mathcal{L}_1`, for every T = 1..rounds (``thm3-bound``); and the premise of (98) the
    proof derives from gamma <= gamma_bar, :math:`\|A\|_1 \le 1 - \mu K\gamma/4` (95), at the run's
    constants (``thm3-premise``, exact numbers; flag F18). The setting's gamma must be <= gamma_bar
    of the variant for the theorem to apply (``details['theorem_applies']``); use
    :func:`thm3_step`."""
    seeds = 1 if setting.full_participation and setting.sigma == 0 else seeds
    record = record_sdgt(lambda s: setting.algorithm(s, record_inner=True), rounds, seeds)
    q = error_quantities(record, setting.noisy_task)
    lyap = q.lyapunov_estimate(setting.gamma)
    k = setting.constants()
    thm3 = get("sdgt.thm3")
    T = np.arange(1, rounds + 1)
    lyap1 = float(max(lyap.mean[0], 0.0))
    rate = 1 - k["mu"] * k["K"] * k["gamma"] / 4
    out = []
    for name in variants or thm3.variants:
        ev = thm3.evaluate(name, **k, T=T, Lyap1=lyap1)
        conditions = {c: bool(np.all(h)) for c, h in ev.conditions_hold.items()}
        applies = all(conditions.values())
        numbers = {key: float(ev.extras[key].flat[0]) for key in ("floor", "A_l1", "spectral_radius")}
        out.append(bound_check(
            "thm3-bound", lyap[1:], ev.bound, variant=name, rounds=rounds, seeds=record.seeds,
            theorem_applies=applies, conditions_hold=conditions,
            gamma_bar=float(np.min(list(ev.caps.values()))), Lyap1=lyap1, rate=rate,
            **numbers, setting=setting.describe()))
        out.append(bound_check(
            "thm3-premise", numbers["A_l1"], rate, variant=name, rtol=1e-12,
            quantity="||A||_1 (max column sum) against 1 - mu K gamma/4, (95)",
            theorem_applies=applies, spectral_radius_A=numbers["spectral_radius"]))
    return out


#: result -> (averaged ErrorQuantities field, constant of the initial value, field giving it)
AVERAGE_BOUNDS = {"sdgt.thm1": ("G", "E1", "E"), "sdgt.thm2": ("E", "R", "D")}


def step_for(setting: SDGTSetting, result_id: str, variants: Sequence[str] | None = None, **fixed) -> float:
    """The largest gamma admissible for every (given) variant of a result."""
    result = get(result_id)
    k = {**setting.constants(), **fixed}
    return float(min(result.max_step(v, **k)[0] for v in variants or result.variants))



def _running_average(est: Estimate, rounds: int, K: int) -> tuple[np.ndarray, Estimate]:
    """The horizons T > K and the running averages (1/T) sum_{t <= T} of a per-round estimate (its
    mean and interval ends), as the average bounds of Theorems 1-2 read them."""
    counts = np.arange(1, rounds + 1)
    T = counts[counts > K]
    require(T.size > 0, f"the theorem needs T > K = {K} rounds, got rounds = {rounds}")

    def running(values):
        return (np.cumsum(np.asarray(values)[:rounds]) / counts)[T - 1]

    return T, Estimate(running(est.mean), running(est.stderr), running(est.low), running(est.high),
                       est.samples, est.confidence, est.method)


def average_bound(setting: SDGTSetting, result_id: str, rounds: int = 100, seeds: int = 50,
                  variants: Sequence[str] | None = None, **fixed) -> list[Check]:
    r"""Theorem 1 (``"sdgt.thm1"``, (76): :math:`(1/T)\sum_t E\|\nabla f(\bar x_g^t)\|^2`) or
    Theorem 2 (``"sdgt.thm2"``, (89): :math:`(1/T)\sum_t \mathcal{E}_t`) per variant, for every
    T = K+1..rounds (both theorems assume T > K), at the measured initial value (E1 =
    :math:`\mathcal{E}_1`, R = :math:`\|\bar x_g^1 - x^\star\|^2`). ``fixed`` supplies constants
    the run does not determine (Theorem 1: c2, and D, D5 for its printed variant). The interval
    of a running average is the average of the per-round intervals (conservative)."""
    field, initial, initial_field = AVERAGE_BOUNDS[result_id]
    result = get(result_id)
    seeds = 1 if setting.full_participation and setting.sigma == 0 else seeds
    record = record_sdgt(lambda s: setting.algorithm(s, record_inner=True), rounds, seeds)
    q = error_quantities(record, setting.noisy_task)
    est = getattr(q, field)
    T, average = _running_average(est, rounds, setting.K)
    k = {**setting.constants(), **fixed,
         initial: float(max(getattr(q, initial_field).mean[0], 0.0))}
    out = []
    for name in variants or result.variants:
        ev = result.evaluate(name, **k, T=T)
        conditions = {c: bool(np.all(h)) for c, h in ev.conditions_hold.items()}
        out.append(bound_check(
            result_id.replace("sdgt.", "") + "-bound", average, ev.bound, variant=name,
            rounds=T, seeds=record.seeds, theorem_applies=all(conditions.values()),
            conditions_hold=conditions, **{initial: k[initial]}, setting=setting.describe()))
    return out


def lemmas(setting: SDGTSetting, rounds: int = 15, seeds: int = 200) -> list[Check]:
    """One-step LHS/RHS checks of Lemmas 1-6, printed and re-derived variants."""
    seeds = 1 if setting.full_participation and setting.sigma == 0 else seeds
    record = record_sdgt(lambda s: setting.algorithm(s, record_inner=True), rounds, seeds)
    q = error_quantities(record, setting.noisy_task)
    checks = lemma_checks(q, setting.constants())
    for c in checks:
        c.details.update(seeds=record.seeds, setting=setting.describe())
    return checks


def lemma_step(setting: SDGTSetting) -> float:
    """Half the smallest step-size cap of Lemmas 1-6 (some caps are strict)."""
    k = setting.constants()
    caps = [float(get(f"sdgt.lemma{i}").max_step(**k)[0]) for i in (1, 2, 3, 4, 5)]
    return 0.5 * min(caps)


def _stationary_dist2(setting: SDGTSetting, burn: int, seed: int) -> float:
    """One seed's mean of ||x_g - x*||^2 over rounds burn+1..2 burn of a run started at x*."""
    x_star = setting.task.x_star
    alg = setting.algorithm(seed)
    state = alg.init(x0=x_star)
    window = []
    for r in range(2 * burn):
        state = alg.step(state)
        if r >= burn:
            window.append(float(torch.sum((state.x_g - x_star) ** 2)))
    return float(np.mean(window))


def noise_floor(setting: SDGTSetting, mc_gamma: Positive | None = None, seeds: int = 50,
                variants: Sequence[str] | None = None, scaling_tol: NonNegative = 0.2,
                max_rounds: Count = 4000) -> list[Check]:
    r"""Stationary error under gradient noise (full participation forced, sigma > 0).

    * ``noise-floor`` per variant: the exact stationary :math:`\mathcal{L}_\infty`
      (:func:`~fedbound.verify.stationary.stationary_moments`) at the setting's gamma against
      Theorem 3's floor :math:`\|(I-A)^{-1}b\|_1` (inf where rho(A) >= 1); the theorem implies it
      for gamma <= gamma_bar (``details['theorem_applies']``).
    * ``noise-floor:monte-carlo``: at ``mc_gamma`` (default the setting's gamma), the exact
      stationary :math:`E\|x_g - x^\star\|^2` lies in the confidence interval of its Monte-Carlo
      estimate (runs started at x*, averaged over rounds burn..2 burn with rho^(2 burn) = 1e-8).
    * ``noise-floor:gamma-scaling``: the log2 ratio of the exact stationary
      :math:`E\|x_g - x^\star\|^2` at mc_gamma and mc_gamma/2 is within ``scaling_tol`` of 1 (the
      notes' "halving gamma roughly halves the floor", Fig. 13; exactly 1 only as gamma -> 0).
    """
    require(setting.sigma > 0, f"noise-floor needs gradient noise sigma > 0, got {setting.sigma}")
    setting = replace(setting, h=None)
    k = setting.constants()
    exact = stationary_moments(setting.algorithm(), setting.sigma)
    thm3 = get("sdgt.thm3")
    checks = []
    for name in variants or thm3.variants:
        ev = thm3.evaluate(name, **k, T=1, Lyap1=0.0)
        conditions = {c: bool(h) for c, h in ev.conditions_hold.items()}
        checks.append(bound_check(
            "noise-floor", exact.lyapunov, float(ev.extras["floor"]), variant=name,
            quantity="exact stationary Lyapunov value Gamma + gamma (Y + Z)",
            theorem_applies=all(conditions.values()), stationary=exact.to_dict(),
            spectral_radius_A=float(ev.extras["spectral_radius"]), setting=setting.describe()))
    mc = replace(setting, gamma=setting.gamma if mc_gamma is None else float(mc_gamma))
    mc_alg = mc.algorithm()
    mc_exact = stationary_moments(mc_alg, mc.sigma)
    burn = int(np.ceil(np.log(1e-8) / (2 * np.log(mc_exact.spectral_radius))))
    require(burn <= max_rounds // 2, f"mc_gamma = {mc.gamma:g} mixes too slowly for a Monte-Carlo "
            f"check (needs {2 * burn} > {max_rounds} rounds); give a larger mc_gamma")
    checks.append(interval_check(
        "noise-floor:monte-carlo", monte_carlo(functools.partial(_stationary_dist2, mc, burn), seeds,
                                                nonnegative=True),
        mc_exact.dist2,
        quantity="stationary E||x_g - x*||^2: Monte-Carlo mean vs exact", seeds=seeds,
        rounds=2 * burn, burn_in=burn, setting=mc.describe()))
    half = stationary_moments(replace(mc, gamma=mc.gamma / 2).algorithm(), mc.sigma)
    checks.append(equality_check(
        "noise-floor:gamma-scaling", float(np.log2(mc_exact.dist2 / half.dist2)), 1.0, scaling_tol,
        quantity="log2 of stationary E||x_g - x*||^2 at gamma over gamma/2",
        at_gamma=mc_exact.to_dict(), at_half_gamma=half.to_dict(), setting=mc.describe()))
    return checks


def estimate_smoothness(task: Task, points: np.ndarray, iterations: Annotated[int, Range(1, 10_000)] = 30,
                        seed: Seed = 0, eps: Positive = 1e-5) -> float:
    """An estimate of Assumption 1's L [L218-L221] for a task that does not know it (the MLP): the
    largest spectral norm of the clients' Hessians at ``points`` (rows of a (P, d) array), by power
    iteration on every client at once with Hessian-vector products from central differences of the
    task's gradients, (grad f_i(x + eps v) - grad f_i(x - eps v))/(2 eps). L is a supremum over all
    x, so this is a lower estimate of it along the points, not a certified constant."""
    require(iterations >= 1, f"iterations must be >= 1, got {iterations}")
    gen = torch.Generator(device="cpu").manual_seed(validate.seed(seed))
    points = np.atleast_2d(np.asarray(points, dtype=float))
    require(points.ndim == 2 and points.shape[1] == task.d and points.shape[0] >= 1,
            f"points must be models of the task, shape (P, d = {task.d}) or (d,), got {points.shape}")
    best = 0.0
    for x in points:
        X = torch.as_tensor(np.repeat(x[None], task.n, axis=0), dtype=torch.float64)
        V = torch.randn(X.shape, generator=gen, dtype=torch.float64)
        V /= torch.linalg.vector_norm(V, dim=1, keepdim=True)
        norms = torch.zeros(task.n, dtype=torch.float64)
        for _ in range(iterations):
            HV = (task.grad(X + eps * V) - task.grad(X - eps * V)) / (2 * eps)
            norms = torch.linalg.vector_norm(HV, dim=1)
            V = HV / torch.clamp(norms, min=1e-300)[:, None]
        best = max(best, float(norms.max()))
    return best


def _server_models(setting: SDGTSetting, rounds: int, seed: int) -> tuple:
    """One seed's server models x_g^1 .. x_g^{rounds+1} (numpy, (rounds + 1, d))."""
    alg = setting.algorithm(seed)
    state = alg.init()
    xs = [state.x_g]
    for _ in range(rounds):
        state = alg.step(state)
        xs.append(state.x_g)
    return (torch.stack(xs).numpy(),)


def thm1_estimated_bound(setting: SDGTSetting, rounds: int = 60, seeds: int = 10,
                         c2: Annotated[float, Range(2.0, low_open=True)] = 2.01, L: Positive | None = None,
                         variants: Sequence[str] = ("rederived",), **fixed) -> list[Check]:
    r"""Theorem 1 (76) on a task whose L and f* are not known (the MLP classifier, non-convex):
    :math:`(1/T)\sum_t \|\nabla f(\bar x_g^t)\|^2` (x-bar the Monte-Carlo mean over seeds, a
    jackknife interval, as :func:`average_bound`) against the bound for every T = K+1..rounds.

    * L: :func:`estimate_smoothness` at x^1 and at the mean models of 5 rounds of the run (or the
      given ``L``), documented in ``details['L_estimate']``; sigma: the injected Gaussian noise (the
      task's own gradients are exact).
    * E1 = f(x^1) - f* with f* unknown: f* >= 0 (cross-entropy) gives E1 <= f(x^1), and f* <= f(xbar_g^t)
      for every t gives E1 >= f(x^1) - min_t f(xbar_g^t). The bound increases with E1, so the
      verdict is ``holds`` when the measured interval is below the bound at the lower E1,
      ``violated`` when it is above the bound at the upper E1, ``inconclusive`` otherwise.
    * ``not applicable`` (naming the conditions) where gamma exceeds a cap at the estimated L.
    """
    from fedbound.sweep import evaluate
    from fedbound.verify.quantities import _jackknife

    result = get("sdgt.thm1")
    task, network = setting.noisy_task, setting.network
    (x_g,) = evaluate(functools.partial(_server_models, setting, rounds), seeds=seeds).stack()
    x_bar = x_g.mean(axis=0)

    def grad2(m):
        return np.array([float(torch.sum(task.global_grad(torch.as_tensor(x)) ** 2)) for x in m])

    G = _jackknife(x_g, grad2, 0.95)
    losses = np.array([task.loss(torch.as_tensor(x)) for x in x_bar])
    picks = x_bar[np.unique(np.linspace(0, rounds, 5).astype(int))]
    L_est = estimate_smoothness(setting.task, picks) if L is None else float(L)
    T, average = _running_average(G, rounds, setting.K)
    h = setting.network.m if setting.h is None else setting.h
    k = {"L": L_est, "sigma": setting.sigma, "p": p_from_h(h, network.m), "q": float(network.q),
         "n": task.n, "K": setting.K, "gamma": setting.gamma, "c2": c2, **fixed}
    E1 = {"low": float(max(losses[0] - losses.min(), 0.0)), "high": float(losses[0])}
    details = {"L_estimate": {"value": L_est, "method": "largest client Hessian norm at x^1 and 5 mean "
                              "models of the run (power iteration, central differences)",
                              "given": L is not None},
               "E1": {**E1, "why": "f* in [0, min_t f(xbar_g^t)]: cross-entropy >= 0"},
               "rounds": T, "seeds": seeds, "constants": k, "setting": setting.describe()}
    out = []
    for name in variants:
        low, high = (result.evaluate(name, **k, E1=E1[side], T=T) for side in ("low", "high"))
        failing = [c for c, ok in low.conditions_hold.items() if not np.all(ok)]
        if failing:
            out.append(not_applicable("thm1-bound", [f"{c} at the estimated L = {L_est:.4g}"
                                                     for c in failing], variant=name, **details))
            continue
        at_low = bound_check("thm1-bound", average, low.bound, variant=name)
        at_high = bound_check("thm1-bound", average, high.bound, variant=name, theorem_applies=True,
                              bound_at_low_E1=low.bound, **details)
        status = ("holds" if at_low.status == "holds" else
                  "violated" if at_high.status == "violated" else "inconclusive")
        shown = at_high if status == "violated" else at_low     # the comparison that decides
        out.append(Check("thm1-bound", status, shown.measured, shown.predicted, shown.ratio, name,
                         details={**details, "theorem_applies": True, "measured": average,
                                  "bound_at_low_E1": low.bound, "bound_at_high_E1": high.bound}))
    return out


__all__ = ["SDGTSetting", "estimate_smoothness", "thm1_estimated_bound", "fixed_point", "server_recursion", "linear_rate", "thm3_bound",
           "thm3_step", "average_bound", "step_for", "AVERAGE_BOUNDS", "lemmas", "lemma_step",
           "noise_floor"]


# ---- the checks of `fedbound verify sdgt CHECK` (fedbound.verify.registry) ---------------------------
#: per check: default clients per subnet (None = all), sigma, rounds, seeds (None: the check's own)
DEFAULTS = {
    "fixed-point": (2, 0.0, 600, None),
    "server-recursion": (2, 0.5, 20, 200),
    "linear-rate": (None, 0.0, 600, None),
    "thm3-bound": (2, 0.3, 100, 50),
    "lemmas": (2, 0.5, 15, 200),
    "noise-floor": (None, 0.5, None, 50),
    "thm1-bound": (2, 0.3, 100, 50),
    "thm2-bound": (2, 0.3, 100, 50),
}
_STEP = number_option("lr", "SD-GT's step size gamma (default: the check's, see its summary)",
                      low=0.0, low_open=True, high=1e6, aliases=("gamma",), examples=(0.02, 0.05))
_K = integer_option("local_steps", "SD-GT's K, D2D rounds per global round (default 3)", low=1,
                    high=10_000, default=3, aliases=("K",), examples=(1, 3))
# Theorem 1's constants, in the paper's notation (fedbound.vocabulary.CONSTANTS)
_C2 = number_option("c2", "Theorem 1's Lyapunov constant c2 > 2 of (74) (default 2.01)", low=2.0,
                    low_open=True, high=1e6, default=2.01, examples=(2.01, 3.0), constant=True)
_D5 = number_option("D5", "Theorem 1's unspecified D5; given, the printed (76) with D = 1/4 is "
                    "checked too", low=0.0, low_open=True, high=1e6, examples=(1.0,), constant=True)
_MC_LR = number_option("mc_lr", "noise-floor: step size of the Monte-Carlo check (default "
                       "1/(4 K L))", low=0.0, low_open=True, high=1e6, aliases=("mc_gamma",),
                       examples=(0.01,))


def _options(check: str) -> tuple:
    h, sigma, rounds, seeds = DEFAULTS[check]
    sample = replace(CLIENTS_PER_SUBNET, help=f"SD-GT's h, clients sampled per subnet (default "
                                              f"{'all' if h is None else f'min({h}, min_s m_s)'})")
    out = [_K, sample, _STEP, replace(SIGMA, default=sigma)]
    if rounds is not None:
        out.append(replace(ROUNDS, default=rounds))
    if seeds is not None:
        out.append(replace(SEEDS, default=seeds))
    if check == "thm1-bound":
        out += [_C2, _D5]
    if check == "noise-floor":
        out.append(_MC_LR)
    return tuple(out)


#: the tasks of SD-GT's checks: those with exact constants, and the MLP classifiers (Theorem 1 with an
#: estimated L; the other checks say "not applicable" there)
EXACT_TASKS = ("quadratic", "lsq", "lsq-convex")
TASKS = EXACT_TASKS + ("mlp-gmm", "mlp-digits")
#: checks that need mu > 0 (Theorem 3, strongly convex; its operator and floor)
STRONGLY_CONVEX_CHECKS = ("thm3-bound", "noise-floor", "linear-rate")


def _outside(problem, check: str) -> list[str]:
    """Why ``check`` does not apply to the problem's task (empty: it applies)."""
    task, name = problem.task, problem.task_name
    exact = all(v is not None for v in (task.L, task.mu, task.x_star, task.f_star))
    if check == "thm1-bound":
        return []                                   # any smooth task: L estimated where unknown
    if not exact:
        need = {"thm2-bound": "A4 (convex f) with known x*, f*",
                "thm3-bound": "A4 with mu > 0 (strongly convex) and known x*"}.get(
            check, "a task with exact L, mu, x*, f* (quadratic, lsq, lsq-convex)")
        return [f"{need}: --task {name} is non-convex and knows none of them"]
    if check in STRONGLY_CONVEX_CHECKS and not task.mu > 0:
        return [f"mu > 0 (Theorem 3, A4 strongly convex): --task {name} has mu = {task.mu:g}"]
    return []


def _mlp_setting(problem, check: str, local_steps: int, clients_per_subnet, lr, sigma, c2=2.01,
                 D5=None):
    """The SDGTSetting of thm1-bound on a task without exact constants: gamma (unless given) is half
    the largest step of Theorem 1's variants at L estimated at x^1 (:func:`estimate_smoothness`)."""
    network = problem.network("sdgt")
    default_h = DEFAULTS[check][0]
    h = clients_per_subnet if clients_per_subnet is not None else min(default_h, int(network.m.min()))
    setting = SDGTSetting(problem.task, network, local_steps, 1.0, h, sigma)
    if lr is not None:
        return replace(setting, gamma=lr)
    _, variants, fixed = _average_bound(check, c2=c2, D5=D5)
    L0 = estimate_smoothness(problem.task, problem.task.x0.numpy())
    k = {"L": L0, "sigma": sigma, "p": p_from_h(h, network.m), "q": float(network.q), "n": problem.task.n,
         "K": local_steps, **fixed}
    thm1 = get("sdgt.thm1")
    cap = min(float(thm1.max_step(v, **k)[0]) for v in variants or thm1.variants)
    return replace(setting, gamma=0.5 * cap)


def _setting(problem, check: str, local_steps: int, clients_per_subnet, lr, sigma, **fixed):
    """The SDGTSetting of ``check`` on ``problem`` (the check's default h and gamma where not given)."""
    task = problem.task
    require(task.L is not None and task.mu is not None and task.x_star is not None,
            f"verify needs a quadratic task with known L, mu and x*, got --task {problem.task_name}")
    network = problem.network("sdgt")
    smallest = int(network.m.min())
    default_h = DEFAULTS[check][0]
    h = clients_per_subnet
    if h is None and default_h is not None:
        h = min(default_h, smallest)
    require(h is None or 1 <= h <= smallest,
            f"--clients-per-subnet must be in [1, min_s m_s = {smallest}], got {h}")
    practical = 1.0 / (4 * local_steps * task.L)     # Lemma 1's cap: a visible contraction
    setting = SDGTSetting(task, network, local_steps, practical, h, sigma)
    if lr is not None:
        gamma = lr
    elif check in ("thm3-bound", "noise-floor"):
        gamma = thm3_step(setting)
    elif check == "lemmas":
        gamma = lemma_step(setting)
    elif check in ("thm1-bound", "thm2-bound"):
        result_id, variants, fixed_constants = _average_bound(check, **fixed)
        gamma = step_for(setting, result_id, variants, **fixed_constants)
    else:
        gamma = practical
    return replace(setting, gamma=gamma), practical


def _average_bound(check: str, c2: float = 2.01, D5: float | None = None) -> tuple:
    """(result id, variants, fixed constants) of thm1-bound / thm2-bound."""
    if check == "thm2-bound":
        return "sdgt.thm2", None, {}
    if D5 is None:
        return "sdgt.thm1", ("rederived",), {"c2": c2}
    return "sdgt.thm1", None, {"c2": c2, "D": 0.25, "D5": D5}


def _runner(check: str):
    def run_check(problem, *, local_steps, clients_per_subnet=None, lr=None, sigma, rounds=None,
                  seeds=None, c2=2.01, D5=None, mc_lr=None):
        fixed = {"c2": c2, "D5": D5} if check == "thm1-bound" else {}
        outside = _outside(problem, check)
        if outside:
            described = {"task": problem.task_name, "n": problem.task.n, "d": problem.task.d}
            return described, [not_applicable(check, outside, task=problem.task_name)]
        if check == "thm1-bound" and problem.task.L is None:
            setting = _mlp_setting(problem, check, local_steps, clients_per_subnet, lr, sigma, **fixed)
            resources.require_run_memory(f"verify sdgt {check}", rounds, setting.task.n,
                                         setting.task.d, seeds=max(seeds, 1))
            _, variants, constants = _average_bound(check, **fixed)
            return setting.describe(), thm1_estimated_bound(
                setting, rounds=rounds, seeds=seeds, variants=variants or ("printed", "rederived"),
                **constants)
        setting, practical = _setting(problem, check, local_steps, clients_per_subnet, lr, sigma,
                                      **fixed)
        resources.require_run_memory(f"verify sdgt {check}", rounds or 1, setting.task.n,
                                     setting.task.d, seeds=max(seeds or 1, 1))
        seed = problem.task_options.get("seed", 0)
        if check == "fixed-point":
            results = fixed_point(setting, rounds=rounds, seed=seed)
        elif check == "server-recursion":
            results = server_recursion(setting, rounds=rounds, seeds=seeds)
        elif check == "linear-rate":
            results = linear_rate(setting, rounds=rounds)
        elif check == "thm3-bound":
            results = thm3_bound(setting, rounds=rounds, seeds=seeds)
        elif check == "lemmas":
            results = lemmas(setting, rounds=rounds, seeds=seeds)
        elif check in ("thm1-bound", "thm2-bound"):
            result_id, variants, fixed_constants = _average_bound(check, **fixed)
            results = average_bound(setting, result_id, rounds=rounds, seeds=seeds,
                                    variants=variants, **fixed_constants)
        else:
            results = noise_floor(setting, mc_gamma=mc_lr if mc_lr is not None else practical,
                                  seeds=seeds)
        return setting.describe(), results
    return run_check


_SUMMARIES = {
    "fixed-point": "sigma = 0, partial sampling: SD-GT reaches x* (distance to x*)",
    "server-recursion": "the server-model recursion (40): exact with full participation, "
                        "Monte-Carlo mean otherwise",
    "linear-rate": "measured contraction vs the exact operator's spectral radius vs Theorem 3's "
                   "1 - mu K gamma/4 (full participation, sigma = 0)",
    "thm3-bound": "Theorem 3's bound (98) per variant, gamma = gamma_bar by default",
    "lemmas": "one-step LHS/RHS of Lemmas 1-6, printed and re-derived variants",
    "noise-floor": "exact stationary error under gradient noise vs Theorem 3's floor, with a "
                   "Monte-Carlo check of the stationary value",
    "thm1-bound": "Theorem 1 (76) (re-derived variant at --c2; the printed one needs --D5), "
                  "running averages over T; on mlp-gmm/mlp-digits with L estimated",
    "thm2-bound": "Theorem 2 (89) per variant, running averages over T",
}
for _check, _summary in _SUMMARIES.items():
    register(VerifyCheck(f"sdgt.{_check}", _summary, _runner(_check), _options(_check), TASKS,
                         deterministic=_check in ("fixed-point", "linear-rate")))


# ---- `fedbound verify sdgt tasks`: the main theorems on least squares and the MLP ---------------------
#: the tasks beside the command's own (--task, a quadratic by default) that `verify sdgt` runs the
#: main theorems on: least squares (SD-GT's AR(1) data, exact constants) and the MLP classifier
THEOREM_TASKS = ("lsq", "mlp-gmm")
THEOREM_CHECKS = ("thm3-bound", "thm1-bound", "thm2-bound")


def _run_on_tasks(problem, *, local_steps, sigma, rounds, seeds):
    """Theorems 1-3 (thm1-bound, thm2-bound, thm3-bound at their default steps) against Monte-Carlo
    runs on each of :data:`THEOREM_TASKS` built with the command's n, seed and network options
    (float64); each result is named ``TASK:CHECK``, with "not applicable" where a theorem does not
    cover a task (Theorems 2-3 on the non-convex MLP)."""
    from fedbound.algorithms.problem import Problem

    seed = problem.task_options.get("seed", 0)
    settings, out = {}, []
    for task in THEOREM_TASKS:
        other = Problem(task, {"float64": True, "n": problem.task.n, "seed": seed},
                        problem.network_options)
        for check in THEOREM_CHECKS:
            setting, results = _runner(check)(other, local_steps=local_steps, sigma=sigma,
                                              rounds=rounds, seeds=seeds)
            settings[f"{task}:{check}"] = setting
            for r in results:
                r.name = f"{task}:{r.name}"
                r.details["task"] = task
            out += results
    return {"tasks": list(THEOREM_TASKS), "runs": settings}, out


register(VerifyCheck(
    "sdgt.tasks", "Theorems 1-3 (thm1-, thm2-, thm3-bound) against Monte-Carlo runs on least squares "
                  "(lsq) and the MLP classifier (mlp-gmm, L estimated), built with the command's n, "
                  "seed and network; --task does not change them",
    _run_on_tasks, (_K, replace(SIGMA, default=0.3), replace(ROUNDS, default=30),
                    replace(SEEDS, default=10)), TASKS))
