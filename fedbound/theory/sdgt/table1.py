"""SD-GT Table I (rounds to an eps-stationary point) and the special case (32).

Seed 003, Table I [L431-L437], (32) [L464-L466]; papers/sdgt.md 4.8. One result per row, ids
``sdgt.table1.<method>``, plus ``sdgt.eq32``. Each "bound" is the number of communication rounds
T(eps) with the O-constants set to 1 as in the paper (L and E1 suppressed), so ``rate_exponents(
in_symbol="eps")`` gives the powers of eps of each term:

    SCAFFOLD  sigma^2/(n K eps^2) + 1/eps
    K-GT      sigma^2/(n K eps^2) + sigma/(rho^2 sqrt(K)) eps^(-3/2) + 1/(rho^2 eps)
    LED       sigma^2/(n K eps^2) + sigma/sqrt(rho K) eps^(-3/2) + 1/(rho eps)
    H-SGD     sigma^2/(n eps^2) + (sqrt(K) sigma + K eta + eta_s) eps^(-3/2) + K/eps
    SD-GT     sigma^2/(n K eps^2) + sigma/(p^2 q sqrt(K)) eps^(-3/2) + 1/(p^2 q eps)
    (32)      sigma^2/(n K eps^2) + sigma/(rho sqrt(K)) eps^(-3/2) + 1/(rho eps)   (SD-GT, p = 1, q = rho)

Rounds are device-server rounds for SCAFFOLD, H-SGD and SD-GT, D2D rounds for K-GT and LED [L460].
:func:`table1_rounds` evaluates every row at once (used by ``fedbound rounds``).

:func:`regime` says when SD-GT's guarantee is the weaker one. With the O-constants set to 1,
SD-GT's row minus SCAFFOLD's is sigma/(p^2 q sqrt(K)) eps^(-3/2) + (1/(p^2 q) - 1)/eps >= 0 (p, q
<= 1): SD-GT's guarantee is never the stronger of the two, and it is the weaker one wherever those
terms are not dominated by the noise term sigma^2/(n K eps^2) both rows share, i.e. at large eps,
small p^2 q (few devices sampled, slow mixing) and small sigma; as eps -> 0 with sigma > 0 the
two rows agree. At given constants :func:`regime` names the method with the fewest rounds, SD-GT's
dominant term and its share, and the largest eps below the given one at which SD-GT's rounds come
within :data:`AGREE_FACTOR` of that method's.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from fedbound.argtypes import Positive
from fedbound.errors import ValidationError
from fedbound.readout import number, ratio_words

from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Result, Variant
from fedbound.theory.sdgt.common import declare, K, p, q, where
from fedbound.theory.symbols import NONNEGATIVE, UNIT, n, sigma
from fedbound.theory.symbols import eps as epsilon

rho = declare("rho", UNIT, "connectivity of a single decentralized network (Table I; rho = 1: "
                           "fully connected)", latex="rho")
eta = declare("eta", NONNEGATIVE, "H-SGD: bound on the gradient divergence between subnets (Table I)",
              latex="eta")
eta_s = declare("eta_s", NONNEGATIVE, "H-SGD: sum over subnets s of the within-subnet gradient-divergence "
                                      "bounds eta_s (Table I)", latex="eta_s")

_noise = sigma ** 2 / (n * K * epsilon ** 2)
_eps32 = epsilon ** sp.Rational(-3, 2)

#: the terms of each row, in order of decreasing power of 1/eps
ROWS: dict[str, tuple[sp.Expr, ...]] = {
    "SCAFFOLD": (_noise, 1 / epsilon),
    "K-GT": (_noise, sigma / (rho ** 2 * sp.sqrt(K)) * _eps32, 1 / (rho ** 2 * epsilon)),
    "LED": (_noise, sigma / sp.sqrt(rho * K) * _eps32, 1 / (rho * epsilon)),
    "H-SGD": (sigma ** 2 / (n * epsilon ** 2), (sp.sqrt(K) * sigma + K * eta + eta_s) * _eps32, K / epsilon),
    "SD-GT": (_noise, sigma / (p ** 2 * q * sp.sqrt(K)) * _eps32, 1 / (p ** 2 * q * epsilon)),
}
EQ32_TERMS = (_noise, sigma / (rho * sp.sqrt(K)) * _eps32, 1 / (rho * epsilon))

_ID = {"SCAFFOLD": "scaffold", "K-GT": "kgt", "LED": "led", "H-SGD": "hsgd", "SD-GT": "sdgt"}
_CITED = {"SCAFFOLD": "[35] (cited as [21] among the baselines, F35)", "K-GT": "[32]", "LED": "[2]",
          "H-SGD": "[51], with I_s = 1", "SD-GT": "this paper, Corollary 1 (13)"}
_LINE = {"SCAFFOLD": "433", "K-GT": "434", "LED": "435", "H-SGD": "436", "SD-GT": "437"}

TABLE1 = {
    method: register(Result(
        id=f"sdgt.table1.{_ID[method]}",
        title=f"Table I, row {method}: rounds to epsilon (non-convex)",
        statement=f"{method} {_CITED[method]} reaches an epsilon-stationary point in "
                  f"O({' + '.join(sp.sstr(t) for t in terms)}) communication rounds.",
        provenance=where("Table I", _LINE[method]),
        assumptions=("O-constants (L, E1, ...) set to 1 as in the paper",),
        lhs="T(epsilon): communication rounds to reach an epsilon-stationary point",
        variants=[Variant("printed", "the Table I row as printed, O-constants set to 1",
                          bound=sp.Add(*terms))],
        known_issues=(Flag("F35", "SCAFFOLD cited as [35] (ProxSkip) in Table I but as [21] among "
                                  "the baselines; the gradient-correction check marks were lost in "
                                  "extraction"),) if method == "SCAFFOLD" else (),
    ))
    for method, terms in ROWS.items()
}

EQ32 = register(Result(
    id="sdgt.eq32",
    title="Special case (32): SD-GT with one subnet and full sampling (p = 1, q = rho)",
    statement="With one subnet and full sampling (p = 1, q = rho) SD-GT needs "
              "O(sigma^2/(nK epsilon^2) + sigma/(rho sqrt(K)) epsilon^(-3/2) + 1/(rho epsilon)) rounds: the first "
              "term matches K-GT and LED, the second lies between them, the third beats K-GT.",
    provenance=where("(32)", "464-466"),
    assumptions=("one subnet, the server samples every client (p = 1, q = rho)",
                 "O-constants set to 1"),
    lhs="T(epsilon): communication rounds to reach an epsilon-stationary point",
    variants=[Variant("printed", "(32) as printed, O-constants set to 1", bound=sp.Add(*EQ32_TERMS))],
))

#: the rows of :func:`table1_rounds`, in table order
METHODS = {**TABLE1, "SD-GT (32)": EQ32}


def table1_rounds(eps: float | np.ndarray, **constants) -> dict[str, np.ndarray]:
    """Rounds to ``eps`` of every Table I method (and of (32)), O-constants set to 1.

    ``constants`` must hold sigma, n, K, rho, p, q, eta, eta_s (scalars or broadcastable arrays);
    every value is checked against its domain and an unknown name raises
    :class:`~fedbound.errors.UnknownNameError`.

    >>> rounds = table1_rounds(1e-2, sigma=1, n=10, K=5, rho=0.5, p=0.8, q=0.5, eta=1, eta_s=1)
    >>> sorted(rounds)[:2]
    ['H-SGD', 'K-GT']
    """
    values = {"eps": eps, **constants}
    for result in METHODS.values():   # names, kinds and domains, before any row is evaluated
        result.check(values)
    return {method: result.bound(**values) for method, result in METHODS.items()}


#: two Table I guarantees within this factor of each other count as agreeing (:func:`regime`)
AGREE_FACTOR = 2.0
#: :func:`regime` looks for agreement at eps down to this factor below the given one
EPS_DECADES = 12
#: the methods whose rounds are D2D rounds [L460]
_UNITS = {"K-GT": "D2D rounds", "LED": "D2D rounds"}


def _agreement_eps(eps: float, best: str, values: dict) -> float | None:
    """The largest eps' <= eps (down to eps 10^-EPS_DECADES) at which SD-GT's rounds are at most
    AGREE_FACTOR times ``best``'s, by a grid in log eps refined by bisection; None if none."""
    sdgt, other = TABLE1["SD-GT"], TABLE1[best]

    def ratio(e):
        return sdgt.bound(**{**values, "eps": e}) / other.bound(**{**values, "eps": e})

    grid = eps * np.logspace(0, -EPS_DECADES, 20 * EPS_DECADES + 1)
    ok = ratio(grid) <= AGREE_FACTOR
    if not np.any(ok):
        return None
    i = int(np.argmax(ok))
    if i == 0:
        return float(eps)
    lo, hi = float(np.log(grid[i])), float(np.log(grid[i - 1]))    # agrees at lo, not at hi
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ratio(np.exp(mid)) <= AGREE_FACTOR else (lo, mid)
    return float(np.exp(lo))


def regime(eps: Positive, **constants) -> dict:
    """When SD-GT's Table I guarantee is the weaker one (module doc), at one point: ``rounds`` per
    method, the ``best`` method (fewest rounds), ``factor`` SD-GT's rounds over the best's,
    ``weaker_than`` the methods with fewer rounds than SD-GT, SD-GT's ``terms`` (formula ->
    rounds) with its ``dominant`` term and ``dominant_share``, ``agree_below`` (the largest eps at
    which SD-GT comes within AGREE_FACTOR of the best, None if none within EPS_DECADES decades) and
    ``words``, the reading in sentences. Scalar constants only.

    >>> r = regime(1e-3, sigma=1, n=30, K=5, p=0.64, q=0.5, rho=0.5, eta=1, eta_s=1)
    >>> r["best"], r["weaker_than"]
    ('SCAFFOLD', ['SCAFFOLD', 'LED', 'K-GT'])
    """
    values = {"eps": eps, **constants}
    rounds = table1_rounds(eps, **constants)
    if any(np.ndim(v) for v in rounds.values()):
        raise ValidationError("regime compares Table I at one point: give scalar eps and constants, "
                              f"got arrays for {sorted(k for k, v in values.items() if np.ndim(v))}")
    rows = {m: float(rounds[m]) for m in ROWS}
    best = min(rows, key=rows.get)
    sdgt = rows["SD-GT"]
    ev = TABLE1["SD-GT"].evaluate(**values)
    terms = {k: float(v) for k, v in ev.terms.items()}
    dominant = max(terms, key=terms.get)
    share = terms[dominant] / sdgt
    pq = float(constants["p"]) ** 2 * float(constants["q"])
    out = {"eps": float(eps), "rounds": rows, "best": best, "factor": sdgt / rows[best],
           "weaker_than": sorted((m for m in rows if rows[m] < sdgt), key=rows.get),
           "terms": terms, "dominant": dominant, "dominant_share": share, "p2q": pq,
           "agree_factor": AGREE_FACTOR, "agree_below": None}
    lead = (f"SD-GT's dominant term is {dominant} = {number(terms[dominant], 4)} ({number(100 * share, 3)}% "
            f"of its {number(sdgt, 4)} rounds; p^2 q = {number(pq, 4)})")
    if best == "SD-GT":
        out["words"] = (f"SD-GT's guarantee is the strongest of Table I at eps = {number(eps)} (O-constants "
                        f"set to 1). {lead}.")
        return out
    agree = _agreement_eps(float(eps), best, values)
    out["agree_below"] = agree
    unit = f" ({_UNITS[best]}, against SD-GT's device-server rounds [L460])" if best in _UNITS else ""
    text = (f"SD-GT's guarantee is the weaker one at eps = {number(eps)} (O-constants set to 1): "
            f"{ratio_words(sdgt / rows[best])} more rounds than {best} ({number(sdgt, 4)} against "
            f"{number(rows[best], 4)}{unit}); methods with fewer rounds: {', '.join(out['weaker_than'])}. "
            f"{lead}. ")
    if agree is None:
        text += (f"No eps down to {number(eps * 10.0 ** -EPS_DECADES, 3)} brings it within a factor "
                 f"of {number(AGREE_FACTOR)} of {best}")
        text += (": with sigma = 0 no noise term dominates, and the gap stays about 1/(p^2 q)."
                 if float(constants["sigma"]) == 0 else ".")
    else:
        text += (f"It comes within a factor of {number(AGREE_FACTOR)} of {best} for eps <= "
                 f"{number(agree, 3)}, where the noise term sigma^2/(n K eps^2) dominates.")
    out["words"] = text + (" SD-GT's row is never below SCAFFOLD's (p^2 q <= 1): it is the weaker "
                           "guarantee at large eps, small p^2 q (few devices sampled, slow mixing) "
                           "and small sigma.")
    return out
