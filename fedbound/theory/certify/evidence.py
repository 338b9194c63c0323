"""What backs a verdict (issue 32): the kinds of evidence and exact numbers as JSON.

Every :class:`~fedbound.theory.audit_report.ClaimReport` carries ``evidence``, one of
:data:`EVIDENCE`, and a ``certificate`` (a JSON-ready dict: the method and what backs it):

* ``proved``: on the claim's whole admissible domain (every constant in its domain for the result,
  the result's relations, the claim's premise such as gamma <= cap), by a decision procedure for
  real arithmetic; the certificate keeps the solver's unsat query (its SHA-256, its size, and its
  text where short); for a claim "somewhere" (non-vacuity) an exact witness; for a PEP claim (a
  bound over a function class at listed settings) exact dual certificates, one per setting;
* ``proved-on-box``: on the box of parameters the audit samples (given in the certificate), by
  interval branch and bound (the number of boxes) or the decision procedure on the box;
* ``refuted``: a counterexample that is admissible and violates the claim in exact arithmetic (the
  point as exact rationals, both sides and the exact ratio);
* ``not-refuted``: sampled only (the number of points, how they were searched, the exact value at
  the closest point where it could be computed);
* ``statistical``: an order fitted by least squares or a Monte-Carlo mean (the interval and its
  confidence);
* ``numeric``: a solver's output or floating-point evaluation only, decided up to a tolerance (the
  tolerance is given).

No kind is decided by a float tolerance except ``numeric``, which says so.
"""
from __future__ import annotations

import sympy as sp

#: the kinds of evidence, strongest first
EVIDENCE = ("proved", "proved-on-box", "refuted", "not-refuted", "statistical", "numeric")
#: the evidence kinds that back a "holds" and a "fails" verdict of a universal claim
HOLDS, FAILS = ("proved", "proved-on-box", "not-refuted"), ("refuted",)
#: what each kind of evidence means, for a reader (the referee's document's legend)
MEANINGS = {
    "proved": "proved on the whole admissible domain (a decision procedure's unsat answer, its query "
              "kept; an exact witness for a claim 'somewhere'; for a PEP claim, exact dual certificates "
              "over the whole function class at each listed setting)",
    "proved-on-box": "proved on the box of constants the audit samples (interval branch and bound, "
                     "or the decision procedure on the box)",
    "refuted": "an admissible counterexample that violates the claim in exact arithmetic",
    "not-refuted": "no counterexample among the points sampled and searched (evidence, not proof)",
    "statistical": "an exponent fitted by least squares or a Monte-Carlo mean: an interval at a "
                   "confidence level",
    "numeric": "floating point or a numerical solver only, decided up to a stated tolerance",
}
#: digits of the decimal form of an exact number in a certificate
DIGITS = 50
#: longest exact form (characters) kept beside the decimal one
MAX_EXACT_CHARS = 400


def exact_number(value: sp.Basic) -> dict:
    """An exact number for a certificate: ``exact`` (sympy's string: ``"7/4"``, ``"sqrt(2)/3"``;
    omitted beyond :data:`MAX_EXACT_CHARS`), ``decimal`` (:data:`DIGITS` significant digits) and
    ``float``; infinities as ``"oo"``/``"-oo"`` with float None."""
    value = sp.sympify(value)
    if value in (sp.oo, -sp.oo, sp.zoo, sp.nan):
        return {"exact": str(value), "decimal": None, "float": None}
    decimal = sp.N(value, DIGITS)
    out = {"decimal": str(decimal), "float": float(decimal)}
    if _size(value) <= MAX_EXACT_CHARS:
        out["exact"] = str(value)
    return out


def _size(value: sp.Basic) -> int:
    """About how many characters sympy prints for ``value`` (without printing a huge integer)."""
    if value.is_Rational:
        return (int(value.p).bit_length() + int(value.q).bit_length()) * 3 // 10 + 2
    return sum(_size(a) if a.is_Rational else 4 for a in sp.preorder_traversal(value))


def counts(evidence: list[str]) -> dict[str, int]:
    """How many verdicts each kind of evidence backs (every kind listed, zeros included)."""
    return {kind: sum(e == kind for e in evidence) for kind in EVIDENCE}


__all__ = ["EVIDENCE", "MEANINGS", "HOLDS", "FAILS", "DIGITS", "exact_number", "counts"]
