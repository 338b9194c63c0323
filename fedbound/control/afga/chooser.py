r"""Choose AFGA's local steps I and gossip topology (and cluster count) for the least predicted
wall-clock time to a target accuracy (seed 000; notes afga.md 5: the paper proposes no such
problem, this is the toolkit's use of its bound and time model).

For every candidate (I, topology, K) of a **finite candidate set** (exhaustive enumeration, no
relaxation):

1. n = N/K, m = M/K (K must divide both); the gossip matrix is K blocks of
   :func:`fedbound.network.topology_weights` (deterministic topologies only), rho_max is computed
   from the blocks (:func:`fedbound.theory.afga.experiments.rho_max`);
2. the rho-condition (``rho_form``: exact (30) by default, the requirement under which (33) holds)
   decides whether the bound applies; candidates that violate it are infeasible unless
   ``enforce_rho_condition=False`` (then the bound is extrapolated and the row says so);
3. rounds R*: the least R with the explicit bound (33) ("rederived-schedule" of afga.thmD3,
   eta = c_eta n sqrt(I/m), eta_l = c_l/(I sqrt(R))) <= ``eps``, and large enough that eta_l obeys
   every step-size condition ((a'), (25), (27), implicit ones solved:
   ``afga.stepsize.max_step``): R >= (c_l/(I eta_l,max))^2;
4. time = R* x :meth:`CommTimeModel.round_seconds` with, per gossip step, either the model's fixed
   ``gossip_messages`` or (``gossip_messages="max_degree"``) the largest number of neighbours of a
   client (each client sends its messages one after another, clients in parallel: a modelling
   assumption, not the paper's).

The absolute constants C, C1..C4 of (33) are unknown (notes 4.4): the prediction is rate-correct
and its absolute level depends on them (defaults: C1 = 64, others 1).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from fedbound import validate
from fedbound.control.afga.comm_time import CommTimeModel
from fedbound.errors import ValidationError
from fedbound.network import topology_weights
from fedbound.theory import get
from fedbound.theory.afga.common import DEFAULT_CONSTANTS
from fedbound.theory.afga.experiments import Setting, rho_max
from fedbound.theory.afga.rho import FORMS, rho_condition

#: topologies whose matrix is deterministic (the chooser needs no seed)
TOPOLOGIES = ("ring", "complete", "chain", "star", "grid")
#: problem constants the chooser needs (besides the heterogeneity, given per cluster count)
PROBLEM = ("L", "sigma", "G", "d", "eps_ams", "beta1", "f_gap")
#: the largest round count searched (the engine's integer search is exact below 2**53)
MAX_ROUNDS = 2.0 ** 50


@dataclass(frozen=True)
class CandidateResult:
    """One candidate's numbers; ``rounds``/``seconds`` are inf where the bound never reaches eps."""

    I: int
    topology: str
    clusters: int
    n: int
    m: int
    rho_max: float
    rho_margin: float
    rho_holds: bool
    rounds: float
    rounds_step_size: float
    round_seconds: float
    seconds: float
    feasible: bool
    note: str


@dataclass(frozen=True)
class Choice:
    """The best feasible candidate (None if none is) and every evaluated candidate."""

    best: CandidateResult | None
    table: list[CandidateResult] = field(default_factory=list)


def _max_degree(topology: str, n: int) -> int:
    W = topology_weights(topology, n)
    return int(np.max(np.count_nonzero(W - np.diag(np.diag(W)), axis=1)))


def choose(*, N: int, M: int, eps: float, constants: Mapping[str, float],
           local_steps: Sequence[int] = (1, 2, 4, 8, 16, 24, 32), topologies: Sequence[str] = ("ring", "complete"),
           clusters: Sequence[int] = (1,), heterogeneity: Mapping[int, tuple[float, float]],
           c_eta: float = 1.0, c_l: float = 1.0, time_model: CommTimeModel = CommTimeModel(),
           gossip_messages: int | str = "max_degree", rho_form: str = "exact",
           enforce_rho_condition: bool = True) -> Choice:
    """Enumerate (I, topology, K) and return the least predicted wall-clock time (module docstring).

    ``constants`` holds L, sigma, G, d, eps_ams, beta1, f_gap (and optionally C,
    C1..C4, default 1 and C1 = 64); ``heterogeneity[K]`` = (sigma_l, sigma_c) of the
    clustering into K clusters (for K = 1: (sigma_g, 0)). Assumption D.1's alpha is 1.
    """
    N = validate.integer("N", N, low=2)
    M = validate.integer("M", M, low=1, high=N)
    eps = validate.number("eps", eps, low=0.0, low_open=True)
    c_eta = validate.number("c_eta", c_eta, low=0.0, low_open=True)
    c_l = validate.number("c_l", c_l, low=0.0, low_open=True)
    validate.one_of("rho_form", rho_form, FORMS)
    enforce = validate.boolean("enforce_rho_condition", enforce_rho_condition)
    validate.known_names("constant", constants, PROBLEM + tuple(DEFAULT_CONSTANTS))
    missing = [k for k in PROBLEM if k not in constants]
    if missing:
        raise ValidationError(f"choose needs constant(s) {', '.join(missing)}")
    if gossip_messages != "max_degree":
        validate.integer("gossip_messages", gossip_messages, low=0)
    steps = [validate.integer("local_steps", i, low=1) for i in local_steps]
    for name, given in (("local_steps", steps), ("topologies", topologies), ("clusters", clusters)):
        if len(given) == 0:
            raise ValidationError(f"{name} must hold at least one candidate, got none")
    for t in topologies:
        validate.one_of("topologies", t, TOPOLOGIES)
    base = {**DEFAULT_CONSTANTS, **{k: validate.number(k, v) for k, v in constants.items()}}
    thm = get("afga.thmD3")

    table = []
    for K in clusters:
        K = validate.integer("clusters", K, low=1)
        if N % K or M % K:
            raise ValidationError(f"clusters must divide N = {N} and M = {M}, got {K}")
        if K not in heterogeneity:
            raise ValidationError(f"heterogeneity has no (sigma_l, sigma_c) for {K} cluster(s)")
        n, m = N // K, M // K
        if n < 2:
            raise ValidationError(f"clusters of {n} client (N/K) cannot gossip; use K <= {N // 2}")
        sigma_l, sigma_c = (validate.number("heterogeneity", x, low=0.0) for x in heterogeneity[K])
        for topology in topologies:
            rho = rho_max(Setting(f"{topology} K={K}", N, M, K, topology, "chooser"))
            messages = _max_degree(topology, n) if gossip_messages == "max_degree" else int(gossip_messages)
            I = np.array(steps, dtype=float)
            check = rho_condition(rho, m, n, I, form=rho_form)
            c = {**base, "I": I, "K": K, "n": n, "m": m,
                 "rho": rho, "sigma_l": sigma_l, "sigma_c": sigma_c, "c_eta": c_eta, "c_l": c_l}
            step_cap, _ = get("afga.stepsize").max_step(
                "rederived", variable="eta_l",
                **{**c, "eta": c_eta * n * np.sqrt(I / m), "alpha": 1.0})
            r_step = np.ceil((c_l / (I * step_cap)) ** 2)
            r_eps = thm.rounds_to_eps(eps, "rederived-schedule", t_max=MAX_ROUNDS,
                                      **{k: c[k] for k in thm.constants("rederived-schedule") if k != "R"})
            rounds = np.maximum(r_eps, r_step)
            for j, i in enumerate(steps):
                seconds_round = time_model.round_seconds(i, True, messages)
                holds = bool(check.holds[j])
                feasible = bool(np.isfinite(rounds[j])) and (holds or not enforce)
                note = "" if holds else (f"rho-condition ({rho_form}) fails: bound "
                                         + ("extrapolated" if not enforce else "does not apply"))
                table.append(CandidateResult(
                    I=i, topology=topology, clusters=K, n=n, m=m, rho_max=rho,
                    rho_margin=float(check.margin[j]), rho_holds=holds, rounds=float(rounds[j]),
                    rounds_step_size=float(r_step[j]), round_seconds=seconds_round,
                    seconds=float(rounds[j]) * seconds_round, feasible=feasible, note=note))
    feasible = [row for row in table if row.feasible]
    best = min(feasible, key=lambda row: (row.seconds, row.I)) if feasible else None
    return Choice(best, table)


__all__ = ["choose", "Choice", "CandidateResult", "TOPOLOGIES"]
