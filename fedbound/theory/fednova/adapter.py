r"""FedNova's adapter: a run (task, algorithm name, algorithm options) mapped to the constants of
FedNova's results (seed 001_530825e753327090.txt; papers/fednova.md 2.2-2.8, 3 (d), 4.3, 4.9,
4.10, 4.12; the contract is :mod:`fedbound.theory.adapters`).

The algorithms of FedNova's framework (rule (4) [L93] with a deterministic linear local solver):
``fedavg`` and ``fedprox`` (Delta_i averaged with p, the "previous algorithms" of (5)-(6)) and
``fednova`` (normalized averaging (12)).

* :func:`local_solver`: the local solver of the paper's table (sec. 2.3) that the options describe
  (``mu``: proximal, alpha = lr mu; ``momentum``: rho; ``lr_decay``: gamma; else SGD) and the
  parameters of its accumulation vectors a_i;
* :func:`surrogate_weights`: (tau_eff, w) of the objective F~ = sum_i w_i F_i the run optimizes:
  for averaging with p the implicit ones of (6) [L115-L116] (tau_eff = sum_i p_i ||a_i||_1,
  w_i = p_i ||a_i||_1 / tau_eff), for FedNova w = p and the value of its tau_eff policy (eq. (12)
  [L198-L202], App. H [L961]); a server step ``server_lr`` s multiplies the update (4), so the
  run's tau_eff is s times that (w unchanged);
* :func:`assumption3`: beta^2 and kappa^2 of Assumption 3 [L149] at those weights (the proofs use
  Assumption 3 only there, fednova.md 3 (d)), computed by the task (exact for quadratic tasks;
  beta^2 is the smallest admissible value, where kappa^2 may be inf when the Hessians differ: pass a
  larger ``beta2``), and chi^2_{p||w} (L175);
* :func:`constants`: the scalar constants of Theorems 1-2 ((8)-(10) [L155-L175]; App. C (93)-(95)
  [L606-L608]), Theorem 3 ((13) [L208-L212], (143)-(146) [L806-L813]) and Corollary 3
  ((182) [L835-L951]) for a run:

  ==================  =========================================================================
  L, sigma            the task's smoothness and noise (Assumptions 1, 2)
  eta                 ``lr``, the client learning rate
  beta2, kappa2       :func:`assumption3` at the run's w
  tau_eff, A, B, C    (9) at the run's w and accumulation vectors (:func:`~fedbound.theory.fednova.
                      accumulation.abc`), tau_eff of :func:`surrogate_weights`
  a1_max, tau_bar, m  max_i ||a_i||_1 (101), (1/m) sum_i tau_i (L157), the number of clients
  chi2                chi^2_{p||w} (Theorem 2)
  A_tilde, B_tilde,   FedNova only: Theorem 3's time averages, equal to A, B, C and tau_bar for
  C_tilde, tau_tilde  local steps fixed across rounds (146)
  q                   FedNova with ``participation="with-replacement"`` only: the draws per
                      round of Corollary 3's scheme (153) [L839-L843]
  ==================  =========================================================================

Why scalars and not the vectors p_i, tau_i: the results' preparation from (p_i, tau_i)
(:mod:`fedbound.theory.fednova.preparation`) assumes vanilla local SGD and one aggregation per
result (fednova.thm1 FedAvg's, fednova.thm3 FedNova's); the scalars here are exact for every local
solver of the table and for the run's own aggregation, and a result refuses both forms at once.

Outside the theorems (refused): partial participation other than Corollary 3's scheme, or
Corollary 3 with a tau_eff that varies with the draws (a policy over unequal per-client values);
cross-client variance reduction ``vr`` (Alg. 2 [L972-L989] has no theorem); server momentum (no
form is given, fednova.md 2.9); Nesterov momentum (``nesterov``: the table's momentum solver is the
heavy ball). Defaults (the constructors'): ``local_steps`` 1, ``server_lr`` 1,
``tau_eff`` "accumulation", no proximal term, momentum or decay, full participation. Delta (the
surrogate's initial gap) and T are the caller's.

Only numbers and names cross this boundary (task arrays, option values): the theory never imports
the algorithms.
"""
from __future__ import annotations

import math
from typing import Annotated

import numpy as np

from fedbound.argtypes import Range
from fedbound.errors import require
from fedbound.network.subnets import Network
from fedbound.argtypes import TaskArg as Task   # checked without importing torch
from fedbound.theory.adapters import REQUIRED, covered, known, run_options
from fedbound.local_solver import LocalSolver
from fedbound.theory.fednova.accumulation import abc, accumulation_vector, implicit_weights, norms
from fedbound.validate import integer, number

PAPER = "FedNova"
#: the registered algorithms of FedNova's framework
ALGORITHMS = ("fedavg", "fedprox", "fednova")
#: the algorithms whose round is normalized averaging (eq. (12)); the others average the updates
NORMALIZED = ("fednova",)
_ROUND = {"lr": REQUIRED, "local_steps": 1, "clients_per_round": None, "participation": None,
          "server_lr": 1.0}
#: algorithm -> option -> default (None: absent; full participation, no local-solver parameter)
DEFAULTS = {
    "fedavg": _ROUND,
    "fedprox": {**_ROUND, "proximal_mu": REQUIRED},
    "fednova": {**_ROUND, "proximal_mu": None, "momentum": None, "lr_decay": None,
                "tau_eff": "accumulation", "vr": None, "server_momentum": None, "nesterov": False},
}
#: algorithm -> options that do not enter the constants
IGNORED = {name: () for name in ALGORITHMS}


def _options(task, algorithm: str, options: dict) -> dict:
    """The run's options with defaults, refused where no theorem covers the run (module doc)."""
    covered(PAPER, algorithm, ALGORITHMS)
    opts = run_options(PAPER, algorithm, options, DEFAULTS[algorithm], IGNORED[algorithm])
    require(opts.get("vr") in (None, "none"), f"FedNova's theorems do not cover cross-client "
                                              f"variance reduction (vr = {opts.get('vr')!r}; Alg. 2 has no theorem)")
    require(not opts.get("server_momentum"), "FedNova's theorems do not cover server momentum "
                                             "(the paper gives no form, fednova.md 2.9)")
    require(not opts.get("nesterov"), "FedNova's theorems cover the local solvers of its table "
                                      "(sec. 2.3), whose momentum is the heavy ball: not nesterov")
    return opts


def local_solver(options: dict[str, object]) -> tuple[str, dict]:
    """(row, parameters) of FedNova's table (sec. 2.3; :func:`~fedbound.local_solver.accumulation_vector`)
    for the local solver of the options ``lr``, ``proximal_mu`` (mu, alpha = lr mu), ``momentum`` (rho)
    or ``lr_decay`` (gamma); SGD without them: :meth:`fedbound.local_solver.LocalSolver.table`. At
    most one of them (the paper's table has no combination; the algorithm refuses them too)."""
    given = sorted(name for name in ("proximal_mu", "momentum", "lr_decay") if options.get(name) is not None)
    require(len(given) <= 1, f"give at most one of proximal_mu, momentum and lr_decay, got {given}")
    return LocalSolver.from_options(options).table()


def _weights(task) -> np.ndarray:
    """p (n,) float64: the task's client weights, renormalized to sum to 1 in float64 (a float32
    task's weights sum to 1 only to float32 rounding)."""
    p = task.weights.detach().double().numpy()
    return p / np.sum(p)


def _steps(task, options: dict) -> np.ndarray:
    """tau_i (n,) int64: ``local_steps`` as one count for every client or one per client."""
    values = np.atleast_1d(np.asarray(options["local_steps"], dtype=object)).ravel()
    require(values.size in (1, task.n), f"local_steps needs one count or one per client (n = {task.n}), "
                                        f"got {values.size}")
    tau = np.array([integer(f"local_steps[{i}]", v, low=1) for i, v in enumerate(values)], dtype=np.int64)
    return np.broadcast_to(tau, (task.n,)).copy()


def _vectors(task, options: dict) -> list[np.ndarray]:
    """The accumulation vectors a_i of the run's clients (sec. 2.3)."""
    kind, params = local_solver(options)
    return [accumulation_vector(kind, int(t), **params) for t in _steps(task, options)]


def _full(task, opts: dict) -> bool:
    """Whether the options give full participation (every client, every round)."""
    return opts["participation"] in (None, "full") and opts["clients_per_round"] in (None, task.n)


def surrogate_weights(task: Task, algorithm: str, options: dict[str, object]) -> tuple[float, np.ndarray]:
    """(tau_eff, w) of the surrogate objective of ``algorithm`` with ``options`` on ``task``
    (module doc)."""
    opts = _options(task, algorithm, options)
    p = _weights(task)
    tau = _steps(task, opts)
    a1 = norms(_vectors(task, opts))[0]
    scale = number("server_lr", opts["server_lr"], low=0.0, low_open=True)
    if algorithm not in NORMALIZED:
        tau_eff, w = implicit_weights(p, a1)
        return scale * float(tau_eff), np.asarray(w)
    policy = opts["tau_eff"]
    if not isinstance(policy, str):
        return scale * float(policy), p
    q = a1 if policy == "accumulation" else tau.astype(np.float64)
    # the round's own arithmetic (Normalized.factors): per distinct norm v, (sum_k w_k q_k / v) / sum w
    return scale * float(float(np.sum(p * (q / a1[0]))) / float(np.sum(p)) * a1[0]), p


def assumption3(task: Task, algorithm: str, options: dict[str, object],
                beta2: Annotated[float, Range(1.0)] | None = None) -> dict:
    """beta^2, kappa^2, w, tau_eff and chi^2_{p||w} of the run (module doc); ``beta2`` defaults to
    the smallest admissible value (None where the task cannot compute it)."""
    tau_eff, w = surrogate_weights(task, algorithm, options)
    beta2 = task.beta2_min(w) if beta2 is None else number("beta2", beta2, low=1.0)
    kappa2 = None if beta2 is None else task.kappa2(w, beta2)
    p = _weights(task)
    chi2 = float(np.sum((p - w) ** 2 / w)) if np.all(w > 0) else float("inf")
    return {"beta2": beta2, "kappa2": kappa2, "w": w, "tau_eff": tau_eff, "chi2": chi2}


def _sampling(task, algorithm: str, opts: dict) -> dict:
    """{} under full participation, {"q": draws} for Corollary 3's scheme; refused otherwise."""
    if _full(task, opts):
        return {}
    require(algorithm in NORMALIZED and opts["participation"] == "with-replacement",
            f"FedNova's theorems cover full participation and, for fednova, Corollary 3's q draws "
            f"with replacement by p (participation='with-replacement'); got participation = "
            f"{opts['participation']!r} with clients_per_round = {opts['clients_per_round']!r}")
    policy = opts["tau_eff"]
    values = norms(_vectors(task, opts))[0] if policy == "accumulation" else _steps(task, opts)
    require(not isinstance(policy, str) or bool(np.all(values == values[0])),
            f"Corollary 3 needs a fixed tau_eff; the {policy!r} policy varies with the draws when "
            f"the clients' values differ (give tau_eff a number)")
    return {"q": integer("clients_per_round", opts["clients_per_round"], low=1)}


def constants(task: Task, network: Network | None, algorithm: str,
              options: dict[str, object]) -> dict:
    """The scalar constants of Theorems 1-3 and Corollary 3 for a run (module doc); ``network``
    must be None (FedNova's algorithms take none)."""
    opts = _options(task, algorithm, options)
    require(network is None, f"{algorithm} takes no network (FedNova's setting has none)")
    sampling = _sampling(task, algorithm, opts)
    L = known(PAPER, task, "L (Assumption 1)", task.L)
    sigma2 = known(PAPER, task, "sigma^2 (Assumption 2)", task.sigma2)
    a3 = assumption3(task, algorithm, opts)
    beta2 = known(PAPER, task, "beta^2 (Assumption 3)", a3["beta2"])
    kappa2 = known(PAPER, task, "kappa^2 (Assumption 3)", a3["kappa2"])
    tau = _steps(task, opts)
    a1, a2sq, last = norms(_vectors(task, opts))
    A, B, C = (float(x) for x in abc(a3["w"], a1, a2sq, last, a3["tau_eff"]))
    out = {"L": float(L), "sigma": math.sqrt(float(sigma2)), "eta": number("lr", opts["lr"], low=0.0, low_open=True),
           "beta2": float(beta2), "kappa2": float(kappa2), "tau_eff": a3["tau_eff"], "A": A, "B": B, "C": C,
           "a1_max": float(a1.max()), "tau_bar": float(np.mean(tau)), "m": int(task.n), "chi2": a3["chi2"]}
    if algorithm in NORMALIZED:
        out.update(A_tilde=A, B_tilde=B, C_tilde=C, tau_tilde=out["tau_bar"])
    return out | sampling


def explain(task: Task, network: Network | None, algorithm: str, options: dict[str, object], name: str,
            value: object) -> str:
    """Why a constant of the run came out as ``value`` (:func:`fedbound.theory.adapters.explain`):
    kappa^2 is inf at the smallest admissible beta^2 where the clients' Hessians differ."""
    if name == "kappa2" and not math.isfinite(float(value)):
        a3 = assumption3(task, algorithm, options)
        return (f"Assumption 3 holds at the run's surrogate weights only with kappa^2 = inf at the "
                f"smallest beta^2 the task admits, {a3['beta2']:.6g} (the clients' Hessians differ): "
                f"give a larger beta2 in constants=, and kappa2 is computed from the task for it "
                f"(task.kappa2(w, beta2))")
    return ""


def check_given(task: Task, network: Network | None, algorithm: str, options: dict[str, object],
                given: dict) -> dict:
    """beta^2 and kappa^2 given by a user checked against the task (Assumption 3 at the run's
    surrogate weights w, computed exactly on quadratic tasks): beta^2 at least the smallest the task
    admits, kappa^2 at least the task's at that beta^2; a beta^2 given alone gets the task's kappa^2
    (:func:`fedbound.theory.adapters.check_given`)."""
    if "beta2" not in given and "kappa2" not in given:
        return {}
    opts = _options(task, algorithm, options)
    a3 = assumption3(task, algorithm, opts)
    if a3["beta2"] is None:
        return {}                       # the task cannot compute Assumption 3: nothing to check
    beta2 = float(given.get("beta2", a3["beta2"]))
    require(beta2 >= a3["beta2"] * (1 - 1e-12),
            f"beta2 = {beta2:g} is below the smallest beta^2 of Assumption 3 this task admits at the "
            f"run's weights, {a3['beta2']:.6g}: no kappa^2 makes it hold")
    kappa2 = float(task.kappa2(a3["w"], beta2))
    if "kappa2" not in given:
        require(math.isfinite(kappa2), f"kappa^2 of Assumption 3 is inf at beta2 = {beta2:g}; give a "
                                       f"larger beta2")
        return {"kappa2": kappa2}
    require(math.isfinite(kappa2), f"kappa2 = {float(given['kappa2']):g} cannot make Assumption 3 hold at "
                                   f"beta2 = {beta2:.6g}, where the task needs kappa^2 = inf (the clients' "
                                   f"Hessians differ): give a larger beta2 with it")
    require(float(given["kappa2"]) >= kappa2 * (1 - 1e-12),
            f"kappa2 = {float(given['kappa2']):g} is below the task's kappa^2 = {kappa2:.6g} at "
            f"beta2 = {beta2:.6g} (Assumption 3 at the run's weights): the theorem's assumption "
            f"would be false for this run; give kappa2 >= {kappa2:.6g}, or leave it out")
    return {}


__all__ = ["PAPER", "ALGORITHMS", "NORMALIZED", "DEFAULTS", "IGNORED", "local_solver",
           "surrogate_weights", "assumption3", "constants", "explain", "check_given"]
