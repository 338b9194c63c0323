"""Worst-case certificates (issue 13): :func:`certify` runs one method through every backend.

For a method of :data:`fedbound.pep.method.PEP_METHODS` and its options it

1. builds the PEP (:class:`fedbound.pep.symbolic.PepEnv`; refused while building beyond
   :data:`fedbound.pep.symbolic.MAX_GRAM` points) and solves it with the fallback chain
   (:func:`fedbound.pep.solver.solve`): ``worst_case`` (the dual value: an upper bound on the
   metric over the class, tight up to solver accuracy), ``status``, ``solver``, ``duality_gap``;
2. replays the SDP's worst function through the algorithm (:class:`fedbound.pep.numeric.ReplayEnv`):
   ``replay_value`` must equal ``worst_case`` within solver accuracy, ``replay_mismatch`` is the
   largest distance between a point the algorithm queried and the recorded one;
3. searches explicit quadratic instances (:func:`fedbound.pep.lower_bound.search`): ``lower_bound``
   and its instance, re-evaluated (:func:`fedbound.pep.lower_bound.check_instance`):
   ``lower_bound_worst_condition``, the largest ratio of a condition of the class to its bound at the
   instance (<= 1: it belongs to the class), its metric equal to ``lower_bound``;
4. evaluates the papers' bound where one exists (``theory``, its ``theory_source``, whether its
   conditions hold: ``theory_applies``).

``verdict`` is computed: "tight" when lower_bound >= (1 - TIGHT_RTOL) worst_case (TIGHT_RTOL = 1e-3),
else "gap"; with "; theory holds" / "; theory violated by <ratio>" (definite when the quadratic
lower bound itself exceeds the bound) / "; theory does not apply (<why>)" (plus "and its bound is
exceeded <ratio>x" where the worst case is above it) appended where there is a theory. A
lower bound above the worst case beyond solver tolerance means the PEP does not model the
algorithm, and an instance that breaks a condition or does not give its value means the search is
wrong: both raise (an internal error, never a silent answer).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from fedbound.argtypes import Count
from fedbound.display import box, brief, details, fields, shown, table
from fedbound.errors import UnknownNameError
from fedbound.jsonable import jsonable
from fedbound.pep import lower_bound as lb
from fedbound.pep.method import PEP_METHODS, Method
from fedbound.pep.numeric import ReplayEnv
from fedbound.pep.solver import solve
from fedbound.readout import ratio_words
from fedbound.pep.symbolic import PepEnv
from fedbound.validate import suggest

#: relative slack of solver accuracy in comparisons (Clarabel reaches ~1e-8; SCS less)
RTOL = 1e-5
#: relative slack of a re-evaluated lower-bound instance (float64 arithmetic of the same run)
INSTANCE_RTOL = 1e-9
#: a verdict is "tight" when the quadratic lower bound is within this share of the worst case
TIGHT_RTOL = 1e-3


@dataclass
class Certificate:
    """The outcome of :func:`certify` (module doc)."""

    method: str
    options: dict
    worst_case: float
    status: str
    solver: str
    gram_size: int
    duality_gap: float
    lower_bound: float
    lower_bound_instance: dict
    lower_bound_worst_condition: float
    theory: float | None
    theory_source: str | None
    theory_applies: bool | None
    theory_note: str
    replay_value: float
    replay_mismatch: float
    verdict: str
    seconds: float

    def to_dict(self) -> dict:
        return jsonable(asdict(self))

    # -- shown to a reader (:mod:`fedbound.display`) ---------------------------------------------
    def __repr__(self) -> str:
        theory = {} if self.theory is None else {"theory": self.theory}
        return brief("Certificate", self.method, worst_case=self.worst_case, lower_bound=self.lower_bound,
                     **theory, verdict=self.verdict)

    def _repr_html_(self) -> str:
        """The worst case, the quadratic lower bound (tight or with a gap), the papers' bound and
        whether it holds, with the ratios in words; the solver, the replay; options and instance
        folded."""
        rows: list[tuple[str, object]] = [
            ("worst case (PEP)", self.worst_case),
            ("lower bound (quadratic instance)", f"{shown(self.lower_bound)}: "
             f"{ratio_words(self.worst_case / self.lower_bound) if self.lower_bound > 0 else 'none found'} "
             f"below the worst case" if self.lower_bound != self.worst_case else shown(self.lower_bound))]
        if self.theory is not None:
            rows.append(("theory", f"{shown(self.theory)} ({self.theory_source})"
                         + ("" if self.theory_applies else f"; does not apply: {self.theory_note}")))
            if self.theory > 0:
                rows.append(("theory / worst case", ratio_words(self.theory / self.worst_case)
                             if self.worst_case > 0 else "the worst case is 0"))
        rows += [("verdict", self.verdict),
                 ("solver", f"{self.solver} ({self.status}), Gram matrix {self.gram_size}x{self.gram_size}, "
                            f"duality gap {shown(self.duality_gap, 3)}"),
                 ("replay", f"{shown(self.replay_value)} (largest mismatch {shown(self.replay_mismatch, 3)})"),
                 ("seconds", self.seconds)]
        return box(f"PEP certificate: {self.method}", [
            fields(rows),
            details(f"{len(self.options)} options", [table(["option", "value"], [[k, v] for k, v in self.options.items()])]),
            details("lower-bound instance", [table(["", "value"], [[k, v] for k, v in self.lower_bound_instance.items()])]),
        ], subtitle=self.verdict).text


def method(name: str) -> Method:
    """The registered method ``name`` (did-you-mean on a typo)."""
    if not (isinstance(name, str) and name in PEP_METHODS):
        known = PEP_METHODS.names()
        raise UnknownNameError(f"unknown pep method {name!r}{suggest(str(name), known)}; "
                               f"known: {', '.join(known)}")
    return PEP_METHODS.get(name)


def _solved(m: Method, cfg: dict):
    """(solution, env) of the PEP of method ``m`` at options ``cfg`` taken as they are (already
    validated by ``m.config``, possibly rescaled since, as :mod:`fedbound.pep.compose` does)."""
    env = PepEnv(**m.setting(cfg), label=f"PEP of {m.name}")
    m.build(env, cfg)
    env.close()
    return solve(env.problem), env


def worst_case(name: str, cfg: dict):
    """(solution, env) of the PEP of method ``name`` at options ``cfg`` (validated again by the
    method, so that a bad value is named before the solver runs)."""
    m = method(name)
    return _solved(m, m.config(**cfg))


def certify(name: str, lower_bound_starts: Count = 24, **options) -> Certificate:
    """The certificate of method ``name`` with ``options`` (module doc; ``fedbound pep NAME``).

    >>> c = certify("gd", steps=2, lr=1.0, L=1.0, mu=0.1, lower_bound_starts=2)
    >>> round(c.worst_case, 6), c.verdict
    (0.6561, 'tight; theory holds')
    """
    start = time.perf_counter()
    m = method(name)
    cfg = m.config(**options)
    sol, env = _solved(m, cfg)
    replay = ReplayEnv(env)
    m.build(replay, cfg)
    lower, instance = lb.search(m, cfg, starts=lower_bound_starts)
    scale = max(abs(sol.value), 1e-12)
    if lower > sol.value + RTOL * scale + 1e-9:
        raise AssertionError(f"{name}: quadratic lower bound {lower} above the PEP worst case {sol.value}")
    check = lb.check_instance(m, cfg, instance)
    if check["worst_condition"] > 1 + INSTANCE_RTOL or \
            abs(check["value"] - lower) > INSTANCE_RTOL * max(abs(lower), 1e-300):
        raise AssertionError(f"{name}: the lower bound's instance re-evaluates to {check['value']} with a "
                             f"condition at {check['worst_condition']} of its bound (reported {lower})")
    th = m.theory(cfg)
    verdict = "tight" if lower >= (1 - TIGHT_RTOL) * sol.value else "gap"
    if th is not None:
        if not th.applies:
            exceeded = sol.value > th.value * (1 + RTOL) + 1e-12
            verdict += f"; theory does not apply ({th.note})" + \
                (f" and its bound is exceeded {sol.value / th.value:.4g}x" if exceeded else "")
        elif sol.value <= th.value * (1 + RTOL) + 1e-12:
            verdict += "; theory holds"
        else:
            definite = "definite: the quadratic lower bound exceeds it" if lower > th.value * (1 + RTOL) else \
                "the PEP value exceeds it"
            verdict += f"; theory violated by {sol.value / th.value:.4g}x ({definite})"
    return Certificate(
        method=name, options=cfg, worst_case=sol.value, status=sol.status, solver=sol.solver,
        gram_size=sol.gram_size, duality_gap=sol.duality_gap, lower_bound=lower, lower_bound_instance=instance,
        lower_bound_worst_condition=check["worst_condition"],
        theory=None if th is None else th.value, theory_source=None if th is None else th.source,
        theory_applies=None if th is None else th.applies, theory_note="" if th is None else th.note,
        replay_value=float(replay.metric), replay_mismatch=replay.mismatch, verdict=verdict,
        seconds=time.perf_counter() - start)
