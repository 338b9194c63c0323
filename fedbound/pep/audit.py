"""PEP claims: the papers' bounds against certified worst cases, for ``fedbound audit pep`` (issue 13;
the paper ``pep`` of :data:`fedbound.papers.PAPERS`, registered here).

A :class:`PepClaim` is the claim "the paper's bound on a metric holds for every function of the
class" checked at a few settings where the theorem's conditions hold: the PEP worst case (exact for
the class up to solver accuracy, an upper bound where the PEP is a relaxation) is the left-hand
side, the paper's bound the right-hand side. It fails where a worst case exceeds the bound by more
than :data:`fedbound.pep.certificate.RTOL`; the report's violation ratio is max worst/bound (for
a claim that holds: how loose the bound is at its tightest point). It is audited by
:meth:`PepClaim.audit` (called by :func:`fedbound.theory.audit.audit_claim` for this claim type):
no random sampling -- each point is an SDP.

Evidence (issue 32): a claim that holds numerically is then proved at every setting by an exact
dual certificate (:func:`fedbound.pep.dual.prove`): the paper's bound and the theorem's conditions
are evaluated exactly (the options' binary values as rationals, the method's theory at traced
numbers), and rational multipliers show worst <= upper <= bound over the whole function class.
Evidence ``proved`` when every setting is proved (the certificate lists them), else ``numeric``
with the reason. A step "at the cap" is the largest binary64 number not above the exact cap
(:func:`at_cap`), so that the setting is admissible in exact arithmetic and its PEP rational.

Claims: SD-GT Theorem 3's rate (1 - mu K gamma/4)^T on the Lyapunov function (96) at gamma =
gamma_bar and gamma_bar/2 (:mod:`fedbound.pep.methods.sdgt`); FedNova Theorem 1 (97) at sigma = 0
with unequal tau_i at the largest eta of (98)-(99) and half of it (:mod:`fedbound.pep.methods.local`).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

from fedbound.papers import PAPERS, PaperAudit
from fedbound.pep.certificate import RTOL, method, worst_case
from fedbound.pep.dual import NotProved, prove
from fedbound.pep.method import Method
from fedbound.theory.audit_report import ClaimReport
from fedbound.theory.registry import get


@dataclass(frozen=True)
class PepClaim:
    """A paper's bound checked by PEP at the settings ``points()``: dicts of ``method``'s options
    in the paper's letters (``gamma``, ``K``, ``T``: the options' old names, which the report's
    worst point keeps; :func:`paper_options` reads them as the method's options)."""

    id: str
    result_id: str
    variant: str
    statement: str
    flag: str
    method: str
    points: Callable[[], list[dict]]

    def audit(self, seed: int = 0) -> ClaimReport:
        """Solve the PEP at every point and compare with the paper's bound (``seed`` unused: no
        randomness)."""
        start = time.perf_counter()
        m = method(self.method)
        rows, cfgs = [], []
        for options in self.points():
            cfg = m.config(**paper_options(m, options))
            th = m.theory(cfg)
            if th is None or not th.applies:
                raise AssertionError(f"{self.id}: the theorem does not apply at {options}: {th}")
            rows.append((options, worst_case(self.method, cfg)[0].value, th.value))
            cfgs.append(cfg)
        ratios = [w / b for _, w, b in rows]
        i = max(range(len(rows)), key=ratios.__getitem__)
        violated = [w > b * (1 + RTOL) for _, w, b in rows]
        numeric = {"method": "performance estimation: the worst case over the function class at each "
                             "setting, an SDP solved numerically, against the paper's bound",
                   "tolerance": RTOL, "settings": len(rows), "worst_over_bound": ratios}
        evidence, certificate = "numeric", numeric
        if not any(violated):
            try:
                certificate = {"method": PROOF_METHOD, "settings": exact_proofs(m, cfgs), "numeric": numeric}
                evidence = "proved"
            except NotProved as exc:
                certificate = {**numeric, "proof": str(exc)}
        return ClaimReport(
            claim=self.id, result_id=self.result_id, variant=self.variant, statement=self.statement,
            flag=self.flag, verdict="fails" if any(violated) else "holds", violation_ratio=ratios[i],
            log10_ratio=math.log10(ratios[i]) if ratios[i] > 0 else -math.inf,
            worst={k: float(v) for k, v in rows[i][0].items() if not isinstance(v, str)},
            worst_part=None, part_ratios={}, failing_parts=[],
            random_violation_fraction=sum(violated) / len(rows), n_evaluated=len(rows), n_invalid=0,
            found_by="pep", seconds=time.perf_counter() - start, evidence=evidence, certificate=certificate)


#: how a PEP claim is proved (the ``method`` of its certificate)
PROOF_METHOD = ("exact dual certificates of the PEP at each setting (fedbound.pep.dual): rational "
                "multipliers checked in exact arithmetic (the F part, their signs, S >= 0 by an exact "
                "LDL^T) bound the worst case over the whole function class by 'upper', <= the paper's "
                "bound evaluated exactly; the settings' constants are their binary64 values as rationals")


def exact_proofs(m: Method, cfgs: list[dict]) -> list[dict]:
    """An exact dual certificate (:func:`fedbound.pep.dual.prove`) that the worst case is <= the
    paper's bound at each of ``cfgs``, the bound and the theorem's conditions evaluated exactly
    (``m.theory`` at traced numbers); :class:`~fedbound.pep.dual.NotProved` naming the first
    setting that is not proved, and why."""
    from fedbound.theory.certify import trace
    from fedbound.theory.certify.evidence import exact_number

    out = []
    for cfg in cfgs:
        try:
            th = trace.exactly(lambda: m.theory(traced_floats(cfg)))
        except trace.Untraceable as exc:
            raise NotProved(f"the bound at {cfg} is not evaluated exactly ({exc})") from None
        if th is None or not th.applies:
            raise NotProved(f"the theorem does not apply at {cfg} in exact arithmetic "
                            f"({'no theory' if th is None else th.note})")
        bound = trace.to_sympy(th.value)
        rational_bound = Fraction(int(bound.p), int(bound.q)) if bound.is_Rational else \
            Fraction(trace.float_below(bound))
        try:
            proof = prove(m, cfg, rational_bound)
        except NotProved as exc:
            raise NotProved(f"at {cfg}: {exc}") from None
        out.append({"options": {k: v for k, v in cfg.items() if not isinstance(v, str)},
                    "bound": exact_number(bound), **proof.to_dict(),
                    "upper_over_bound": float(proof.upper / rational_bound)})
    return out


def traced_floats(values: dict) -> dict:
    """``values`` with each float as a traced number (:mod:`fedbound.theory.certify.trace`: its
    exact binary value); ints, strings and lists as they are."""
    from fedbound.theory.certify import trace

    return {k: trace.Traced(v) if isinstance(v, float) else v for k, v in values.items()}


def at_cap(result_id: str, variant: str, **constants) -> float:
    """The largest binary64 step not above the exact step-size cap of ``result_id`` at
    ``constants`` (floats read as their binary values; :func:`fedbound.theory.max_step` at traced
    numbers): a step "at the cap" admissible in exact arithmetic (the float cap may lie an ulp
    beyond it) that a rational PEP carries."""
    from fedbound.theory.certify import trace

    result = get(result_id)
    cap = trace.exactly(lambda: result.max_step(variant=variant, **traced_floats(constants))[0])
    return trace.float_below(trace.to_sympy(np.asarray(cap, dtype=object).item()))


def paper_options(m: Method, point: dict) -> dict:
    """The point ``point``, keyed by the papers' letters (the old names of ``m``'s options), as
    ``m``'s options: each letter renamed to its option, without the warning of an old name given
    by a user."""
    names = {alias: o.name for o in m.options for alias in o.aliases}
    return {names.get(k, k): v for k, v in point.items()}


def _sdgt_points() -> list[dict]:
    out = []
    for K in (1, 2):
        base = {"S": 2, "m": 2, "K": K, "T": 1, "L": 1.0, "mu": 0.1, "lam": 0.5, "zeta": 1.0}
        cap = at_cap("sdgt.thm3", "main", L=1.0, mu=0.1, K=K, p=1.0, q=0.75)
        out += [{**base, "gamma": cap}, {**base, "gamma": cap / 2}]
    return out


def _fednova_points() -> list[dict]:
    out = []
    taus = [2, 4]
    for kappa2 in (2.0,):
        base = {"taus": "2,4", "R": 2, "L": 1.0, "Delta": 1.0, "beta2": 1.0, "kappa2": kappa2}
        cap = at_cap("fednova.thm1", "printed", L=1.0, tau_eff=sum(taus) / 2, C=max(t * (t - 1) for t in taus),
                     beta2=1.0, Delta=1.0, T=2, sigma=0.0, m=2, A=1.0, B=1.0, kappa2=kappa2)
        out += [{**base, "eta": cap}, {**base, "eta": cap / 2}]
    return out


def claims() -> list[PepClaim]:
    return [
        PepClaim("pep.sdgt.thm3_rate", "sdgt.thm3", "main",
                 "SD-GT, sigma = 0, full participation, gamma <= gamma_bar: the worst Lyap_2 over "
                 "L-smooth mu-strongly convex f_i with Lyap_1 <= 1 is <= 1 - mu K gamma/4 (98)", "",
                 "sdgt", _sdgt_points),
        PepClaim("pep.fednova.thm1", "fednova.thm1", "printed",
                 "FedNova, sigma = 0, tau = (2, 4), eta under (98)-(99): the worst (1/T) sum_t "
                 "||grad F~(x^t)||^2 over L-smooth F_i with Assumption 3 is <= (97)", "",
                 "fednova", _fednova_points),
    ]


#: the paper ``pep`` of ``fedbound audit``: claims of several papers, each point an SDP
AUDIT = PAPERS.register(PaperAudit(
    "pep", "SD-GT Theorem 3 and FedNova Theorem 1 against worst cases certified by performance "
    "estimation", "", claims,
    evaluated_by="each a worst case certified by performance estimation (an SDP) at its listed constants"))
