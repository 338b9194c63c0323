r"""FedAda2's corollaries of Theorem 20 and the blended-optimization Theorem 25 (seed 004,
papers/fedada2.md 4.10-4.15).

* Corollary 23 (= main Cor. 7) [L1075-L1118]: with eta = Theta(T^p1), eta_l = Theta(T^p2), the
  Theta-forms of the Psi's (proof of Cor. 23 [L1083-L1090], appendix labels) are
      psi1 = 1, psi2 = eta^2 eta_l^2 T, psi3 = eta eta_l^2 T, psi4 = eta^3 eta_l^3 T,
      psi5 = eta eta_l log(1 + T eta_l^2), psi6 = eta eta_l T (case A: T eta_l^2 = O(1)) or
      eta sqrt(T) (case B: T eta_l^2 -> inf, eta_l = O(1));
  the bound vanishes iff every exponent of psi_i/psi6 is negative. With the L^2 correction of the
  drift step (notes 8.2) psi3 = eta eta_l T (L~^2 = Theta(eta_l^-2)). With client Adam (C.2
  [L1128-L1161]) psi5 = eta eta_l^3 T. :func:`ratio_exponents` gives the exponents as linear
  expressions in (p1, p2); the results list them as extras; the LP of
  :mod:`fedbound.control.fedada2` is built from them.
* Corollary 24 (= main Cor. 8) [L1120-L1126]: rate O(T^-1/2) at p1 = 0, p2 = -1/2 (case A);
  the bound is the sum of the Theta-ratios there (rate_exponents: -1/2), and 1 (exponent 0) for the
  psi3 ratio once L~^2 is used.
* Theorem 25 [L1189-L1329]: Theorem 20's form (:func:`fedada2.thm20.psi_terms`) with Phi1 of Lemma 26,
  gamma1 = eta_l Xi^- min a_l/max M_l, alpha1 = Xi^- min a_l/(K(K+1) max M_l) and the Psi3/Psi4 factor
  C = (Xi^+)^2 K(K+1) max A_l^2/(2 alpha1 tau min m_l^2) [L1199-L1207].
* Corollary 27 [L1435-L1444]: Algorithm 8 (ADMU clients), Phi1 of Lemma 28, gamma1 = eta_l eps_w
  sum_{p=1}^{K^-} (1 - b1^p)/(G sqrt(1 - b2^ceil(p/z)) + eps), alpha1 = the same sum times
  eps_w/(K+1)^2 without eta_l, and the factor (1 - b1^(2K)) K B^2/(2 alpha1 tau eps^2).
* Corollary 29 [L1547-L1553]: Algorithm 10 (AGDU clients), Phi1 of Lemma 30, gamma1 = eta_l eps_w K^-
  /(sqrt(v0 + ceil(K/z) G^2) + eps), alpha1 = eps_w K^-/(2K (sqrt(v0 + ceil(K/z) G^2) + eps)),
  "identical to Theorem 6": Theorem 20's factor K/(alpha1 tau (sqrt(v0) + eps)^2).
Each of Theorem 25 and Corollaries 27, 29 comes "printed" (vector norm, L) and "rederived" (L^2, L~^2).
"""
from __future__ import annotations

from typing import Annotated

import mpmath
import numpy as np
import sympy as sp

from fedbound.argtypes import Choice
from fedbound.errors import ValidationError
from fedbound.theory.fedada2.common import (A_max, B_weight, G_inf, K_local, K_minus,
                                            K_over_z, a_min, beta1, beta2, declare, eps_client, eps_w, eta_l,
                                            m_min, M_max, tau_adapt, v0, where, xi_minus, xi_plus,
                                            z_delay)
from fedbound.theory.fedada2.lemmas import ADAM_PREDICATE, LEMMA26, LEMMA30, PHI1_ADMU
from fedbound.theory.fedada2.thm20 import (SWITCHES, TRIVIAL, VTILDE0_PREDICATE, bound_of, psi_terms,
                                           ratios, rename)
from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Predicate, Result, Variant, switch_variants
from fedbound.theory.symbols import Domain, T

p1 = declare("p1", Domain(), "Cor. 23: server learning-rate exponent, eta = Theta(T^p1)")
p2 = declare("p2", Domain(), "Cor. 23: client learning-rate exponent, eta_l = Theta(T^p2)")

CASES = ("A", "B")
SMOOTH = ("L", "L2")
CLIENTS = ("adagrad", "adam")
Case = Annotated[str, Choice(CASES)]
Smooth = Annotated[str, Choice(SMOOTH)]
Client = Annotated[str, Choice(CLIENTS)]


def theta_psis(case: Case, smooth: Smooth = "L", client: Client = "adagrad",
               eta: sp.Expr | float | None = None, eta_l_: sp.Expr | float | None = None) -> dict:
    """The Theta-forms psi1..psi6 [L1083-L1090] at eta = T^p1, eta_l = T^p2 (or the given values).
    The log of psi5 is kept; :func:`ratio_exponents` drops it (O(1) in case A, a log factor in B)."""
    e = T ** p1 if eta is None else eta
    el = T ** p2 if eta_l_ is None else eta_l_
    return {
        "psi1": sp.Integer(1),
        "psi2": e ** 2 * el ** 2 * T,
        "psi3": e * el ** 2 * T if smooth == "L" else e * el * T,
        "psi4": e ** 3 * el ** 3 * T,
        "psi5": e * el * sp.log(1 + T * el ** 2) if client == "adagrad" else e * el ** 3 * T,
        "psi6": e * el * T if case == "A" else e * sp.sqrt(T),
    }


def ratio_exponents(case: Case, smooth: Smooth = "L", client: Client = "adagrad") -> dict[str, sp.Expr]:
    """The exponent of T in psi_i/psi6, i = 1..5, linear in (p1, p2) (log factors dropped), plus
    the regime constraints of the case: "regime" <= 0 (case A: 1 + 2 p2; case B: p2) and, in case
    B, "regime_open" < 0 (-(1 + 2 p2))."""
    if case not in CASES or smooth not in SMOOTH or client not in CLIENTS:
        raise ValidationError(f"case in {CASES}, smooth in {SMOOTH}, client in {CLIENTS}; got "
                         f"{case!r}, {smooth!r}, {client!r}")
    psi = theta_psis(case, smooth, client)
    psi = {k: v.replace(sp.log, lambda arg: sp.Integer(1)) for k, v in psi.items()}
    out = {}
    for i in range(1, 6):
        ratio = sp.powsimp(sp.expand_power_base(psi[f"psi{i}"] / psi["psi6"], force=True), force=True)
        out[f"psi{i}/psi6"] = sp.expand(sp.expand_log(sp.log(ratio), force=True) / sp.log(T))
    if case == "A":
        out["regime"] = 1 + 2 * p2
    else:
        out["regime"] = p2
        out["regime_open"] = -(1 + 2 * p2)
    return out


def _cor23_variant(case: str, smooth: str, client: str) -> Variant:
    name = f"case_{case}" + ("" if smooth == "L" else "_L2") + ("" if client == "adagrad" else "_adam")
    regime = ("T eta_l^2 = O(1)" if case == "A" else "T eta_l^2 -> inf, eta_l = O(1)")
    text = {("L", "adagrad"): "as derived in the proof [L1083-L1112]",
            ("L2", "adagrad"): "DERIVED: psi3 with L~^2 (notes 8.2): psi3/psi6 has exponent 0 (A) or "
                               "p2 + 1/2 (B), so no exponents make the bound vanish",
            ("L", "adam"): "client Adam (C.2 [L1128-L1161]): psi5 = eta eta_l^3 T"}[(smooth, client)]
    return Variant(name, f"case {case} ({regime}); {text}; extras: the exponents of psi_i/psi6 in T",
                   extras=ratio_exponents(case, smooth, client))


COR23 = register(Result(
    id="fedada2.cor23",
    title="Corollary 23 (= Cor. 7): learning-rate exponent conditions",
    statement="With eta = Theta(T^p1), eta_l = Theta(T^p2), either (A) eta_l <= O(T^-1/2) and "
              "Omega(T^-1) < eta eta_l < O(1), i.e. p2 <= -1/2, -1 < p1 + p2 < 0, or (B) -1/2 < p2 <= -1/4, "
              "-1/2 < p1, p1 + 2 p2 < -1/2, 2 p1 + 3 p2 < -1/2 suffices for convergence.",
    provenance=where("Corollary 23", "1075-1118"),
    assumptions=("those of Theorem 20", "the Theta-forms of the Psi's [L1083-L1090]"),
    lhs="exponent of T in psi_i/psi6 (each must be < 0)",
    variants=[_cor23_variant(c, s, "adagrad") for s in SMOOTH for c in CASES]
    + [_cor23_variant(c, "L", "adam") for c in CASES],
    known_issues=(Flag("8.6", "[L1112] p2 <= -1/4 should be p2 < -1/4 (psi3/psi6 = T^(2 p2 + 1/2))"),
                  Flag("8.2", "with L~^2 psi3/psi6 no longer vanishes in either case")),
))


def _cor24_bound(smooth: str) -> sp.Expr:
    psi = theta_psis("A", smooth, eta=sp.Integer(1), eta_l_=T ** sp.Rational(-1, 2))
    return sp.Add(*(psi[f"psi{i}"] / psi["psi6"] for i in range(1, 6)))


COR24 = register(Result(
    id="fedada2.cor24",
    title="Corollary 24 (= Cor. 8): rate O(T^-1/2)",
    statement="Algorithm 1/2 converges at rate min_t ||grad f(x_{t-1})||^2 = O(T^-1/2), attained at "
              "eta = Theta(1), eta_l = Theta(T^-1/2).",
    provenance=where("Corollary 24", "1120-1126"),
    assumptions=("those of Corollary 23", "Theta constants set to 1"),
    lhs="min_t ||grad f(x_{t-1})||^2 up to constants",
    variants=[
        Variant("printed", "sum of the Theta-ratios psi_i/psi6 at p1 = 0, p2 = -1/2 (case A) with the "
                           "printed drift step (L~)", bound=_cor24_bound("L")),
        Variant("rederived", "the same with L~^2 (notes 8.2): the psi3 ratio is Theta(1)",
                bound=_cor24_bound("L2")),
    ],
    known_issues=(Flag("8.2", "the rate depends on the L versus L^2 slip of [L922]"),),
))


# Theorem 25 ----------------------------------------------------------------------------------------
#: relations between Theorem 25's bounds that its definitions imply [L1191-L1199]: Xi^- < w(O_l^i) <
#: Xi^+, and m_l <= theta <= M_l, a_l <= a <= A_l for every strategy l give min m_l <= max M_l and
#: min a_l <= max A_l (Xi^- <= Xi^+ non-strict: the bound is continuous in both, and equality is the
#: limit of admissible instances)
THM25_RELATIONS = (
    Predicate("Xi^- <= Xi^+", xi_minus, "<=", xi_plus, "[L1199] Xi^- < w(O_l^i) < Xi^+"),
    Predicate("a_min <= A_max", a_min, "<=", A_max, "[L1191-L1197] 0 < a_l <= a <= A_l"),
    Predicate("m_min <= M_max", m_min, "<=", M_max, "[L1191-L1197] 0 < m_l <= theta <= M_l"),
)
#: relations of Algorithms 8 and 10's schedules and weights [L1399, L1431-L1441]: K^- = min K-bar_i^t
#: <= ||K-bar^t||_inf <= K, and eps_w < Xi_i^t <= ||Xi^t||_inf <= B (non-strict here: the bounds
#: decrease in eps_w, so the adapter's eps_w = B = 1 is their limit, see the adapter's doc)
WEIGHT_RELATIONS = (
    Predicate("K^- <= K", K_minus, "<=", K_local, "[L1401, L1441] K^- = min K-bar_i^t, ||K-bar^t||_inf <= K"),
    Predicate("eps_w <= B", eps_w, "<=", B_weight, "[L1399, L1433] eps_w < Xi_i^t <= B"),
)
_THM25_GAMMA1 = eta_l * xi_minus * a_min / M_max                                 # [L1207]
_THM25_ALPHA1 = xi_minus * a_min / (K_local * (K_local + 1) * M_max)            # [L1207]
_THM25_C = xi_plus ** 2 * K_local * (K_local + 1) * A_max ** 2 / (2 * _THM25_ALPHA1 * tau_adapt * m_min ** 2)


#: the drift-step switch of Theorem 20 (notes 8.2), the one correction these results share with it
SMOOTH_SWITCH = next(sw for sw in SWITCHES if sw.name == "smooth")


def _family_variants(phi1, gamma1, coefficient, extras: dict, predicates: tuple = ()) -> list[Variant]:
    """"printed" (vector norm, L and L~) and "rederived" (= "smooth=L2": L^2 and L~^2 in the drift
    step), generated from Theorem 20's ``smooth`` switch."""

    def build(settings: dict[str, str]) -> dict:
        psi = psi_terms(phi1, gamma1, coefficient, "vector", settings["smooth"])
        return {"bound": bound_of(psi), "extras": {**psi, **extras},
                "predicates": (VTILDE0_PREDICATE,) + predicates, "term_names": ratios(psi)}

    return rename(switch_variants((SMOOTH_SWITCH,), build, "Theorem 20's form, vector norm"),
                  {"smooth": "L2"}, "rederived")


THM25 = register(Result(
    id="fedada2.thm25",
    title="Theorem 25 (blended optimization, Algorithm 5)",
    statement="Under the optimizer condition (m_l <= theta <= M_l, a_l <= a <= A_l), 1 <= K(O_l^i) <= K and "
              "Xi^- < w < Xi^+, Algorithm 5 has Theorem 20's bound with Psi3 = (1 - b^T) eta eta_l C T L~ "
              "||Phi1||^2, Psi4 = (1 - b) eta eta_l C T L c(b) ||Phi2||^2, C = (Xi^+)^2 K(K+1) max A_l^2/"
              "(2 alpha1 tau min m_l^2), gamma1 = eta_l Xi^- min a_l/max M_l, alpha1 = Xi^- min a_l/"
              "(K(K+1) max M_l), Phi1 of Lemma 26.",
    provenance=where("Theorem 25", "1189-1329"),
    assumptions=("those of Theorem 20", "optimizer condition [L1191-L1197] (notes 8.14)"),
    lhs="min_{t in [T]} ||grad f(x_{t-1})||^2",
    reference=TRIVIAL,
    variants=_family_variants(LEMMA26.variant().bound, _THM25_GAMMA1, _THM25_C,
                              {"C": _THM25_C, "gamma1": _THM25_GAMMA1}),
    relations=(VTILDE0_PREDICATE, *THM25_RELATIONS),
    known_issues=(Flag("8.14", "a and theta indexed by l only; SGD and Adam fit only loosely"),
                  Flag("8.21", "w(O_l^i) per client versus w(O_l) per strategy in Alg. 5"),
                  Flag("8.2", "L versus L^2 as in Theorem 20")),
))


# Corollary 27 --------------------------------------------------------------------------------------
class adam_weight_sum(sp.Function):
    r"""sum_{p=1}^{K^-} (1 - b1^p)/(G sqrt(1 - b2^ceil(p/z)) + eps) of Corollary 27 [L1444]: exact under
    evalf (mpmath at the requested precision), a vectorized numpy loop over p under lambdify."""

    nargs = 6

    @staticmethod
    def _imp_(k_minus, z, b1, b2, G, eps):
        k_minus, z, b1, b2, G, eps = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in
                                                           (k_minus, z, b1, b2, G, eps)))
        total = np.zeros(k_minus.shape)
        for p in range(1, int(np.max(k_minus)) + 1):
            term = (1 - b1 ** p) / (G * np.sqrt(1 - b2 ** np.ceil(p / z)) + eps)
            total = total + np.where(p <= k_minus, term, 0.0)
        return total

    def _eval_evalf(self, prec):
        if not all(a.is_number for a in self.args):
            return None
        k_minus, z = int(self.args[0]), int(self.args[1])
        with mpmath.workprec(prec + 32):
            b1, b2, G, eps = (mpmath.mpf(sp.Rational(a).p) / sp.Rational(a).q if a.is_Rational
                              else mpmath.mpf(a.evalf(prec + 32)) for a in self.args[2:])
            total = mpmath.fsum((1 - b1 ** p) / (G * mpmath.sqrt(1 - b2 ** (-(-p // z))) + eps)
                                for p in range(1, k_minus + 1))
            return sp.Float(total, precision=prec)


#: where the term-by-term sum of :class:`adam_weight_sum` is affordable
K_MINUS_DOMAIN = Domain(1.0, 1000.0, False, False, integer=True)
_ADAM_SUM = adam_weight_sum(K_minus, z_delay, beta1, beta2, G_inf, eps_client)
_COR27_GAMMA1 = eta_l * eps_w * _ADAM_SUM                                       # [L1444]
_COR27_ALPHA1 = eps_w * _ADAM_SUM / (K_local + 1) ** 2                          # [L1444]
_COR27_FACTOR = ((1 - beta1 ** (2 * K_local)) * K_local * B_weight ** 2
                 / (2 * _COR27_ALPHA1 * tau_adapt * eps_client ** 2))           # [L1439-L1440]

COR27 = register(Result(
    id="fedada2.cor27",
    title="Corollary 27 (FedAdaAdam: server AdaGrad + ADMU clients, Algorithm 8)",
    statement="Theorem 6's bound with Psi3 = (1 - b^T) eta eta_l (1 - b1^(2K)) K L~ B^2 T ||Phi1||^2/"
              "(2 alpha1 tau eps^2), Psi4 = (1 - b) eta eta_l (1 - b1^(2K)) K L T B^2 c(b) ||Phi2||^2/"
              "(2 alpha1 tau eps^2), gamma1 = eta_l eps_w sum_{p<=K^-} (1 - b1^p)/(G sqrt(1 - b2^ceil(p/z)) "
              "+ eps), alpha1 = eps_w sum_{p<=K^-} (1 - b1^p)/((G sqrt(1 - b2^ceil(p/z)) + eps)(K+1)^2), "
              "Phi1 of Lemma 28.",
    provenance=where("Corollary 27", "1435-1447"),
    assumptions=("those of Theorem 20", "b1^2 < b2", "K^- = min K-bar_i^t >= 1", "Xi_i^t > eps_w"),
    lhs="min_{t in [T]} ||grad f(x_{t-1})||^2",
    reference=TRIVIAL,
    requires={"K_minus": (K_MINUS_DOMAIN, "K^- <= 1000 (gamma1 sums K^- terms one by one, exactly under evalf)")},
    variants=_family_variants(PHI1_ADMU, _COR27_GAMMA1, _COR27_FACTOR, {"gamma1": _COR27_GAMMA1},
                              (ADAM_PREDICATE,)),
    relations=(VTILDE0_PREDICATE, ADAM_PREDICATE, *WEIGHT_RELATIONS),
    known_issues=(Flag("8.13", "gamma1, alpha1 use un-corrected moments while Alg. 8 bias-corrects; "
                               "Lemma 28's proof drops the bias corrections"),
                  Flag("8.10", "Alg. 8's clip zeroes m_k, not the step m-hat_k"),
                  Flag("8.2", "L versus L^2 as in Theorem 20")),
))

# Corollary 29 --------------------------------------------------------------------------------------
_ROOT29 = sp.sqrt(v0 + K_over_z * G_inf ** 2) + eps_client
_COR29_GAMMA1 = eta_l * eps_w * K_minus / _ROOT29                                   # [L1551]
_COR29_ALPHA1 = eps_w * K_minus / (2 * K_local * _ROOT29)                           # [L1551]
_COR29_FACTOR = K_local / (_COR29_ALPHA1 * tau_adapt * (sp.sqrt(v0) + eps_client) ** 2)

COR29 = register(Result(
    id="fedada2.cor29",
    title="Corollary 29 (FedAdaAdagrad: server AdaGrad + AGDU clients, Algorithm 10)",
    statement="With K^- = min K-bar_i^t >= 1, gamma1 = eta_l eps_w K^-/(sqrt(v0 + ceil(K/z) G^2) + eps) and "
              "alpha1 = eps_w K^-/(2K(sqrt(v0 + ceil(K/z) G^2) + eps)), Algorithm 10 has the bound of Theorem 6, "
              "with Phi1 of Lemma 30.",
    provenance=where("Corollary 29", "1547-1553"),
    assumptions=("those of Theorem 20", "K^- = min K-bar_i^t >= 1", "Xi_i^t > eps_w"),
    lhs="min_{t in [T]} ||grad f(x_{t-1})||^2",
    reference=TRIVIAL,
    variants=_family_variants(LEMMA30.variant().bound, _COR29_GAMMA1, _COR29_FACTOR,
                              {"gamma1": _COR29_GAMMA1}),
    relations=(VTILDE0_PREDICATE, *WEIGHT_RELATIONS),
    known_issues=(Flag("4.15", "Psi3/Psi4 presumably carry B^2 as in Corollary 27; not stated"),
                  Flag("8.2", "L versus L^2 as in Theorem 20")),
))
