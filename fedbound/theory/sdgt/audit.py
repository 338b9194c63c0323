"""The checkable claims of SD-GT (seed 003, papers/sdgt.md), for :mod:`fedbound.theory.audit`.

Each claim is a sentence of the paper of the form "under these conditions, lhs <= rhs", evaluated
from the registered results (sdgt.lemma2, sdgt.lemma3, sdgt.thm1, sdgt.cor1, sdgt.thm2, sdgt.cor2,
sdgt.thm3, sdgt.cor3, sdgt.thm5) or, where the claim is an intermediate step of a proof, from the
proof's formula typed here with its line. Step sizes are sampled as a fraction (log-uniform in
[1e-4, 1]) of the cap the claim assumes, so the cap itself is among the extremes.

Domains (log-uniform unless said): L in [1e-3, 1e3] (the paper mixes L^2 and L^3, F43, so L is a
number); mu = (mu/L) L with mu/L in [1e-6, 1]; K in 1..1000; p, q in [1e-3, 1]; n in 1..1e4;
sigma in [1e-3, 1e3]; T in 1..1e6; c2 - 2 in [1e-6, 1e3]; E1, R in [1e-3, 1e3]; D in [1e-3, 1/4];
D5 in [1e-3, 1e6]; Theorem 5: H-hat in [1e-6, 1e3], lambda2 in [1e-4, 10], lambda3 in [1e-8, 1],
sum_s E_s^D2D in [1e-3, 1e3], max_s m_s in 1..1000, p = (max_s m_s)^-z with z uniform in [0, 1].
"""
from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from fedbound.papers import PAPERS, PaperAudit
from fedbound.theory.claim import Claim, Param, Sampler, compile_expr, sign_parts
from fedbound.theory.registry import get
from fedbound.theory.linalg import spectral_quantities
from fedbound.theory.sdgt.common import PAPER
from fedbound.theory.sdgt.lemmas import LEMMA2_CAP, LEMMA3_CAP
from fedbound.theory.sdgt.thm45 import k_star

L_ = Param("L", 1e-3, 1e3)
MU_OVER_L = Param("mu/L", 1e-6, 1.0)
K_ = Param("K", 1, 1000, integer=True)
P_ = Param("p", 1e-3, 1.0)
Q_ = Param("q", 1e-3, 1.0)
N_ = Param("n", 1, 1e4, integer=True)
SIGMA_ = Param("sigma", 1e-3, 1e3)
T_ = Param("T", 1, 1e6, integer=True)
FRACTION = Param("gamma/cap", 1e-4, 1.0)
E1_ = Param("E1", 1e-3, 1e3)
R_ = Param("R", 1e-3, 1e3)
D_ = Param("D", 1e-3, 0.25)
D5_ = Param("D5", 1e-3, 1e6)


def _build(step_cap=None):
    """A ``build`` hook: mu = (mu/L) L, c2 = 2 + (c2 - 2), p = m_max^-z, and gamma = fraction * cap,
    where ``step_cap(constants)`` is the cap the claim assumes."""

    def build(raw: dict) -> dict:
        c = dict(raw)
        if "mu/L" in c:
            c["mu"] = c.pop("mu/L") * c["L"]
        if "c2-2" in c:
            c["c2"] = 2 + c.pop("c2-2")
        if "p position" in c:
            c["p"] = c["m_max"] ** -c.pop("p position")
        if step_cap is not None:
            c["gamma"] = c.pop("gamma/cap") * step_cap(c)
        return c

    return build


def _max_step(result_id: str, variant: str):
    result = get(result_id)
    return lambda c: result.max_step(variant, **{k: c[k] for k in ("L", "mu", "K", "p", "q") if k in c})[0]


# Theorem 3 ----------------------------------------------------------------------------------------

def _thm3_numbers(variant: str):
    """A function of the constants giving A, I - A and (unless ``spectral`` is False) the spectral
    numbers of Theorem 3's variant; with ``with_b`` also the floor (n and sigma then needed)."""
    extras = get("sdgt.thm3").variant(variant).extras
    A, gap, b = (compile_expr(extras[k]) for k in ("A", "I_minus_A", "b"))

    def numbers(c: dict, with_b: bool = False, spectral: bool = True) -> dict:
        a, g = A(c), gap(c)
        if not spectral:
            return {"A": a, "I_minus_A": g}
        vector = b(c)[..., 0] if with_b else np.zeros(a.shape[:-1])
        return {"A": a, "I_minus_A": g, **spectral_quantities(a, vector, gap=g)}

    return numbers


def _thm3_claims(variant: str) -> list[Claim]:
    thm3 = get("sdgt.thm3")
    numbers = _thm3_numbers(variant)
    sampler = Sampler((L_, MU_OVER_L, K_, P_, Q_, FRACTION), _build(_max_step("sdgt.thm3", variant)))
    entries = [sign_parts(a) for a in thm3.variant(variant).extras["A"]]
    pos, neg = compile_expr(sp.Matrix(4, 4, [e[0] for e in entries])), compile_expr(
        sp.Matrix(4, 4, [e[1] for e in entries]))
    names = tuple(f"A{i}{j}" for i in range(1, 5) for j in range(1, 5))
    gb = {"main": "main-text gamma_bar", "appendix": "gamma_bar (97)", "rederived": "gamma_bar (97)"}[variant]

    def nonnegative(c):
        return neg(c).reshape(-1, 16), pos(c).reshape(-1, 16)

    def l1(c):
        ex = numbers(c, spectral=False)
        A, gap = ex["A"], ex["I_minus_A"]
        diagonal = np.diagonal(gap, axis1=-2, axis2=-1)
        off = np.sum(np.abs(A) * (1 - np.eye(4)), axis=-2)
        contraction = (c["mu"] * c["K"] * c["gamma"] / 4)[:, None]
        return off + contraction, np.where(diagonal <= 1, diagonal, 2 - diagonal)

    def radius(c):
        ex = numbers(c)
        return ex["spectral_radius"], np.ones_like(ex["spectral_radius"]), -ex["radius_margin"]

    def rate(c):
        return c["mu"] * c["K"] * c["gamma"] / 4, numbers(c)["radius_margin"]

    common = dict(result_id="sdgt.thm3", variant=variant, sampler=sampler)
    return [
        Claim("thm3.A_nonnegative", statement=f"gamma <= {gb} implies A >= 0 elementwise (each entry: "
              "its negative terms <= its positive terms)", flag="", check=nonnegative, parts=names,
              **common),
        Claim("thm3.A_l1", statement=f"gamma <= {gb} implies ||A||_1 <= 1 - mu K gamma/4, i.e. per "
              "column (95): off-diagonal sum + mu K gamma/4 <= 1 - A_jj (ratio: their quotient)",
              flag="F18", check=l1, parts=("col1", "col2", "col3", "col4"), **common),
        Claim("thm3.rho_lt_1", statement=f"gamma <= {gb} implies rho(A) < 1 (ratio: rho(A))",
              flag="F18", check=radius, strict=True, **common),
        Claim("thm3.rho_rate", statement=f"gamma <= {gb} implies rho(A) <= 1 - mu K gamma/4 (ratio: "
              "mu K gamma/4 over 1 - rho(A))", flag="F18", check=rate, **common),
    ]


# Theorem 1, Corollaries 1 and 2, Theorem 2 -------------------------------------------------------

def _thm1_coefficients(variant: str) -> Claim:
    thm1 = get("sdgt.thm1")
    names = ("D", "D1", "D2", "D3", "D4")
    split = [sign_parts(thm1.variant(variant).extras[nm]) for nm in names]
    pos = [compile_expr(s[0]) for s in split]
    neg = [compile_expr(s[1]) for s in split]

    def check(c):
        return (np.stack([f(c) for f in neg], axis=-1), np.stack([f(c) for f in pos], axis=-1))

    return Claim("thm1.D_signs", "sdgt.thm1", variant,
                 "(74): c2 > 2, c1 = 6 L^2 c2, c0 = 192 L^2 c2/(pq), gamma <= min(p^2 q/(945KL), Lemma "
                 "1, 3-5 caps) make D > 0 and D1..D4 >= 0 of (73) (each: negative terms <= positive)",
                 "F13", Sampler((L_, K_, P_, Q_, Param("c2-2", 1e-6, 1e3), FRACTION),
                                _build(_max_step("sdgt.thm1", variant))), check, parts=names)


def _step_within_caps(corollary: str, theorem: str, variant: str, params: tuple, flag: str,
                      statement: str) -> Claim:
    step = compile_expr(get(corollary).variant(variant).extras["gamma"])
    conditions = get(theorem).variant(variant).conditions
    caps = [compile_expr(cond.cap) for cond in conditions]

    def check(c):
        return step(c)[:, None], np.stack([cap(c) for cap in caps], axis=-1)

    return Claim(f"{corollary.split('.')[1]}.step_within_caps", corollary, variant, statement, flag,
                 Sampler(params), check, parts=tuple(cond.name for cond in conditions))


def _thm2_84() -> Claim:
    """(83) => (84) [L962-L966], the four lines typed from the proof (sigma^2 cancels in line 4)."""
    thm2 = get("sdgt.thm2")
    cap = compile_expr(sp.Min(*(c.cap for c in thm2.variant("printed").conditions
                                if c.name.startswith("thm2 (83")), evaluate=False))

    def check(c):
        g, K, L, p = c["gamma"], c["K"], c["L"], c["p"]
        pp = np.minimum(c["p"], c["q"])
        lhs = [7524 * g ** 2 * K ** 3 * L ** 2 / pp ** 3,
               1254 * L ** 2 * K ** 3 * g ** 2 / pp,
               (108 * g ** 2 * K ** 2 * L / pp ** 3
                + 24 * K ** 2 * L ** 2 * g ** 2 / pp * 432 / pp ** 2 * K ** 2 * L * g ** 2
                + 22572 / pp ** 3 * g ** 2 * K ** 2 * L ** 3 * 6 * K ** 3 * g ** 2),
               9 * L * (1 - p) * K * g ** 2 + 4 / pp * 432 / pp ** 2 * K * L * g ** 2
               + 67716 / pp ** 3 * g ** 4 * K ** 4 * L ** 3]
        rhs = [pp / 4, pp / 8, 120 * L / pp * g ** 2 * K ** 2, 1740 / pp ** 3 * g ** 2 * K * L]
        return np.stack(lhs, -1), np.stack(rhs, -1)

    return Claim("thm2.84_from_83", "sdgt.thm2", "printed",
                 "the caps (83) (all four; p' = min(p, q)) imply the four inequalities (84): 7524 g^2 "
                 "K^3 L^2/p'^3 <= p'/4, 1254 L^2 K^3 g^2/p' <= p'/8, gradient coefficient <= 120 L g^2 "
                 "K^2/p', noise coefficient <= 1740 g^2 K L/p'^3", "F16",
                 Sampler((L_, K_, P_, Q_, FRACTION), _build(cap)), check,
                 parts=("84a", "84b", "84c", "84d"))


# Lemmas 2 and 3 -----------------------------------------------------------------------------------

def _lemma_claims() -> list[Claim]:
    def lemma2(c):
        g, K, L = c["gamma"], c["K"], c["L"]
        return 8 * g ** 2 * K ** 2 * L + 36 * K ** 3 * g ** 3 * L ** 2, g * K

    def log_alpha(c):
        K, g, L = c["K"], c["gamma"], c["L"]
        return np.log1p(1 / (K - 1) + 4 * K * g ** 2 * L ** 2)

    def alpha_K(c):
        return c["K"] * log_alpha(c), np.log(3.0)

    def alpha_used(c):
        K, la = c["K"], log_alpha(c)
        geometric = np.log(np.expm1((K - 1) * la) / np.expm1(la))  # sum_{k'=0}^{K-2} alpha^k'
        return (np.stack([(K - 1) * la, geometric], -1),
                np.stack([np.full_like(K, np.log(3.0)), np.log(3 * K)], -1))

    lemma3_sampler = Sampler((L_, Param("K", 2, 1000, integer=True), FRACTION),
                             _build(compile_expr(LEMMA3_CAP.cap)))
    return [
        Claim("lemma2.coefficient", "sdgt.lemma2", "printed",
              "[L879] gamma <= 1/(36KL) implies -2 gamma K + 8 gamma^2 K^2 L + 36 K^3 gamma^3 L^2 <= "
              "-gamma K (checked as 8 gamma^2 K^2 L + 36 K^3 gamma^3 L^2 <= gamma K)", "F10",
              Sampler((L_, K_, FRACTION), _build(compile_expr(LEMMA2_CAP.cap))), lemma2),
        Claim("lemma3.alpha_K", "sdgt.lemma3", "printed",
              "(46) [L730] as printed: gamma < 1/(8KL) implies alpha^K <= 3, alpha = 1 + 1/(K-1) + "
              "4 K gamma^2 L^2 (logs compared)", "F36", lemma3_sampler, alpha_K, log=True),
        Claim("lemma3.alpha_K_minus_1", "sdgt.lemma3", "printed",
              "what (43)-(47) use: gamma < 1/(8KL) implies alpha^(K-1) <= 3 and sum_{k'=0}^{K-2} "
              "alpha^k' <= 3K (logs compared)", "F36", lemma3_sampler, alpha_used, log=True,
              parts=("alpha^(K-1) <= 3", "sum alpha^k' <= 3K")),
    ]


# Theorem 5 ----------------------------------------------------------------------------------------

def _thm5_claim(variant: str) -> Claim:
    thm5 = get("sdgt.thm5")
    keys = ("Hhat", "lambda2", "lambda3", "E_d2d_sum", "m_max")

    def check(c):
        ex = thm5.evaluate(variant, **{k: c[k] for k in keys}).extras
        root = k_star(c["p"], *(c[k] for k in keys[:4]))
        return (np.stack([ex["K_lower"], root, ex["K_lower"]], -1),
                np.stack([root, ex["K_upper"], ex["K_upper"]], -1))

    sampler = Sampler((Param("Hhat", 1e-6, 1e3), Param("lambda2", 1e-4, 10.0), Param("lambda3", 1e-8, 1.0),
                       Param("E_d2d_sum", 1e-3, 1e3), Param("m_max", 1, 1000, integer=True),
                       Param("p position", 0.0, 1.0, log=False)), _build())
    return Claim("thm5.contains_root", "sdgt.thm5", variant,
                 "for every p in [1/max_s m_s, 1] (the controller's p is one of them) the root K* of "
                 "(118) lies in [K_lower, K_upper] of Theorem 5; part 3: the interval is not empty "
                 "(independent of p)", "F29", sampler, check,
                 parts=("K_lower <= K*", "K* <= K_upper", "K_lower <= K_upper"))


# Corollary 3 --------------------------------------------------------------------------------------

def _cor3_claims() -> list[Claim]:
    exp_sampler = Sampler((L_, MU_OVER_L, K_, P_, Q_, FRACTION, T_),
                          _build(_max_step("sdgt.thm3", "appendix")))

    def exponent(divisor):
        def check(c):
            x = c["mu"] * c["K"] * c["gamma"]
            return c["T"] * np.log1p(-x / 4), -x * c["T"] / divisor
        return check

    numbers = _thm3_numbers("appendix")

    def floor_order(c):
        floor = numbers(c, with_b=True)["floor"]
        order = c["K"] ** 5 * c["L"] ** 5 * c["sigma"] ** 2 * c["gamma"] ** 5 / (c["p"] * c["q"])
        return np.where(np.isfinite(floor), floor, np.nan), order

    return [
        Claim("cor3.exp_rate", "sdgt.cor3", "printed",
              "(103) [L1074]: for gamma <= gamma_bar, (1 - mu K gamma/4)^T <= exp(-mu K gamma T/2) "
              "(logs compared)", "F22", exp_sampler, exponent(2), log=True),
        Claim("cor3.exp_rate", "sdgt.cor3", "rederived",
              "(1 - mu K gamma/4)^T <= exp(-mu K gamma T/4) (logs compared)", "F22", exp_sampler,
              exponent(4), log=True),
        Claim("cor3.floor_order", "sdgt.cor3", "printed",
              "(103): ||(I - A)^{-1} b||_1 <= K^5 L^5 sigma^2 gamma^5/(pq) (its O(.) read with constant "
              "1; A, b of (93)-(94), gamma <= gamma_bar (97); points with rho(A) >= 1 are excluded)",
              "F22", Sampler((L_, MU_OVER_L, K_, P_, Q_, N_, SIGMA_, FRACTION),
                             _build(_max_step("sdgt.thm3", "appendix"))), floor_order),
    ]


@functools.cache
def claims() -> tuple[Claim, ...]:
    """Every audited claim of SD-GT, in paper order (built and compiled once)."""
    cor1 = (E1_, K_, N_, L_, SIGMA_, T_, P_, Q_, D_, D5_)
    cor2 = (R_, K_, N_, SIGMA_, T_, L_, P_, Q_)
    return (
        *_lemma_claims(),
        *(_thm1_coefficients(v) for v in ("printed", "rederived")),
        *(_step_within_caps("sdgt.cor1", "sdgt.thm1", v, cor1, "F6",
                            "Corollary 1's step size (13) satisfies Theorem 1's step-size conditions "
                            "(74) and Lemmas 1, 3-5") for v in ("printed", "rederived")),
        _thm2_84(),
        *(_step_within_caps("sdgt.cor2", "sdgt.thm2", v, cor2, "F17",
                            "Corollary 2's step size (15) satisfies Theorem 2's step-size conditions "
                            "((83), before (88), Lemmas 2-5) of the same variant")
          for v in ("printed", "rederived")),
        *(c for v in ("main", "appendix", "rederived") for c in _thm3_claims(v)),
        *_cor3_claims(),
        *(_thm5_claim(v) for v in ("printed", "corrected")),
    )


#: the paper ``sdgt`` of ``fedbound audit``
AUDIT = PAPERS.register(PaperAudit(
    PAPER.scope, "SD-GT: Lemmas 2-3, Theorems 1-3 and 5, Corollaries 1-3",
    PAPER.seed, claims, adapter="fedbound.theory.sdgt.adapter"))
