r"""The rho-condition of Theorems 4.6 / D.3 in its three forms, decided by computation.

Seed 000, eqs. (30)-(32) [L2157-2177], Theorem 4.6 [L291-294], Theorem D.3 [L1103-1105]; notes
afga.md 4.1, 4.4 (d), flags 32 (every ring experiment violates it):

* ``exact`` (30): :math:`\frac{n(n-m)}{m^2(n-1)} H_{I,\rho}\,\rho_{max}^2 \le \frac1n`, with
  :math:`H_{I,\rho} = \min\{I, 1/(1-\rho_{max})\}` (what the simplification (29) -> (33) uses);
* ``sufficient`` (31): :math:`\rho_{max}^2/(1-\rho_{max}) \le m^2/n^2`;
* ``theorem``: :math:`\rho_{max} \le m/(m+n)` (Theorem 4.6 with n = N, m = M; Theorem D.3).

The paper says "(30) implies (31)" [L2163-2166]; only the converse holds ((31) implies (30) since
H <= 1/(1-rho) and (n-1)/(n-m) >= 1), and "theorem" implies both (32). The audit checks all four
implications. Each form is a variant of the registered result ``afga.rho_condition`` carrying the
form as an engine :class:`~fedbound.theory.result.Predicate` (:data:`PREDICATES`; holds / fails in
``Evaluation.predicates`` and ``fedbound bound``) and its two sides as the extras ``predicate_lhs``
and ``predicate_rhs``; :func:`rho_condition` evaluates them and
:func:`largest_rho` gives the largest rho each form admits (closed forms).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np
import sympy as sp

from fedbound.argtypes import Choice, Range
from fedbound.errors import ValidationError
from fedbound.theory.afga.common import H, I, m, n, rho, where
from fedbound.theory.certify import trace as T
from fedbound.theory.certify.trace import is_traced, symbolic
from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Predicate, Result, Variant

FORMS = ("exact", "sufficient", "theorem")
#: one of :data:`FORMS`
Form = Annotated[str, Choice(FORMS)]
#: m, n or I: a number or an array of them, each >= 1
AtLeastOne = Annotated[np.ndarray, Range(1.0)]

#: each form as an engine :class:`Predicate` (lhs <= rhs), reported holds / fails by
#: ``Result.evaluate`` and ``fedbound bound``; the theorems carry them too
PREDICATES = {
    "exact": Predicate("rho-condition (30)", n * (n - m) / (m ** 2 * (n - 1)) * H * rho ** 2, "<=", 1 / n,
                       "(30) [L2157-2162]"),
    "sufficient": Predicate("rho-condition (31)", rho ** 2 / (1 - rho), "<=", m ** 2 / n ** 2,
                            "(31) [L2163-2166]"),
    "theorem": Predicate("rho <= m/(m+n)", rho, "<=", m / (m + n),
                         "Thm 4.6 [L291-294] (n = N, m = M), Thm D.3 [L1103-1105]"),
}


def _form(form: str, text: str) -> Variant:
    p = PREDICATES[form]
    return Variant(form, text, predicates=(p,), extras={"predicate_lhs": p.lhs, "predicate_rhs": p.rhs})


RHO_CONDITION = register(Result(
    id="afga.rho_condition",
    rounds="R",
    title="The rho-condition of Theorems 4.6 / D.3 (exact (30), sufficient (31), theorem's form)",
    statement="(30) n(n-m)/(m^2(n-1)) H rho_max^2 <= 1/n; (31) rho_max^2/(1 - rho_max) <= m^2/n^2; "
              "Theorem 4.6/D.3: rho_max <= m/(m+n). Each variant's predicate holds iff predicate_lhs <= predicate_rhs.",
    provenance=where("(30)-(32), Thm 4.6, Thm D.3", "2157-2177"),
    assumptions=("Assumption 4.5 / D.2: ||W_k - J||_2 <= rho_k <= rho_max < 1", "1 <= m <= n"),
    lhs="predicate_lhs (extra; the condition holds iff predicate_lhs <= predicate_rhs)",
    variants=[
        _form("exact", "(30), the requirement the simplification of (29) to (33) uses"),
        _form("sufficient", "(31), sufficient for (30)"),
        _form("theorem", "Theorem 4.6 (n = N, m = M) and Theorem D.3: rho_max <= m/(m+n)"),
    ],
    known_issues=(
        Flag("30=>31", "the text says (30) implies (31) [L2163-2166]; only (31) => (30) holds"),
        Flag("32", "the paper's rings (self weight 1/3) have rho = 0.9947 (N=50), 0.9987 (N=100), "
                   "0.8727 (n=10), 0.9674 (n=20), far above m/(m+n) <= 0.0909 [L598, L601, L999]"),
    ),
    default_variant="theorem",
))


@dataclass(frozen=True)
class RhoCheck:
    """One form of the rho-condition at given (rho, m, n[, I]): ``holds`` iff lhs <= rhs;
    ``margin`` = rhs - lhs (negative when it fails); ``largest_rho`` the largest rho it admits."""

    form: str
    holds: np.ndarray
    lhs: np.ndarray
    rhs: np.ndarray
    margin: np.ndarray
    largest_rho: np.ndarray


def rho_condition(rho_value: float | np.ndarray, m_value: float | np.ndarray, n_value: float | np.ndarray,
                  I_value: float | np.ndarray | None = None, form: Form = "theorem") -> RhoCheck:
    """Evaluate one form (``exact`` needs ``I_value``) of the rho-condition, vectorized (m <= n is
    the engine's order relation afga.m <= afga.n)."""
    if form not in FORMS:
        raise ValidationError(f"form must be one of {', '.join(FORMS)}, got {form!r}")
    if form == "exact" and I_value is None:
        raise ValidationError("form 'exact' (30) depends on I through H = min(I, 1/(1-rho)); pass I_value")
    constants = {"rho": rho_value, "m": m_value, "n": n_value}
    if I_value is not None:   # checked in its domain even where the form does not use it
        constants["I"] = I_value
    ev = RHO_CONDITION.evaluate(form, **constants)
    lhs, rhs = ev.extras["predicate_lhs"], ev.extras["predicate_rhs"]
    return RhoCheck(form, ev.predicates[PREDICATES[form].name], lhs, rhs, rhs - lhs, largest_rho(form, m_value, n_value, I_value))


def largest_rho(form: Form, m_value: AtLeastOne, n_value: AtLeastOne, I_value: AtLeastOne | None = None
                ) -> np.ndarray:
    """The largest rho in [0, 1] admitted by ``form`` (1 when every rho < 1 is admitted).

    theorem: m/(m+n). sufficient: the root of rho^2 = c (1 - rho), c = m^2/n^2. exact: with
    c = m^2 (n-1)/(n^2 (n-m)) (inf if m = n), the map rho -> H rho^2 is increasing, equal to
    rho^2/(1-rho) up to rho = 1 - 1/I and to I rho^2 after; its level-c point is in the first branch
    when c <= I (1 - 1/I)^2, else sqrt(c/I) (capped at 1).
    """
    if is_traced(m_value, n_value, I_value):
        return _traced_largest_rho(form, m_value, n_value, I_value)
    m_, n_ = np.asarray(m_value, float), np.asarray(n_value, float)
    if form == "theorem":
        return m_ / (m_ + n_)

    def root(c):
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(np.isinf(c), 1.0, 2 * c / (c + np.sqrt(c ** 2 + 4 * c)))

    if form == "sufficient":
        return root(m_ ** 2 / n_ ** 2)
    if form != "exact" or I_value is None:
        raise ValidationError(f"largest_rho: form must be one of {', '.join(FORMS)} (exact needs I_value)")
    i_ = np.asarray(I_value, float)
    with np.errstate(divide="ignore"):
        c = np.where(m_ == n_, np.inf, m_ ** 2 * (n_ - 1) / (n_ ** 2 * np.maximum(n_ - m_, 0)))
    first = c <= i_ * (1 - 1 / i_) ** 2
    with np.errstate(invalid="ignore"):
        second = np.minimum(np.sqrt(c / i_), 1.0)
    return np.where(first, root(c), second)


def _traced_largest_rho(form: Form, m_, n_, I_) -> np.ndarray:
    """:func:`largest_rho` on traced numbers (the certifier's exact and symbolic evaluation,
    :mod:`fedbound.theory.certify.trace`): the same closed forms, m = n (c infinite) read as its
    limit 1."""
    if form == "theorem":
        return m_ / (m_ + n_)
    if symbolic(m_, n_, I_):
        return _witness_rho(form, m_, n_, I_)

    def root(c):
        return 2 * c / (c + np.sqrt(c ** 2 + 4 * c))

    if form == "sufficient":
        return root(m_ ** 2 / n_ ** 2)
    if form != "exact" or I_ is None:
        raise ValidationError(f"largest_rho: form must be one of {', '.join(FORMS)} (exact needs I_value)")
    one = m_ / m_
    equal = m_ == n_
    c = np.where(equal, one, m_ ** 2 * (n_ - 1) / (n_ ** 2 * np.where(equal, one, n_ - m_)))
    first = np.where(c <= I_ * (1 - 1 / I_) ** 2, root(c), np.minimum(np.sqrt(c / I_), one))
    return np.where(equal, one, first)


def _witness_rho(form: Form, m_, n_, I_) -> np.ndarray:
    """Over symbols (the certifier's symbolic form of a claim): a value top in (0, 1) at which the
    form's predicate holds, in place of the largest one. A claim samples rho = fraction x
    largest_rho, fraction in (0, 1]: since each form's left side increases with rho (rho^2/(1-rho),
    and H rho^2, docstring of :func:`largest_rho`), the predicate holds exactly on (0, largest], and
    fraction x top over every such top gives the same values of rho."""
    p = PREDICATES[form]
    values = {m: m_, n: n_, **({I: I_} if I_ is not None else {})}
    values = {s: T.to_sympy(np.asarray(v, dtype=object).reshape(-1)[0]) for s, v in values.items()}

    def conditions(top):
        at = {**values, rho: top}
        return [sp.Gt(top, 0), sp.Lt(top, 1),
                sp.Le(p.lhs.xreplace(at), p.rhs.xreplace(at), evaluate=False)]

    return T.array([T.witness("rho_top", conditions)])


__all__ = ["RHO_CONDITION", "FORMS", "PREDICATES", "RhoCheck", "rho_condition", "largest_rho"]
