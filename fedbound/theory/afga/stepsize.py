r"""AFGA / CAFGA local-learning-rate conditions (seed 000, Appendix E, (25)-(27) [L1947-1999],
Lemmas F.1/F.3 [L2624-2625, L3080-3081]; notes afga.md 4.4 (a)-(c), flags 17, 20).

Every condition constrains the local learning rate :math:`\eta_l` (``variable=eta_l``):

* (a) :math:`\eta_l \le 1/(8IL)` (Lemmas F.1, F.3, F.4). Lemma F.1's algebra [L2801-2810] needs
  :math:`16 I\eta_l^2L^2 \le 1/(2(4I-1))`, which holds for :math:`\eta_l \le 1/(8\sqrt2 IL)` but not
  for 1/(8IL) (flag 17): the "rederived" variant carries the stricter cap.
* (25) [L1947-1961]: :math:`C_{\beta,\eta}\eta[16\eta_l^2(m-1)/(N^2(n-1)) + 2(I+2)\eta_l^2 m/(N^2 n)]
  \le \eta\eta_l/(4C_0)`, printed as implying :math:`\eta_l \le (4C_0C_{\beta,\eta})^{-1}[4(m-1)/(N^2
  (n-1)) + 2(I+2)m/(N^2n)]^{-1}` (coefficient 4 on the right, 16 on the left: flag 20). "printed"
  keeps 4; "rederived" solves the printed left side exactly (16). The N^2 factors are kept as
  printed in both (flag 20: they do not follow from (24)). N = K n.
* (27) [L1994-1999]: :math:`\eta_l \le \epsilon^{1/4}/\sqrt{18L^2C_0C_1I(I+\rho_{max}^2H)\alpha^2}`
  ("4\sqrt\epsilon" read as the fourth root: it is (26)'s first term <= 1/(24 C_0)).

(25) and (27) are **implicit**: :math:`C_0 = \sqrt{\eta_l^2I^2G^2 + \epsilon}` depends on
:math:`\eta_l`. Both have the form :math:`\eta_l \le a\,C_0(\eta_l)^{-k}` (k = 1 for (25), 1/2 for
(27)) with :math:`a` free of :math:`\eta_l` (the extras ``a25`` and ``a27``); :math:`x \mapsto
x\,C_0(x)^k` is increasing, so each admissible set is an interval :math:`(0, x^*]`. They are
implicit :class:`StepCondition` s on :math:`\eta_l`, solved by the engine:
``STEPSIZE.max_step(variant, variable="eta_l", ...)`` returns the largest admissible :math:`\eta_l`
and the binding condition ((a), (25) implicit or (27) implicit).

The extras ``lhs26``/``rhs26`` are both sides of requirement (26) [L1970-1993] (all three terms),
which (27) only controls through its first term (audited in ``fedbound audit afga``).
"""
from __future__ import annotations

import sympy as sp

from fedbound.theory.afga.common import (CLUSTER_RELATIONS, A, C0, C1, H, I, K, L, alpha, eps_a, eta_l, m, n, rho,
                                         where)
from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Result, StepCondition, Variant

N_ = K * n

CAP_A = StepCondition("(a) 1/(8IL)", 1 / (8 * I * L), False, "Lemmas F.1, F.3 [L2624, L3080]",
                      variable=eta_l)
CAP_A_STRICT = StepCondition("(a') 1/(8 sqrt2 IL)", 1 / (8 * sp.sqrt(2) * I * L), False,
                             "what Lemma F.1's algebra needs [L2801-2810], flag 17", variable=eta_l)


def _a25(coefficient: int) -> sp.Expr:
    """The a of (25)'s cap a/C0: 1/(4 A [c (m-1)/(N^2 (n-1)) + 2 (I+2) m/(N^2 n)])."""
    return 1 / (4 * A * (coefficient * (m - 1) / (N_ ** 2 * (n - 1)) + 2 * (I + 2) * m / (N_ ** 2 * n)))


#: the a of (27)'s cap a/sqrt(C0)
A27 = eps_a ** sp.Rational(1, 4) / sp.sqrt(18 * L ** 2 * C1 * I * (I + rho ** 2 * H) * alpha ** 2)

_D = 32 * eta_l ** 2 * L ** 2 * (n - m) / (n * (n - 1))
#: left side of (26) [L1983-1993]: three terms
LHS26 = (3 * L ** 2 * I * C1 * eta_l ** 2 * (I + rho ** 2 * H) * alpha ** 2 / (4 * sp.sqrt(eps_a))
         + (2 * n * (n - m) / (m ** 2 * (n - 1)) + _D) * A * I * C1 * eta_l * H * rho ** 2 * alpha ** 2
         + _D * A * I ** 2 * C1 * eta_l * alpha ** 2)
RHS26 = 1 / (8 * C0)


def _cap25(coefficient: int) -> StepCondition:
    return StepCondition("(25) implicit", _a25(coefficient) / C0, False, "(25) [L1947-1961], flag 20",
                         variable=eta_l)


CAP27 = StepCondition("(27) implicit", A27 / sp.sqrt(C0), False, "(27) [L1994-1999]", variable=eta_l)


def _extras(coefficient: int) -> dict:
    a25 = _a25(coefficient)
    return {"a25": a25, "a27": A27, "C0": C0, "cap25": a25 / C0, "cap27": A27 / sp.sqrt(C0),
            "lhs26": LHS26, "rhs26": RHS26}


STEPSIZE = register(Result(
    id="afga.stepsize",
    rounds="R",
    relations=CLUSTER_RELATIONS,
    title="Local learning-rate conditions of Theorems 4.6 / D.3 ((a), (25), (27))",
    statement="eta_l <= 1/(8IL) (Lemmas F.1, F.3); (25) eta_l <= 1/(4 C0 C_{beta,eta}) [4(m-1)/"
              "(N^2(n-1)) + 2(I+2)m/(N^2 n)]^{-1}; (27) eta_l <= eps^{1/4}/sqrt(18 L^2 C0 C1 I "
              "(I + rho_max^2 H) alpha^2), with C0 = sqrt(eta_l^2 I^2 G^2 + eps) (implicit).",
    provenance=where("(25)-(27)", "1947-1999"),
    assumptions=("Assumptions 4.1-4.3, D.1, D.2", "N = K n, M = K m"),
    lhs="eta_l",
    variants=[
        Variant("printed", "as printed: cap (a) 1/(8IL); (25) with the printed 4 on its right side; "
                           "(25), (27) implicit in C0 (extras a25, a27; solved by max_step)",
                conditions=(CAP_A, _cap25(4), CAP27), extras=_extras(4)),
        Variant("rederived", "cap 1/(8 sqrt2 IL) that Lemma F.1's algebra needs (flag 17); (25) "
                             "solved from its printed left side (coefficient 16, flag 20)",
                conditions=(CAP_A_STRICT, _cap25(16), CAP27), extras=_extras(16)),
    ],
    known_issues=(
        Flag("17", "16 I eta_l^2 L^2 <= 1/(2(4I-1)) [L2801-2810] does not follow from eta_l <= 1/(8IL); "
                   "it needs eta_l <= 1/(8 sqrt2 I L)"),
        Flag("20", "(25): coefficient 16 on the left, 4 on the implied right; the 1/N^2 factors do not "
                   "follow from (24)"),
        Flag("27-implicit", "(25) and (27) depend on eta_l through C0 = sqrt(eta_l^2 I^2 G^2 + eps)"),
        Flag("26", "(27) bounds only the first of the three terms of (26) [L1983-1999]"),
    ),
))


__all__ = ["STEPSIZE", "CAP_A", "CAP_A_STRICT", "CAP27", "A27", "LHS26", "RHS26"]
