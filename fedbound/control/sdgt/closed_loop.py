"""SD-GT under its own controller: Algorithm 2 run inside Algorithm 1 (closed loop).

Seed 003, Algorithm 2 [L438-L446] (sdgt.md 2.2), estimators (28)-(30) [L413-L423] (sdgt.md 5.2),
problem (31) [L425-L430] and Theorem 5 [L1212-L1232] (sdgt.md 4.7). After global round t of SD-GT,
run with K_t D2D rounds and sample counts h^t (p_t = min_s 1 - beta_s^2, beta_s = 1 - h_s/m_s):

1. Y-hat_t = (1/S) sum_s ||psi_s^t - psi_s^{t+1}||^2                               (28)
   Gamma-hat_t over the sampled clients' pre-aggregation models x^{t,K+1} and x_g^{t+1}   (29)
2. H-hat_t = 1/t + lambda1^2 (K_t^3 gamma^3 Y-hat_t/p_t^2 + K_t gamma Gamma-hat_t/p_t)  (30)
3. solve (31) with H = H-hat_t: the certified integer plan (K_{t+1}, h^{t+1}) of
   :func:`fedbound.control.sdgt.integer.plan`;
4. p_{t+1} = min_s (1 - beta_s^2) from the integer h^{t+1};
5. SD-GT's next rounds use K_{t+1} and h^{t+1} (``SDGT.step(state, local_steps=..., clients_per_subnet=...)``).

Choices where the paper is silent (sdgt.md 2.2, 6.3):

* Algorithm 2 "can be executed at any global iteration t" [L452]: here it runs after every round t
  with t % ``every`` == 0 (``every=1``: every round, presumably what the experiments did); between
  two runs the last plan stays in force.
* Start: K_1 = 1 and h_s = 20% of m_s (rounded, at least 1) as in Sec. V-F [L552].
* Integers: the plan is the exact integer optimum over K in 1..K_cap, h_s in 1..m_s (certified by
  enumeration of the participation levels), not a rounding of the continuous optimum (F27).
* Gamma-hat (29) averages the per-subnet means with weights 1/S (``weighting="subnet"``) or m_s/n
  ("population") (flag 5.2(c)); H-hat uses lambda1^2 as printed unless ``lam1_squared=False`` (F25);
  at t = 1, psi_s^1 = 0 (flag 5.2(d)).
* Energy is the cost model of (27)/(31) (sdgt.md 5.1): per round sum_s (1 - beta_s^t) E_s +
  K_t sum_s E_s^D2D, accumulated over rounds (6.3, the paper does not say how it accumulates);
  it is read from SD-GT's own accounting (fedbound.algorithms.accounting), which must use the
  spec's costs (``EnergyModel(spec.E, spec.E_d2d)``).

Theorem 5 along the run: with X(c) = [sqrt(lambda2 H)/2 + (2/3)(lambda2 c H)^(2/3)]/(lambda3 sum_s E_s^D2D),
the printed interval is [min(X_hi^(2/3), X_hi^(3/5)), max(X_lo^(2/3), X_lo^(3/5))] (c = max_s m_s^2
and 1) and the corrected one [DERIVED, F29] swaps X_lo and X_hi (``fedbound.theory``'s
"sdgt.thm5"). They bound the unconstrained root K* of (118) at the chosen p (no K >= 1, K <= K_cap,
no integrality); each round logs that root and whether each interval contains it. They are
derived for the objective (31) as printed: for variant "static" H = 1 is used, for variant "cor1"
(a different K exponent) they do not apply and are logged as nan.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
from tqdm import tqdm  # text bars: tqdm.auto warns in notebooks without ipywidgets

from fedbound.algorithms.base import check_finite
from fedbound.argtypes import Count, NonNegative, Positive
from fedbound.algorithms.semidecentralized.sdgt import SDGT, SDGTState
from fedbound.control.sdgt.estimators import WEIGHTINGS, estimate_Gamma, estimate_H, estimate_Y
from fedbound.control.sdgt.integer import METHODS, plan
from fedbound.control.sdgt.objective import (DEFAULT_K_CAP, DEFAULT_LAMBDAS, VARIANTS, ControlProblem,
                                        check_lambdas, check_variant, k_stationary_root)
from fedbound.control.sdgt.spec import NetSpec
from fedbound.errors import UnknownNameError, ValidationError, require
from fedbound.network.sampling import participation
from fedbound.theory import get as get_result

#: initial sampled fraction h_s/m_s and initial D2D rounds K_1 of the paper's adaptive runs [L552]
INITIAL_FRACTION = 0.2
INITIAL_K = 1


@dataclass(frozen=True)
class Theorem5Interval:
    """Theorem 5's bounds on K_t for one H-hat: ``printed`` (115)-(116) and ``corrected`` (F29),
    each a (lower, upper) pair; nan where the theorem does not apply, inf when sum_s E_s^D2D = 0."""

    printed: tuple[float, float]
    corrected: tuple[float, float]

    def contains(self, K: NonNegative) -> dict[str, bool]:
        """Whether each interval contains K (False for a nan bound)."""
        return {name: bool(lo <= K <= hi) for name, (lo, hi) in
                (("printed", self.printed), ("corrected", self.corrected))}


def theorem5_interval(H: Positive, lambdas: Sequence[float], spec: NetSpec, variant: str = "paper") -> Theorem5Interval:
    """Theorem 5's printed and corrected intervals (``fedbound.theory.get("sdgt.thm5")``, extras
    K_lower/K_upper) for H-hat ``H``, the weights ``lambdas`` and the network ``spec``; H is taken as 1
    for variant "static" (objective (27)); nan for variant "cor1", which the theorem does not cover."""
    uses_H, _ = VARIANTS[check_variant(variant)]
    _, lam2, lam3 = check_lambdas(lambdas)
    E_d2d_sum = float(spec.E_d2d.sum())
    if variant == "cor1":
        nan = (math.nan, math.nan)
        return Theorem5Interval(nan, nan)
    if E_d2d_sum == 0.0:   # free D2D rounds: X = inf, no finite bound
        inf = (math.inf, math.inf)
        return Theorem5Interval(inf, inf)
    thm5 = get_result("sdgt.thm5")
    values = dict(Hhat=float(H) if uses_H else 1.0, lambda2=lam2, lambda3=lam3, E_d2d_sum=E_d2d_sum,
                  m_max=int(spec.m.max()))
    bounds = {}
    for name in ("printed", "corrected"):
        extras = thm5.evaluate(name, **values).extras
        bounds[name] = (float(extras["K_lower"]), float(extras["K_upper"]))
    return Theorem5Interval(**bounds)


@dataclass(frozen=True)
class ClosedLoopState:
    """The SD-GT state ``alg`` and the controls ``K`` (int) and ``h`` (tuple of S ints) that the next
    round will use."""

    alg: SDGTState
    K: Count
    h: tuple[Count, ...]


#: the per-round log fields that are nan in rounds without a control step
CONTROL_FIELDS = ("Y_hat", "Gamma_hat", "H_hat", "objective", "lower_bound", "K_continuous",
                  "p_continuous", "K_root", "thm5_printed_lower", "thm5_printed_upper",
                  "thm5_corrected_lower", "thm5_corrected_upper")


@dataclass(frozen=True)
class RoundLog:
    """What happened in global round t (t = 0: the initial point, no round run).

    Round t used ``K`` D2D rounds and sample counts ``h`` (p = min_s h_s(2m_s - h_s)/m_s^2) and cost
    ``energy_round`` (cumulative ``energy``); ``loss`` = f(x_g^{t+1}), ``accuracy`` on the task's
    test split (nan if the task has none). If ``controlled``, Algorithm 2 ran after the round:
    estimates Y_hat (28), Gamma_hat (29), H_hat (30); the plan's objective, its continuous lower
    bound, continuous optimum (K_continuous, p_continuous) and the unconstrained root K_root of (118)
    at p_continuous; Theorem 5's intervals and whether they contain K_root; and the controls
    (K_next, h_next, p_next) of the following rounds. Without a control step the estimator fields
    are nan, the containment flags False, and the ``*_next`` fields repeat the controls in force.
    """

    t: int
    K: int
    h: tuple
    p: float
    energy_round: float
    energy: float
    loss: float
    accuracy: float
    controlled: bool
    Y_hat: float
    Gamma_hat: float
    H_hat: float
    objective: float
    lower_bound: float
    K_continuous: float
    p_continuous: float
    K_root: float
    thm5_printed_lower: float
    thm5_printed_upper: float
    thm5_corrected_lower: float
    thm5_corrected_upper: float
    printed_contains_root: bool
    corrected_contains_root: bool
    K_next: int
    h_next: tuple
    p_next: float

    def to_dict(self) -> dict:
        """JSON-ready (h as lists; nan stays float nan)."""
        out = dataclasses.asdict(self)
        out["h"], out["h_next"] = list(self.h), list(self.h_next)
        return out


@dataclass(frozen=True, eq=False)
class ClosedLoopTrajectory:
    """The logs of rounds 0..T (``logs[t]`` is round t), the settings and the final state."""

    logs: tuple
    settings: dict
    final_state: ClosedLoopState

    def column(self, name: str) -> np.ndarray:
        """One log field over rounds 0..T as an array ((T+1, S) for ``h`` and ``h_next``)."""
        require(name in RoundLog.__dataclass_fields__,
                f"unknown log field {name!r}; fields: {', '.join(RoundLog.__dataclass_fields__)}")
        return np.array([getattr(log, name) for log in self.logs])

    def to_dict(self) -> dict:
        return {"settings": self.settings, "rounds": [log.to_dict() for log in self.logs]}


def _sample_counts(fraction: float, m: np.ndarray) -> tuple:
    return tuple(int(v) for v in np.clip(np.rint(fraction * m), 1, m))


class ClosedLoop:
    """SD-GT ``alg`` steered by Algorithm 2 (module docstring).

    ``spec`` gives m_s (must equal the network's), E_s and E_s^D2D (must equal ``alg.energy``) and
    optionally gamma (must equal ``alg.gamma``); ``lambdas`` = (lambda1, lambda2, lambda3); ``K_cap``
    caps K; ``every`` = r runs Algorithm 2 after rounds r, 2r, ...; ``variant`` is the objective
    variant ("paper" = (31)); ``method`` the continuous solver of the plan's lower bound ("reduced"
    or "gp"); ``K_init`` and ``initial_fraction`` set K_1 and h^1; ``lam1_squared`` and
    ``weighting`` are the H-hat and Gamma-hat readings (flags F25, 5.2(c)).
    All randomness is SD-GT's seeded generator, carried in the state: the same seed gives the same run.
    """

    def __init__(self, alg: SDGT, spec: NetSpec, lambdas: Sequence[float] = DEFAULT_LAMBDAS, K_cap: int = DEFAULT_K_CAP,
                 *, every: int = 1, variant: str = "paper", method: str = "reduced",
                 K_init: int = INITIAL_K, initial_fraction: float = INITIAL_FRACTION,
                 lam1_squared: bool = True, weighting: str = "subnet"):
        require(isinstance(alg, SDGT), f"alg must be an SDGT, got {type(alg).__name__}")
        require(isinstance(spec, NetSpec), f"spec must be a NetSpec, got {type(spec).__name__}")
        require(np.array_equal(spec.m, alg.net.m),
                f"spec subnet sizes {spec.m.tolist()} must equal the network's {alg.net.m.tolist()}")
        require(spec.gamma is None or spec.gamma == alg.gamma,
                f"spec gamma must equal the algorithm's step size {alg.gamma!r}, got {spec.gamma!r}")
        energy = alg.energy
        require(np.array_equal(energy.E_ds, spec.E) and np.array_equal(energy.E_d2d, spec.E_d2d)
                and not energy.charge_tracking_exchanges,
                "alg.energy must be the spec's cost model EnergyModel(spec.E, spec.E_d2d) (tracking "
                f"exchanges not charged), got E_ds={energy.E_ds.tolist()}, E_d2d={energy.E_d2d.tolist()}")
        require(alg.global_aggregation, "the closed loop needs SD-GT with global_aggregation=True")
        require(isinstance(every, (int, np.integer)) and not isinstance(every, bool) and every >= 1,
                f"every must be an integer >= 1, got {every!r}")
        if method not in METHODS:
            raise UnknownNameError(f"unknown controller method {method!r}; valid: {', '.join(METHODS)}")
        if weighting not in WEIGHTINGS:
            raise UnknownNameError(f"weighting must be one of {', '.join(WEIGHTINGS)}, got {weighting!r}")
        require(isinstance(initial_fraction, (int, float)) and 0 < initial_fraction <= 1,
                f"initial_fraction must be in (0, 1], got {initial_fraction!r}")
        # ControlProblem validates lambdas, K_cap and variant once, with H = 1
        self.problem = ControlProblem(spec, H=1.0, lambdas=lambdas, K_cap=K_cap, variant=variant)
        require(isinstance(K_init, (int, np.integer)) and not isinstance(K_init, bool)
                and 1 <= K_init <= self.problem.K_cap,
                f"K_init must be an integer in 1..K_cap={self.problem.K_cap}, got {K_init!r}")
        self.alg = alg
        self.spec = spec
        self.every = int(every)
        self.method = method
        self.K_init = int(K_init)
        self.h_init = _sample_counts(float(initial_fraction), spec.m)
        self.lam1_squared = bool(lam1_squared)
        self.weighting = weighting

    @property
    def settings(self) -> dict:
        pb = self.problem
        return {"lambdas": list(pb.lambdas), "K_cap": pb.K_cap, "every": self.every,
                "variant": pb.variant, "method": self.method, "K_init": self.K_init,
                "h_init": list(self.h_init), "lam1_squared": self.lam1_squared,
                "weighting": self.weighting, "gamma": self.alg.gamma, "seed": self.alg.seed,
                "spec": self.spec.to_dict()}

    def init(self, x0: torch.Tensor | np.ndarray | None = None) -> ClosedLoopState:
        """SD-GT's initial state with K_1 = K_init and h^1 = initial_fraction of m_s."""
        return ClosedLoopState(alg=self.alg.init(x0), K=self.K_init, h=self.h_init)

    def _metrics(self, x_g: torch.Tensor) -> tuple[float, float]:
        task = self.alg.task
        accuracy = float(task.accuracy(x_g)) if hasattr(task, "accuracy") else math.nan
        return float(task.loss(x_g)), accuracy

    def initial_log(self, state: ClosedLoopState) -> RoundLog:
        """Round 0: the initial point, no energy spent, the first controls as ``*_next``."""
        loss, accuracy = self._metrics(state.alg.x_g)
        nan = math.nan
        p_next = float(participation(state.h, self.spec.m))
        return RoundLog(t=state.alg.t, K=0, h=tuple(0 for _ in state.h), p=nan, energy_round=0.0,
                        energy=float(state.alg.comm.energy), loss=loss, accuracy=accuracy,
                        controlled=False, **{f: nan for f in CONTROL_FIELDS},
                        printed_contains_root=False, corrected_contains_root=False,
                        K_next=state.K, h_next=state.h, p_next=p_next)

    def estimates(self, before: SDGTState, after: SDGTState) -> tuple[float, float, float]:
        """(Y-hat, Gamma-hat, H-hat) of (28)-(30) after the round that took ``before`` to ``after``."""
        Y_hat = estimate_Y(before.psi, after.psi)
        mask = after.mask
        Gamma_hat = estimate_Gamma(after.X_end[mask], after.x_g, self.alg.net.subnet_of[mask],
                                   m=self.spec.m, weighting=self.weighting)
        p_t = float(participation(after.h, self.spec.m))
        H_hat = estimate_H(after.t, after.K, p_t, self.alg.gamma, Y_hat, Gamma_hat,
                           self.problem.lambdas[0], lam1_squared=self.lam1_squared)
        return Y_hat, Gamma_hat, H_hat

    def step(self, state: ClosedLoopState) -> tuple[ClosedLoopState, RoundLog]:
        """One SD-GT round with the controls in ``state``, then Algorithm 2 if the round is due."""
        before = state.alg
        after = self.alg.step(before, local_steps=state.K, clients_per_subnet=np.asarray(state.h))
        check_finite(after, self.alg.name)
        loss, accuracy = self._metrics(after.x_g)
        m = self.spec.m
        common = dict(t=after.t, K=after.K, h=tuple(int(v) for v in after.h),
                      p=float(participation(after.h, m)), energy_round=float(after.last_comm.energy),
                      energy=float(after.comm.energy), loss=loss, accuracy=accuracy)
        if after.t % self.every != 0:
            nan = math.nan
            log = RoundLog(**common, controlled=False, **{f: nan for f in CONTROL_FIELDS},
                           printed_contains_root=False, corrected_contains_root=False,
                           K_next=state.K, h_next=state.h, p_next=float(participation(state.h, m)))
            return ClosedLoopState(after, state.K, state.h), log
        Y_hat, Gamma_hat, H_hat = self.estimates(before, after)
        problem = dataclasses.replace(self.problem, H=H_hat)
        decision = plan(problem, method=self.method)
        cont = decision.continuous
        E_d2d_sum = float(self.spec.E_d2d.sum())
        K_root = (k_stationary_root(cont.p, H_hat, problem.lambdas, E_d2d_sum, problem.variant)
                  if E_d2d_sum > 0 else math.inf)
        interval = theorem5_interval(H_hat, problem.lambdas, self.spec, problem.variant)
        contains = interval.contains(K_root)
        log = RoundLog(**common, controlled=True, Y_hat=Y_hat, Gamma_hat=Gamma_hat, H_hat=H_hat,
                       objective=decision.objective, lower_bound=decision.lower_bound,
                       K_continuous=cont.K, p_continuous=cont.p, K_root=K_root,
                       thm5_printed_lower=interval.printed[0], thm5_printed_upper=interval.printed[1],
                       thm5_corrected_lower=interval.corrected[0],
                       thm5_corrected_upper=interval.corrected[1],
                       printed_contains_root=contains["printed"],
                       corrected_contains_root=contains["corrected"],
                       K_next=decision.K, h_next=tuple(decision.h), p_next=decision.p)
        return ClosedLoopState(after, decision.K, tuple(decision.h)), log

    def run(self, rounds: int, *, state: ClosedLoopState | None = None,
            progress: bool = False) -> ClosedLoopTrajectory:
        """``rounds`` closed-loop rounds from ``state`` (default :meth:`init`)."""
        require(isinstance(rounds, (int, np.integer)) and not isinstance(rounds, bool) and rounds >= 0,
                f"rounds must be an integer >= 0, got {rounds!r}")
        state = self.init() if state is None else state
        if not isinstance(state, ClosedLoopState):
            raise ValidationError(f"state must be a ClosedLoopState, got {type(state).__name__}")
        logs = [self.initial_log(state)]
        for _ in tqdm(range(int(rounds)), disable=not progress, desc="SD-GT + Alg. 2"):
            state, log = self.step(state)
            logs.append(log)
        return ClosedLoopTrajectory(tuple(logs), self.settings, state)
