r"""Theorem D.3 (CAFGA) and Theorem 4.6 (AFGA): the explicit bound (33) and the O-forms (8), (3).

Seed 000: Theorem 4.6 (3) [L291-314], Theorem D.3 (8) [L1093-1122], explicit bound (33)
[L2179-2275], rate schedule [L2276-2280], K = 1 reduction (37) [L2602-2621]; notes afga.md 4.1,
4.3, 4.4, flags 21-24, 32, 33.

Explicit form (33), valid under (a), (25), (27) (see ``afga.stepsize``) and the rho-condition (30):

.. math::
    \frac1R\sum_r E\|\nabla f(x_r)\|^2 \le 8C_0\{T_1 + T_2 + T_3 + T_4 + T_5 + T_6T_7 + T_8\}

with :math:`C_0 = \sqrt{\eta_l^2I^2G^2+\epsilon}`, :math:`A = C_{\beta,\eta}`,
:math:`C_\beta = \beta_1/(1-\beta_1)`, :math:`H = \min\{I, 1/(1-\rho_{max})\}`,
:math:`q = m(n-m)/(n(n-1))`, N = K n and

* T1 = n Delta f/(eta eta_l R I m) + (1/R)(C_beta G^2 d/sqrt(eps) + 2 C_beta^2 eta eta_l I L G^2 d m/(eps n))
  (the printed numerator "E f(z_{r+1}) - f(z_0)" is read as f(z_1) - E f(z_{R+1}) <= Delta f, flag 23)
* T2 = C L^2 eta_l^2/(4 sqrt(eps)) [I(I+H) sigma_c^2 + I rho^2 H sigma_l^2 + (n+1)/n I sigma^2 rho^2
  + q I^2 sigma_l^2]
* T3 = (eta_l/N) A sigma^2;  T4 = (C3 eta_l/n) A (sigma_l^2 + sigma_c^2)
* T5 = (C2 eta_l/n) A [sigma_c^2 + sigma_l^2 + sigma^2 + H sigma^2/(I^2 n) + q (H/I) sigma_l^2]
* T6 = C3 L^2 eta_l^3 I A/n;  T7 = (I + H rho^2) sigma_c^2 + H rho^2 sigma_l^2 + (n+1)/n rho^2 sigma^2
  + sigma^2/n + q I sigma_l^2
* T8 = C4 (I+1)^2 eta_l^3 (m/n) A [sigma_c^2 + sigma_l^2 + sigma^2 + H sigma^2/(I^2 n) + q (H/I) sigma_l^2]

Variants: "printed" (33); "rederived" adds to T2's bracket the term I sigma^2/n that dividing
(28) by eta eta_l I leaves from 3 L^2 C1 I^2 eta_l^2 sigma^2/n and (33) drops (flag 24: so rho = 0
does not remove every sigma^2/R term); "rederived-schedule" is "rederived" at the theorem's rates
eta = c_eta n sqrt(I/m), eta_l = c_l/(I sqrt(R)) [L2276-2280] (a function of R, for
rounds_to_eps and rate_exponents; its step-size conditions are those of ``afga.stepsize`` at these
rates); "eq29" is the pre-simplification form (29) [L2083-2147], valid without (30); "O" is the
O-form with unit constants and without the O~(R^{-3/2}) term, whose hidden constants are
unspecified. Theorem 4.6 is the K = 1 case: n = N, m = M, sigma_c = 0,
sigma_l = sigma_g (alpha = 1).
"""
from __future__ import annotations

import sympy as sp

from fedbound.theory.afga.common import (CLUSTER_RELATIONS,
                                         A, C0, C1, C2, C3, C4, H, C, C_beta, G, I, K, L, M, N, R, c_eta,
                                         alpha, c_l, d, eps_a, eta, eta_l, f_gap, m, n, q, rho,
                                         sigma, sigma_c, sigma_g, sigma_l, where)
from fedbound.theory.afga.rho import PREDICATES
from fedbound.theory.afga.stepsize import CAP_A, STEPSIZE
from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Predicate, Reference, Result, StepCondition, Variant
from fedbound.theory.statement import Measure


def explicit_terms(rederived: bool) -> dict[str, sp.Expr]:
    """T1..T8 of (33) [L2179-2275] (and C0), CAFGA symbols; ``rederived`` adds flag 24's term."""
    s2, sl2, sc2 = sigma ** 2, sigma_l ** 2, sigma_c ** 2
    noise = sc2 + sl2 + s2 + H * s2 / (I ** 2 * n) + q * H / I * sl2
    t2 = I * (I + H) * sc2 + I * rho ** 2 * H * sl2 + (n + 1) / n * I * s2 * rho ** 2 + q * I ** 2 * sl2
    if rederived:
        t2 += I * s2 / n
    return {
        "T1": (n * f_gap / (eta * eta_l * R * I * m)
               + (C_beta * G ** 2 * d / sp.sqrt(eps_a)
                  + 2 * C_beta ** 2 * eta * eta_l * I * L * G ** 2 * d * m / (eps_a * n)) / R),
        "T2": C * L ** 2 * eta_l ** 2 / (4 * sp.sqrt(eps_a)) * t2,
        "T3": eta_l / (K * n) * A * s2,
        "T4": C3 * eta_l / n * A * (sl2 + sc2),
        "T5": C2 * eta_l / n * A * noise,
        "T6": C3 * L ** 2 * eta_l ** 3 * I / n * A,
        "T7": ((I + H * rho ** 2) * sc2 + H * rho ** 2 * sl2 + (n + 1) / n * rho ** 2 * s2 + s2 / n
               + q * I * sl2),
        "T8": C4 * (I + 1) ** 2 * eta_l ** 3 * m / n * A * noise,
        "C0": C0,
    }


def explicit_bound(terms: dict[str, sp.Expr]) -> sp.Expr:
    """8 C0 (T1 + ... + T5 + T6 T7 + T8), one additive term per T (T6 T7 together)."""
    t = terms
    return sp.Add(*(8 * t["C0"] * x for x in (t["T1"], t["T2"], t["T3"], t["T4"], t["T5"],
                                                t["T6"] * t["T7"], t["T8"])))


def eq29_bound() -> sp.Expr:
    """8 C0 times the right side of (29) [L2083-2147], the form before (30) is applied, with the 1/R
    of the C_beta^2 term restored as (33) has it (flag 21); CAFGA symbols, N = K n."""
    s2, sl2, sc2 = sigma ** 2, sigma_l ** 2, sigma_c ** 2
    noise = s2 / n + q * I * sl2
    consensus = C1 * eta_l * rho ** 2 * (H * sc2 + H * sl2 + s2 + H ** 2 / I ** 2 * noise)
    drift = 2 * n * (n - m) / (m ** 2 * (n - 1)) + 64 * eta_l ** 2 * I * L ** 2 * (n - m) / (n * (n - 1)) \
        + 4 * eta_l ** 2 * (I + 1) ** 2 * L ** 2
    sampling = 64 * (n - m) / (n * (n - 1)) * (C1 * L ** 2 * eta_l ** 3 * I ** 2 * sc2
                                               + C1 * L ** 2 * eta_l ** 3 * I * noise
                                               + eta_l * sl2 + eta_l * sc2)
    rhs = (n * f_gap / (eta * eta_l * R * I * m)
           + C * L ** 2 * eta_l ** 2 * I * ((I + H) * sc2 + rho ** 2 * H * sl2 + q * I * sl2
                                            + s2 * rho ** 2 * (1 + 1 / n)) / (4 * sp.sqrt(eps_a))
           + C_beta * G ** 2 * d / (R * sp.sqrt(eps_a))
           + 2 * C_beta ** 2 * m / n * L * eta * eta_l * I * G ** 2 * d / (eps_a * R)
           + A / 2 * (2 * eta_l * s2 / (K * n) + drift * consensus + sampling))
    return 8 * C0 * rhs


SCHEDULE = {eta: c_eta * n * sp.sqrt(I / m), eta_l: c_l / (I * sp.sqrt(R))}
AFGA = {K: 1, n: N, m: M, sigma_c: 0, sigma_l: sigma_g, alpha: 1}


def _variants(specialize: dict | None) -> list[Variant]:
    def sub(expr, extra=None):
        expr = expr.subs(extra) if extra else expr
        return expr.subs(specialize, simultaneous=True) if specialize else expr

    # (33) needs (30); the theorem states rho <= m/(m+n) (M/(M+N) at K = 1)
    rho_predicates = tuple(Predicate(p.name, sub(p.lhs), p.relation, sub(p.rhs), p.source)
                           for p in (PREDICATES["exact"], PREDICATES["theorem"]))

    def conditions(name):
        return tuple(StepCondition(c.name, sub(c.cap), c.strict, c.source, c.variable)
                     for c in STEPSIZE.variant(name).conditions)

    variants = []
    for name, rederived, text in (
            ("printed", False, "(33) as printed (T1's numerator read as Delta f, flag 23); the "
                               "conditions of afga.stepsize (printed): (a), (25), (27) implicit"),
            ("rederived", True, "(33) with T2's dropped I sigma^2/n term restored (flag 24); the "
                                "conditions of afga.stepsize (rederived): (a'), (25) with 16, (27)")):
        terms = explicit_terms(rederived)
        variants.append(Variant(name, text, bound=sub(explicit_bound(terms)), conditions=conditions(name),
                                predicates=rho_predicates, extras={k: sub(v) for k, v in terms.items()}))
    variants.append(Variant(
        "eq29", "(29), before the rho-condition (30) simplifies it to (33); C1 explicit, the 1/R of "
                "its C_beta^2 term restored (flag 21)", bound=sub(eq29_bound()), conditions=(CAP_A,)))
    terms = explicit_terms(True)
    variants.append(Variant(
        "rederived-schedule", "the rederived (33) at eta = c_eta n sqrt(I/m), eta_l = c_l/(I sqrt(R)) "
                              "[L2276-2280]; a function of R",
        bound=sub(explicit_bound(terms), SCHEDULE), predicates=rho_predicates,
        extras={k: sub(v, SCHEDULE) for k, v in terms.items()}))
    return variants


_O_D3 = ((f_gap + (sigma ** 2 + sigma_l ** 2 + sigma_c ** 2 + sigma ** 2 / K) * L) / sp.sqrt(R * I * m)
         + (G ** 2 + L ** 2 * (sigma_c ** 2 + (1 + rho ** 2) * sigma_l ** 2) + rho ** 2 * sigma ** 2 / I) / R)
_O_46 = ((f_gap + L * (sigma ** 2 + sigma_g ** 2)) / sp.sqrt(R * I * M)
         + (G ** 2 + L ** 2 * (1 + rho ** 2) * sigma_g ** 2 + rho ** 2 * sigma ** 2 / I) / R)

#: why ``rate_exponents`` of the default variant is {-1, 0} and not the headline -1/2 (issue 22 item 8)
RATE_FLAG = Flag(
    "rate: fixed steps R^-1 + R^0; -1/2 needs the schedule (variant rederived-schedule)",
    "the default variant (printed) is (33) at FIXED eta, eta_l: its terms decay like R^-1 (T1) or not at "
    "all (T2..T8, R^0), so rate_exponents gives {-1, 0}. The headline O(1/sqrt(RIm)) [L291-314, "
    "L1093-1122] holds only at the paper's own steps eta = Theta(n sqrt(I/m)), eta_l = Theta(1/(I "
    "sqrt(R))) [L2276-2280]: variant rederived-schedule (rate_exponents -1/2, -1, -3/2), and the audit's "
    "order claims thm46.order_R, thmD3.order_R (and .rederived) fit the exponent in R over 3 decades "
    "at this schedule")

_FLAGS = (
    Flag("21", "(29) misses the 1/R on 2 C_beta^2 (m/n) L eta eta_l I G^2 d/eps [L2107-2110]; (33) has it"),
    Flag("23", "T1 prints E f(z_{r+1}) - f(z_0); f(z_1) - E f(z_{R+1}) <= Delta f is meant [L2183, L2281]"),
    Flag("24", "T2 drops the I sigma^2/n term (no rho^2) [L2190-2201]; the O-form drops L^2 from "
               "rho^2 sigma^2/I"),
    Flag("32", "the rho-condition rho_max <= m/(m+n) fails for every ring experiment (afga.rho_condition)"),
    Flag("33", "O~ 'hides rho': rho_max is meant [L1117-1119]"),
    Flag("14", "V-hat_r treated as independent of Delta_r in the expectation [L1323-1350]"),
    RATE_FLAG,
)

#: what the theorems bound, for ``fedbound verify``: (1/R) sum_{r=1}^R E||grad f(x_r)||^2 with x_1 the
#: initial point [L291-314], i.e. the average over the run's models x_0 .. x_{R-1} (fedbound counts
#: the initial model as x_0)
MEASURE = Measure("grad_norm2", "average")
#: what the average of E||grad f(x_r)||^2 is at most without the theorems: A4.3 bounds every
#: stochastic gradient by G [L255-L256], so ||grad f(x)||^2 <= G^2 (the audit's nonvacuous claims)
TRIVIAL = Reference(G ** 2, "G^2", "trivial", "A4.3 [L255-L256]: ||grad f(x)|| <= G")

THM_D3 = register(Result(
    id="afga.thmD3",
    rounds="R",
    relations=CLUSTER_RELATIONS,
    title="Theorem D.3 (CAFGA convergence) with its explicit form (33); default variant at fixed steps "
          "(R^-1 + R^0), the R^-1/2 headline at the schedule (rederived-schedule)",
    statement="Under A4.1-4.3, D.1, D.2, eta_l conditions (a), (25), (27), rho_max <= m/(m+n): "
              "(1/R) sum_r E||grad f(x_r)||^2 = O((f0 - f* + (sigma~^2 + sigma^2/K) L)/sqrt(RIm)) + "
              "O((G^2 + L^2(sigma_c^2 + (1 + rho_max^2) sigma_l^2) + rho_max^2 sigma^2/I)/R) + "
              "O~(R^{-3/2}), sigma~^2 = sigma^2 + sigma_l^2 + sigma_c^2; explicitly (33).",
    provenance=where("Thm D.3 (8), (33)", "1093-1122, 2179-2275"),
    assumptions=("A4.1 L-smooth", "A4.2 variance sigma^2", "A4.3 gradients bounded by G",
                 "D.1 (sigma_k, alpha >= 1, sigma_c)", "D.2 ||W_k - J||_2 <= rho_k <= rho_max",
                 "rho-condition (30) for (33); rho_max <= m/(m+n) in the theorem", "N = K n, M = K m"),
    lhs="(1/R) sum_r E||grad f(x_r)||^2",
    measure=MEASURE,
    reference=TRIVIAL,
    variants=[*_variants(None),
              Variant("O", "O-form (8) with unit constants; the O~(R^{-3/2}) term is omitted",
                      bound=_O_D3)],
    known_issues=_FLAGS,
))

THM_46 = register(Result(
    id="afga.thm46",
    rounds="R",
    title="Theorem 4.6 (AFGA convergence), (33) at K = 1; default variant at fixed steps (R^-1 + R^0), "
          "the R^-1/2 headline at the schedule (rederived-schedule)",
    statement="Under A4.1-4.5, eta = Theta(N sqrt(I/M)), eta_l = Theta(1/(I sqrt(R))), rho <= M/(M+N): "
              "(1/R) sum_r E||grad f(x_r)||^2 = O((Delta f + L(sigma^2 + sigma_g^2))/sqrt(RIM)) + "
              "O((G^2 + L^2(1 + rho^2) sigma_g^2 + rho^2 sigma^2/I)/R) + O~(R^{-3/2}).",
    provenance=where("Thm 4.6 (3), (37)", "291-314, 2602-2621"),
    assumptions=("A4.1-4.5", "K = 1: n = N, m = M, sigma_c = 0, sigma_l = sigma_g, alpha = 1",
                 "rho <= M/(M+N)"),
    lhs="(1/R) sum_r E||grad f(x_r)||^2",
    measure=MEASURE,
    reference=TRIVIAL,
    variants=[*_variants(AFGA),
              Variant("O", "O-form (3) with unit constants; the O~(R^{-3/2}) term is omitted", bound=_O_46)],
    known_issues=(Flag("1", "Theorem 4.6 calls eta (global) 'the local learning rate' [L292]"),
                  Flag("2", "eta_l = Theta(1/sqrt(R I^2)) = Theta(1/(I sqrt(R))) [L293, L2278]"),
                  *_FLAGS),
))


def predicted_exponents(result_id: str = "afga.thm46") -> dict[str, object]:
    """The exponents of the leading O-term in R, I and M (m for D.3): the largest (slowest) exponent in R
    among the O-form's terms, and the exponents in I and M of that term (computed with
    :meth:`Result.rate_exponents` from the "O" variant)."""
    result = THM_46 if result_id == "afga.thm46" else THM_D3
    sampled = "M" if result is THM_46 else "m"
    in_r = result.rate_exponents("O", "R")
    leading = max(in_r.values())
    terms = [t for t, x in in_r.items() if x == leading]
    in_i = result.rate_exponents("O", "I")
    in_m = result.rate_exponents("O", sampled)
    return {"R": leading, "I": min(in_i[t] for t in terms), "M": min(in_m[t] for t in terms)}


def schedule_exponents(result_id: str = "afga.thmD3") -> dict[str, dict[str, object]]:
    """Per term T1..T8 of the "rederived-schedule" variant, the exponent in R of each monomial of its
    expansion, with C0 -> sqrt(eps) (exponent 0) as R -> infinity; T6 T7 as one product.

    The paper's term-by-term rates [L2281-2540]: T1 = O(R^{-1/2} + R^{-1}), T2 = O(R^{-1}),
    T3, T4, T5 = O(R^{-1/2}), T6 T7 and T8 = O~(R^{-3/2}). (The engine's generic
    :meth:`Result.rate_exponents` takes limits term by term because C0 depends on R, which is slow.)
    """
    extras = (THM_46 if result_id == "afga.thm46" else THM_D3).variant("rederived-schedule").extras
    groups = {k: extras[k] for k in ("T1", "T2", "T3", "T4", "T5", "T8")}
    groups["T6*T7"] = extras["T6"] * extras["T7"]
    out = {}
    for name, expr in groups.items():
        terms = sp.Add.make_args(sp.expand(expr, power_base=False, log=False))
        out[name] = {sp.sstr(t): sp.nsimplify(t.as_coeff_exponent(R)[1]) for t in terms}
    return out


__all__ = ["THM_D3", "THM_46", "explicit_terms", "explicit_bound", "eq29_bound", "SCHEDULE", "AFGA",
           "MEASURE", "RATE_FLAG",
           "predicted_exponents", "schedule_exponents"]
