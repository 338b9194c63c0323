r"""Claims about expectations, checked by Monte Carlo with confidence intervals (issue 22).

A statement "E[X] <= rhs" about a random quantity X (a stochastic gradient's moment, an
accumulator of a random run) is never refuted by one realization: one draw above the bound says
nothing about the mean. An :class:`ExpectationClaim` draws ``instances`` admissible constants from
its sampler, ``seeds`` independent realizations of X at each (``sample(constants, rng, seeds)``, an
array of shape (seeds,)), and estimates E[X] with its Student-t interval
(:func:`fedbound.stats.mean_ci`, ``confidence``). It fails only where the whole interval lies above
``rhs(constants)`` (relative rounding ``rtol``); the report's ``monte_carlo`` gives the estimate,
the interval and the number of realizations at the worst instance, whose ratio mean / rhs is the
violation ratio.
"""
from __future__ import annotations

import time
import zlib
from dataclasses import dataclass
from typing import Annotated, Callable

import numpy as np

from fedbound import validate
from fedbound.argtypes import Count, NonNegative, Range, Seed
from fedbound.errors import require
from fedbound.stats import mean_ci
from fedbound.theory.audit import admissible
from fedbound.theory.audit_report import ClaimReport
from fedbound.theory.claim import KINDS, TESTS, Identified


@dataclass(frozen=True)
class ExpectationClaim(Identified):
    """E[X] <= rhs by Monte Carlo over admissible instances (module doc)."""

    sample: Callable[[dict, np.random.Generator, int], np.ndarray]
    rhs: Callable[[dict], float]
    instances: Count = 16
    seeds: Annotated[int, Range(2)] = 2000
    confidence: Annotated[float, Range(0.0, 1.0, low_open=True, high_open=True)] = 0.99
    rtol: NonNegative = 1e-12
    kind: str = "printed"
    conditions: tuple[str, ...] = ()
    tests: str = "bound"

    def __post_init__(self):
        require(self.kind in KINDS and self.tests in TESTS,
                f"expectation claim {self.id}: kind in {KINDS}, tests in {TESTS}")
        require(self.instances >= 1 and self.seeds >= 2,
                f"expectation claim {self.id}: at least one instance and two realizations")

    def audit(self, seed: Seed = 0, **_) -> ClaimReport:
        started = time.perf_counter()
        rng = np.random.default_rng([validate.seed(seed), zlib.crc32(f"{self.id}/{self.variant}".encode())])
        z = rng.random((self.instances, self.sampler.dim))
        constants = self.sampler.constants(z)
        ok, broken = admissible(self.result_id, constants, self.instances)
        rows = []
        for i in np.flatnonzero(ok):
            one = {k: (np.asarray(v)[i] if np.ndim(v) else v) for k, v in constants.items()}
            draws = np.asarray(self.sample(one, rng, self.seeds), dtype=float)
            estimate = mean_ci(draws, self.confidence)
            bound = float(self.rhs(one))
            low, mean, high = float(estimate.low), float(estimate.mean), float(estimate.high)
            rows.append((low - bound - self.rtol * abs(bound), mean / bound if bound > 0 else np.inf,
                         one, mean, low, high, bound))
        require(rows, f"expectation claim {self.id}: no admissible instance")
        worst = max(rows, key=lambda r: (r[0] > 0, r[1]))
        fails = worst[0] > 0
        excess, ratio, point, mean, low, high, bound = worst
        return ClaimReport(
            claim=self.id, result_id=self.result_id, variant=self.variant, statement=self.statement,
            flag=self.flag, verdict="fails" if fails else "holds", violation_ratio=float(ratio),
            log10_ratio=float(np.log10(ratio)) if ratio > 0 else -np.inf,
            worst={k: float(np.asarray(v).reshape(-1)[0]) for k, v in point.items()},
            worst_part=None, part_ratios={}, failing_parts=[],
            random_violation_fraction=float(np.mean([r[0] > 0 for r in rows])),
            n_evaluated=len(rows) * self.seeds, n_invalid=0, found_by="monte carlo",
            seconds=time.perf_counter() - started, kind=self.kind,
            severity=("condition" if self.tests == "condition" else "constant") if fails else "holds",
            conditions=list(self.conditions), tests=self.tests,
            n_inadmissible=int(np.sum(~ok)), inadmissible=broken,
            monte_carlo={"mean": mean, "interval": [low, high], "confidence": self.confidence,
                         "realizations": self.seeds, "instances": len(rows), "bound": bound},
            evidence="statistical",
            certificate={"method": "Monte Carlo: the Student-t interval of the mean at each admissible "
                                   "instance; fails only where a whole interval lies above the bound",
                         "interval": [low, high], "confidence": self.confidence, "mean": mean,
                         "bound": bound, "realizations": self.seeds, "instances": len(rows)})
