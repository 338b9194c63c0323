"""The checkable claims of FedNova (seed 001, papers/fednova.md), for :mod:`fedbound.theory.audit`.

Each claim is a sentence of the paper "under these conditions, lhs <= rhs", evaluated from the
registered results (fednova.*), from the vector reductions of
:mod:`fedbound.theory.fednova.accumulation`, or, for an intermediate step of a proof, from the proof's
formula typed here with its line. Learning rates are sampled as a fraction (log-uniform in [1e-4, 1])
of the cap the claim assumes (``max_step`` of the result), so the cap itself is among the extremes.
Verdicts are computed by the audit engine; the expected ones (from the notes) are asserted in
tests/theory/fednova/test_fednova_audit.py.

Domains (log-uniform unless said): L in [1e-3, 1e3]; tau_eff, a1_max, tau_bar, tau_tilde in [1, 1e4];
C = (C/a1_max^2) a1_max^2 with the fraction in [1e-6, 1] (C <= max_i ||a_i||_1^2, (100)), or C in
[1e-3, 1e8]; beta^2 = 1 + (beta^2 - 1) with beta^2 - 1 in [1e-6, 1e3]; q, m in 1..1e4 (integers);
T in 1..1e12; tau_i in 1..1000 (integers); Lemma 4's a in [1e-3, 1e3], x = (x/a) a with x/a uniform
in [-10, 10]; FedProx's alpha in [1e-12, 1e-6] for the limits (132), [1e-6, 1] for (134)-(137);
p_i proportional to values log-uniform in [1e-3, 1].

Admissible instances (issue 22): where the paper defines a constant from primitives, the sampler
draws the primitives and derives it. Corollary 3's schedule draws three clients (tau_i, p_i and a
geometric accumulation vector a_{i,k} proportional to r_i^k, r_i log-uniform in [1e-2, 1e2]: SGD at
r = 1, the proximal shape (31) [L397] for r > 1, the decayed-rate shape [L128] for r < 1) and derives
B, C of (94)-(95) at w = p, FedNova's default tau_eff = sum_i p_i ||a_i||_1 [L961] and tau_tilde =
tau_bar (fixed a_i, (146)); every instance then satisfies the relations that the definitions imply
(:func:`fedbound.theory.fednova.thm1.accumulation_relations`: B <= C, C <= a1_max^2, ...), which the
audit checks on every point. Where constants are free in the statement (Theorem 1 holds for any
tau_eff and any C <= a1_max^2, which a single client with ||a||_1 = a1_max and a_{-1} = (1 - C/a1_max^2)
a1_max realizes), they are sampled directly.

Each claim declares its kind (printed: the paper's own statement; consistency: a re-derived or
corrected reading, or a check fedbound constructs), what it tests, its regime of use (steps within
the condition and >= 1/10 of its cap; T >= 10) and, for a printed claim with a corrected reading,
the id of that reading (``corrected``: the severity is "typo" when it holds). The order claims
(:class:`~fedbound.theory.order_claim.OrderClaim`) fit the exponents of the headline rates
O(1/sqrt(m tau_bar T)) [L157], [L210], [L212] over at least two decades.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from fedbound.argtypes import PositiveArray
from fedbound.papers import PAPERS, Citation, PaperAudit
from fedbound.local_solver import geometric_sum
from fedbound.theory.claim import Claim, Param, Regime, Sampler, compile_expr
from fedbound.theory.fednova import accumulation as acc
from fedbound.theory.order_claim import OrderClaim
from fedbound.theory import symbols as S
from fedbound.theory.symbols import Domain
from fedbound.theory.registry import get
from fedbound.theory.fednova.common import PAPER

L_ = Param("L", 1e-3, 1e3)
TAU_EFF_ = Param("tau_eff", 1.0, 1e4)
A1_MAX_ = Param("a1_max", 1.0, 1e4)
C_FRACTION = Param("C/a1_max^2", 1e-6, 1.0)
C_ = Param("C", 1e-3, 1e8)
#: beta^2 - 1 of Assumption 3 (beta^2 >= 1): sampled in [1e-6, 1e3], any value >= 0 in a proof
BETA2_EXCESS = Param("beta2-1", 1e-6, 1e3, domain=Domain(0.0, math.inf, low_open=False))
FRACTION = Param("eta/cap", 1e-4, 1.0)
Q_ = Param("q", 1, 1e4, integer=True)
M_ = Param("m", 1, 1e4, integer=True)
TAU_BAR_ = Param("tau_bar", 1.0, 1e4)
TAU_TILDE_ = Param("tau_tilde", 1.0, 1e4)
T_ = Param("T", 1, 1e12, integer=True)
TAUS = tuple(Param(f"tau_{i}", 1, 1000, integer=True) for i in (1, 2, 3))
P_RAW = tuple(Param(f"p_raw_{i}", 1e-3, 1.0) for i in (1, 2, 3))
RATIOS = tuple(Param(f"r_{i}", 1e-2, 1e2) for i in (1, 2, 3))
#: the regime of a claim whose step is a fraction of its cap: at least 1/10 of it
NEAR_CAP = Regime.at_least(**{"eta/cap": 0.1})
#: the repair a scheduled step depends on: the paper states eta = sqrt(m/(tau_bar T)) (L157, L635) or
#: sqrt(q/(tau_tilde T)) (L955) with no lower bound on T, and it satisfies the step conditions only
#: for T >= T_min (notes 4.3, 4.10; the extras T_min of the results)
T_MIN_REPAIR = "T >= T_min, so that the scheduled eta meets the step conditions [derived; the paper states no T_min]"


def _build(step_cap=None):
    """A ``build`` hook: beta2 = 1 + (beta2 - 1), C = fraction a1_max^2, and eta
    = fraction * cap, where ``step_cap(constants)`` is the cap the claim assumes."""

    def build(raw: dict) -> dict:
        c = dict(raw)
        if "beta2-1" in c:
            c["beta2"] = 1 + c.pop("beta2-1")
        if "C/a1_max^2" in c:
            c["C"] = c.pop("C/a1_max^2") * c["a1_max"] ** 2
        if step_cap is not None:
            c["eta"] = c.pop("eta/cap") * step_cap(c)
        return c

    return build


def _max_step(result_id: str, variant: str):
    result = get(result_id)
    names = sorted({S.short_name(s) for cond in result.variant(variant).conditions for s in cond.cap.free_symbols})
    return lambda c: result.max_step(variant, **{k: c[k] for k in names})[0]


def _columns(*arrays) -> np.ndarray:
    return np.stack(np.broadcast_arrays(*arrays), axis=-1)


def geometric_norms(tau: PositiveArray, r: PositiveArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(||a||_1, ||a||_2^2, a_{-1}) of a_k = r^k / max(1, r^(tau-1)), k < tau (largest entry 1): the
    decayed-rate shape [L128] for r < 1, SGD for r = 1, the proximal shape a_k = (1-alpha)^(tau-1-k)
    (31) [L397] with 1 - alpha = 1/r for r > 1; through expm1, no overflow at tau = 1000."""
    u = -np.abs(np.log(r))
    last = np.where(r >= 1, r ** 0, np.exp(u * (tau - 1)))     # r ** 0: a 1 of r's kind (traced too)
    return geometric_sum(u, tau), geometric_sum(2 * u, tau), last


def _client_arrays(c) -> tuple[np.ndarray, ...]:
    """p (normalized), tau_i and the norms of the three sampled clients' geometric a_i, shape (N, 3)."""
    p, taus = _clients(c)
    ratios = _columns(*(c[f"r_{i}"] for i in (1, 2, 3)))
    return (p, taus, *geometric_norms(taus, ratios))


def _fednova_build(raw: dict) -> dict:
    """The constants of FedNova (w = p) that (93)-(95) define from the sampled clients: tau_eff =
    sum_i p_i ||a_i||_1 (App. H [L961]), A, B, C, a1_max, tau_bar, m = 3 and Theorem 3's time averages
    for a_i fixed across rounds (146) (tau_tilde = tau_bar)."""
    c = _build()(raw)
    p, taus, a1, a2, last = _client_arrays(c)
    tau_eff = np.sum(p * a1, -1)
    A, B, C = acc.abc(p, a1, a2, last, tau_eff)
    c.update(tau_eff=tau_eff, A=A, B=B, C=C, a1_max=a1.max(-1), tau_bar=taus.mean(-1),
             m=np.full(tau_eff.shape, 3.0))
    c.update(A_tilde=A, B_tilde=B, C_tilde=C, tau_tilde=c["tau_bar"])
    return c


# Theorem 1 ---------------------------------------------------------------------------------------

def _thm1_claims() -> list[Claim]:
    caps = [compile_expr(c.cap) for c in get("fednova.thm1").variant("printed").conditions]

    def implies(c):
        return _columns(c["eta"], c["eta"]), _columns(*(cap(c) for cap in caps))

    D = compile_expr(get("fednova.thm1_round").variant("unsimplified").extras["D"])

    def coefficients(c):
        """(89) [L587] -> (91) [L596] through (90): each coefficient of (89) against (91)'s."""
        d, b2 = D(c), c["beta2"]
        eta2L2C = c["eta"] ** 2 * c["L"] ** 2 * c["C"]
        lhs = _columns(0.25 * np.ones_like(d), 1 / (1 - d), d / (2 * (1 - d)))
        rhs = _columns(0.5 * (1 - d * (1 + b2)) / (1 - d), 1.5 * np.ones_like(d), 3 * eta2L2C)
        return lhs, rhs

    sched = get("fednova.thm1_sched").variant("printed")
    eta_s, t_min = compile_expr(sched.extras["eta"]), compile_expr(sched.extras["T_min_98_99"])

    def sched_build(raw):
        c = _build()(raw)
        c["T"] = np.ceil(t_min(c) * c.pop("T/T_min"))
        return c

    def sched_check(c):
        eta = eta_s(c)
        return _columns(eta, eta), _columns(*(cap(c) for cap in caps))

    return [
        Claim("thm1.101_implies_98_99", "fednova.thm1", "sufficient",
              "(100)-(101) [L625-L631]: eta L <= (1/2) min{1/(a1_max sqrt(2 beta^2+1)), 1/tau_eff} implies "
              "(98) and (99), for any C <= a1_max^2", "",
              Sampler((L_, TAU_EFF_, A1_MAX_, C_FRACTION, BETA2_EXCESS, FRACTION),
                      _build(_max_step("fednova.thm1", "sufficient"))),
              implies, parts=("(98)", "(99)"), tests="condition", regime=NEAR_CAP),
        Claim("thm1_round.89_to_91", "fednova.thm1_round", "printed",
              "(90) [L589-L590]: (98)-(99) (D = 4 eta^2 L^2 C <= 1/(2 beta^2+1)) make every coefficient of "
              "(89) at most (91)'s: 1/4 <= (1/2)(1 - D(1+beta^2))/(1-D), 1/(1-D) <= 3/2, D/(2(1-D)) <= "
              "3 eta^2 L^2 C", "",
              Sampler((L_, TAU_EFF_, C_, BETA2_EXCESS, FRACTION), _build(_max_step("fednova.thm1", "printed"))),
              coefficients, parts=("grad_sq", "sigma^2 B", "kappa^2"), tests="condition", regime=NEAR_CAP),
        Claim("thm1_sched.T_min", "fednova.thm1_sched", "printed",
              "[derived] T >= T_min_98_99 = 4 m L^2 max(tau_eff^2, (2 beta^2+1) C)/tau_bar makes "
              "eta = sqrt(m/(tau_bar T)) satisfy (98) and (99)", "L157/L635",
              Sampler((L_, TAU_EFF_, C_, BETA2_EXCESS, M_, TAU_BAR_,
                       Param("T/T_min", 1.0, 1e6, domain=Domain(1.0, math.inf, low_open=False))), sched_build),
              sched_check, parts=("(98)", "(99)"), kind="consistency", tests="condition",
              regime=Regime.at_least(T=10), conditions=(T_MIN_REPAIR,)),
    ]


# Lemma 4 -----------------------------------------------------------------------------------------

def _lemma4_claims(variant: str) -> list[Claim]:
    ex = get("fednova.lemma4").variant(variant)
    kappa2, chi2, bound = (compile_expr(e) for e in (ex.extras["kappa2"], ex.extras["chi2"], ex.bound))
    sampler = Sampler((TAUS[0], TAUS[1], Param("a", 1e-3, 1e3), Param("x/a", -10.0, 10.0, log=False)),
                      _build())

    def example(c):
        """The example of [L691-L701] from its definitions: p = (1/2, 1/2), FedAvg's implicit weights
        (6) with ||a_i||_1 = tau_i, gradients x - a and x + a at x, the eta -> 0 limit point of FedAvg
        (the minimizer of F~ = w_1 F_1 + w_2 F_2, (117)) and grad F there."""
        a, taus = c["a"], _columns(c["tau_1"], c["tau_2"])
        p = np.full(taus.shape, 0.5)
        _, w = acc.implicit_weights(p, taus)
        x = c["x/a"] * a
        grads = _columns(x - a, x + a)
        surrogate = np.sum(w * grads, -1)
        measure = np.sum(w * (grads - surrogate[:, None]) ** 2, -1)   # sum_i w_i (grad F_i - grad F~)^2
        x_limit = w[:, 0] * a - w[:, 1] * a
        return {"measure": measure, "chi2": acc.chi2(p, w), "limit": x_limit ** 2}

    def assumption3(c):
        e, k = example(c), kappa2(c)
        return _columns(e["measure"], k), _columns(k, e["measure"])

    def chi_square(c):
        e, k = example(c), chi2(c)
        return _columns(k, e["chi2"]), _columns(e["chi2"], k)

    def limit(c):
        e, b = example(c), bound(c)
        return _columns(e["limit"], b, e["limit"]), _columns(b, e["limit"], 2 * b)

    name = {"printed": "printed kappa^2 = 2 w_1 w_2 a^2 (116)", "corrected": "kappa^2 = 4 w_1 w_2 a^2"}[variant]
    chi_name = {"printed": "printed chi^2 = (tau_2-tau_1)^2/(2 tau_1 tau_2) [L709]",
                "corrected": "chi^2 = (tau_1-tau_2)^2/(4 tau_1 tau_2)"}[variant]
    common = dict(result_id="fednova.lemma4", variant=variant, sampler=sampler)
    if variant == "printed":
        common.update(kind="printed")
        suffix, link = "", lambda name: {"corrected": f"{name}_corrected"}
    else:
        common.update(kind="consistency")
        suffix, link = "_corrected", lambda name: {}
    return [
        Claim("lemma4.kappa2" + suffix, **link("lemma4.kappa2"), statement=f"(115)-(116) [L696-L697]: {name} equals sum_i w_i (grad F_i - grad F~)^2 "
              "of the example (w_i = tau_i/(tau_1+tau_2)); part 1 is Assumption 3 with beta^2 = 1", flag="L697",
              check=assumption3, parts=("measure <= kappa2", "kappa2 <= measure"), **common),
        Claim("lemma4.chi2" + suffix, **link("lemma4.chi2"), statement=f"[L709]: {chi_name} equals the definition sum_i (p_i - w_i)^2/w_i",
              flag="L709", check=chi_square, parts=("formula <= definition", "definition <= formula"), **common),
        Claim("lemma4.limit" + suffix, **link("lemma4.limit"), statement="(118)-(120): FedAvg's eta -> 0 limit has ||grad F||^2 = chi^2 kappa^2 "
              "(this variant's pair) and it is below Theorem 2's floor 2 chi^2 kappa^2", flag="L697",
              check=limit, parts=("lim <= chi2 kappa2", "chi2 kappa2 <= lim", "lim <= 2 chi2 kappa2"), **common),
    ]


# Theorem 2's floor at FedAvg's limit ------------------------------------------------------------

def _thm2_floor_claim() -> Claim:
    floor = compile_expr(get("fednova.thm2").variant("printed").extras["floor"])

    def check(c):
        """notes sec. 4.4 check (b): F_i = (x - e_i)^2/2 (d = 1, H_i = 1, so beta^2 = 1 and kappa^2 =
        sum_i w_i (e_i - ebar_w)^2), FedAvg's eta -> 0 limit x = sum_i w_i e_i (Lemma 1, (30) [L385])
        with w of (6); grad F there is sum_i (p_i - w_i)(e_i - ebar_w) (104)-(105)."""
        p, taus = _clients(c)
        _, w = acc.implicit_weights(p, taus)
        e = _columns(*(c[f"e_{i}"] for i in (1, 2, 3)))
        centred = e - np.sum(w * e, -1, keepdims=True)
        grad_F = np.sum((p - w) * centred, -1)
        kappa2 = np.sum(w * centred ** 2, -1)
        chi2 = acc.chi2(p, w)
        lim = grad_F ** 2
        return _columns(lim, lim), _columns(chi2 * kappa2, floor({"chi2": chi2, "kappa2": kappa2}))

    return Claim("thm2.fedavg_limit_below_floor", "fednova.thm2", "printed",
                 "(10), (103) at FedAvg's eta -> 0 limit on F_i = (x - e_i)^2/2 (3 clients, any tau_i, p): "
                 "||grad F(x_inf)||^2 <= chi^2 kappa^2 (Lemma 3 with grad F~ = 0) <= 2 chi^2 kappa^2 (the floor)",
                 "", Sampler((*TAUS, *P_RAW, *(Param(f"e_{i}", -10.0, 10.0, log=False) for i in (1, 2, 3))),
                             _build()),
                 check, parts=("lim <= chi2 kappa2", "lim <= 2 chi2 kappa2"), kind="consistency")


# FedProx and Corollary 2 ------------------------------------------------------------------------

def _clients(c) -> tuple[np.ndarray, np.ndarray]:
    taus = _columns(*(c[f"tau_{i}"] for i in (1, 2, 3)))
    raw = _columns(*(c[f"p_raw_{i}"] for i in (1, 2, 3)))
    return raw / raw.sum(-1, keepdims=True), taus


def _fedprox_claims() -> list[Claim]:
    keys = ("tau_eff", "A", "B", "C")

    def limits(c):
        p, taus = _clients(c)
        prox, avg = acc.fedprox_closed_forms(p, taus, c["alpha"]), acc.fedavg_closed_forms(p, taus)
        scale = 3 * c["alpha"] * taus.max(-1)
        return (_columns(*(np.abs(prox[k] - avg[k]) for k in keys)),
                _columns(*(scale * np.abs(avg[k]) for k in keys)))

    def relaxations(c):
        taus = _columns(*(c[f"tau_{i}"] for i in (1, 2, 3)))
        prox = acc.fedprox_closed_forms(np.full(taus.shape, 1 / 3), taus, c["alpha"])
        inv = 1 / c["alpha"]
        return (_columns(prox["tau_eff"], prox["A"], prox["B"], prox["C"]),
                _columns(inv, np.ones_like(inv), inv ** 2, inv ** 2))

    return [
        Claim("fedprox.limits_132", "fednova.fedprox", "printed",
              "(132) [L757]: as alpha -> 0 FedProx's tau_eff, A, B, C (128)-(131) tend to FedAvg's (121)-(124); "
              "checked as |X_FedProx(alpha) - X_FedAvg| <= 3 alpha tau_max |X_FedAvg| (m = 3 clients, "
              "any p)", "L755",
              Sampler((*TAUS, *P_RAW, Param("alpha", 1e-12, 1e-6)), _build()), limits, parts=keys,
              kind="consistency"),
        Claim("cor2.relaxations_134_137", "fednova.cor2", "printed",
              "(134)-(137) [L775-L778] with p_i = 1/m: tau_eff <= 1/alpha, A <= 1, B <= 1/alpha^2, "
              "C <= 1/alpha^2 for every alpha in (0, 1] (not only tau_i >> 1)", "",
              Sampler((*TAUS, Param("alpha", 1e-6, 1.0)), _build()), relaxations,
              parts=("tau_eff <= 1/alpha", "A <= 1", "B <= 1/alpha^2", "C <= 1/alpha^2")),
    ]


def _cor2_claim(variant: str) -> Claim:
    alpha = compile_expr(get("fednova.cor2").variant(variant).extras["alpha_star"])

    def zero_derivative(c):
        a = alpha(c)
        left = c["tau_bar"] / np.sqrt(c["m"] * c["tau_bar"] * c["T"])
        right = 2 * c["m"] / (a ** 3 * c["tau_bar"] * c["T"])
        return _columns(left, right), _columns(right, left)

    link = {"corrected": "cor2.derivative_139_rederived"} if variant == "printed" else {}
    return Claim("cor2.derivative_139" + ("" if variant == "printed" else "_rederived"), "fednova.cor2", variant,
                 "(139) [L786]: alpha* sets the derivative of (138) (unit constants) to zero: "
                 "tau_bar/sqrt(m tau_bar T) = 2 m/(alpha^3 tau_bar T)", "L786",
                 Sampler((M_, TAU_BAR_, T_), _build()), zero_derivative,
                 parts=("left <= right", "right <= left"), regime=Regime.at_least(T=10),
                 kind="printed" if variant == "printed" else "consistency", **link)


# Corollary 3 -------------------------------------------------------------------------------------

def _cor3_claims() -> list[Claim]:
    cor3 = get("fednova.cor3")
    conditions = cor3.variant("printed").conditions
    caps = [compile_expr(cond.cap) for cond in conditions]

    def min_cap(which):
        """The cap of the conditions ``which`` (indices into Corollary 3's three) only."""
        return lambda c: np.min(np.stack(np.broadcast_arrays(*(caps[i](c) for i in which))), axis=0)

    params = (L_, TAU_EFF_, Q_, BETA2_EXCESS, C_, FRACTION)

    def coefficient(c):
        lhs = 0.5 + 3 * c["tau_eff"] * c["eta"] * c["L"]           # (173) [L915]
        return _columns(lhs, lhs), _columns(np.full_like(lhs, 1.5), np.full_like(lhs, 0.75))

    def facts(c):
        d = 4 * c["eta"] ** 2 * c["L"] ** 2 * c["C"]
        b2 = c["beta2"]
        return (_columns(1 / (1 - d), 1 + 1 / (12 * b2), 3 * d * b2 / (1 - d)),
                _columns(1 + 1 / (12 * b2), np.full_like(d, 2.0), np.full_like(d, 0.25)))

    bound = compile_expr(cor3.variant("printed").bound)
    all_caps = min_cap((0, 1, 2))

    def sched_build(raw):
        """B, C, tau_eff, tau_tilde from three clients' a_i, p_i (module doc); T = (T/T_min) T_min
        (C = 0, every tau_i = 1, leaves the third condition without a cap)."""
        c = _fednova_build(raw)
        with np.errstate(divide="ignore"):
            c["T"] = np.ceil(c["q"] / (c["tau_tilde"] * all_caps(c) ** 2) * c.pop("T/T_min"))
        return c

    sched_sampler = Sampler((L_, *TAUS, *RATIOS, *P_RAW, Q_, BETA2_EXCESS, Param("sigma", 1e-3, 1e3),
                             Param("kappa2", 1e-6, 1e6), Param("Delta", 1e-3, 1e3), Param("T/T_min", 1.0, 1e6)),
                            sched_build)

    def sched(variant):
        rhs = compile_expr(get("fednova.cor3_sched").variant(variant).bound)

        def check(c):
            at = dict(c, eta=np.sqrt(c["q"] / (c["tau_tilde"] * c["T"])))
            return bound(at), rhs(c)
        return check

    return [
        Claim("cor3.174_coefficient", "fednova.cor3", "printed",
              "(173)-(175) [L915-L923]: under eta L <= 1/(2 tau_eff) and 6 tau_eff eta L (1 + beta^2/q) <= 1/2 "
              "the coefficient 1/2 + 3 tau_eff eta L of (173) (printed 1/2 + 2 tau_eff eta L in (174)) is <= 3/2 "
              "as (175) uses, even <= 3/4", "L918", Sampler(params, _build(min_cap((0, 1)))), coefficient,
              parts=("<= 3/2 (175)", "<= 3/4"), tests="condition", regime=NEAR_CAP,
              conditions=("the coefficient 1/2 + 3 tau_eff eta L of (173) [L915] for (174)'s printed "
                          "1/2 + 2 tau_eff eta L [L918]",)),
        Claim("cor3.176_to_178", "fednova.cor3", "printed",
              "[L930]: D = 4 eta^2 L^2 C <= 1/(12 beta^2 + 1) implies 1/(1-D) <= 1 + 1/(12 beta^2) <= 2 and "
              "3 D beta^2/(1-D) <= 1/4", "", Sampler(params, _build(min_cap((2,)))), facts,
              parts=("1/(1-D) <= 1+1/(12 beta^2)", "1+1/(12 beta^2) <= 2", "3 D beta^2/(1-D) <= 1/4"),
              tests="condition", regime=NEAR_CAP),
        Claim("cor3_sched.183", "fednova.cor3_sched", "printed",
              "(183) [L955]: (182) at eta = sqrt(q/(tau_tilde T)) (with T large enough for Corollary 3's "
              "conditions) is at most (183) as printed (constants of (182) carried); three clients with "
              "geometric a_i, B, C, tau_eff = sum p_i ||a_i||_1 and tau_tilde = tau_bar derived from them",
              "L212/L851/L955", sched_sampler, sched("printed"), regime=Regime.at_least(T=10),
              corrected="cor3_sched.183_rederived", conditions=(T_MIN_REPAIR,)),
        Claim("cor3_sched.183_rederived", "fednova.cor3_sched", "rederived",
              "(182) at eta = sqrt(q/(tau_tilde T)) substituted correctly (second term 8 L (sigma^2 + "
              "3 kappa^2) tau_eff/sqrt(q tau_tilde T), notes sec. 4.10 item 3) bounds (182) there",
              "L212/L851/L955", sched_sampler, sched("rederived"), kind="consistency",
              regime=Regime.at_least(T=10), conditions=(T_MIN_REPAIR,)),
    ]


# Orders (issue 22: big-O claims checked by scaling) -------------------------------------------

ORDER_L = Param("L", 1e-2, 1.0)
ORDER_TAUS = tuple(Param(f"tau_{i}", 1, 100, integer=True) for i in (1, 2, 3))
ORDER_CONSTANTS = (Param("beta2-1", 1e-3, 10.0), Param("sigma", 1e-2, 10.0), Param("kappa2", 1e-4, 1e2),
                   Param("Delta", 1e-2, 1e2))


def _fedavg_build(raw: dict) -> dict:
    """Theorem 1's constants for averaging with p (FedAvg-type, (5)-(6)): tau_eff, w implicit (6)
    [L115-L116], A, B, C (93)-(95), a1_max, tau_bar, m = 3, from the three sampled clients."""
    c = _build()(raw)
    p, taus, a1, a2, last = _client_arrays(c)
    tau_eff, w = acc.implicit_weights(p, a1)
    A, B, C = acc.abc(w, a1, a2, last, tau_eff)
    c.update(tau_eff=tau_eff, A=A, B=B, C=C, a1_max=a1.max(-1), tau_bar=taus.mean(-1), m=np.full(A.shape, 3.0))
    return c


def _identical_build(raw: dict) -> dict:
    """m identical clients (p_i = 1/m, one geometric a of length tau and ratio r): w = p, tau_eff =
    ||a||_1, A = ||a||_2^2/||a||_1, B = ||a||_2^2 - a_{-1}^2, C = ||a||_1 (||a||_1 - a_{-1}), tau_bar =
    tau (the constants of (93)-(95) that do not depend on m); T large enough that eta =
    sqrt(m/(tau_bar T)) meets (98)-(99) up to m = 100 and the m/(tau_bar T) terms of (8) stay below
    1% of the 1/sqrt(m tau_bar T) ones there (the regime where (8) reads O(1/sqrt(m tau_bar T)))."""
    c = _build()(raw)
    tau, a1, a2, last = c["tau_1"], *geometric_norms(c["tau_1"], c["r_1"])
    c.update(tau_eff=a1, A=a2 / a1, B=a2 - last ** 2, C=a1 * (a1 - last), tau_bar=tau, a1_max=a1)
    slow = (4 * c["Delta"] + 4 * c["L"] * c["sigma"] ** 2 * c["A"]) / np.sqrt(tau)
    fast = (6 * c["L"] ** 2 * c["sigma"] ** 2 * c["B"] + 12 * c["L"] ** 2 * c["kappa2"] * c["C"]) / tau
    t_min = 4 * 100 * c["L"] ** 2 * np.maximum(a1 ** 2, (2 * c["beta2"] + 1) * c["C"]) / tau
    c["T"] = np.ceil(np.maximum.reduce([t_min, (100 * fast * 100 ** 1.5 / slow) ** 2, np.full_like(tau, 10.0)])
                     * c.pop("T/T_min"))
    return c


def _order_claims() -> list[OrderClaim]:
    """The headline rates: Theorem 1 (8) [L155-L165] O(1/sqrt(m tau_bar T)) in T (FedAvg-type
    averaging) and in m; Theorem 3 [L208-L212] O(1/sqrt(m tau_tilde T)) in T (FedNova); Corollary 3
    [L212], (155) [L851] O(1/sqrt(q tau_tilde T)) in T and in tau_tilde, with (182) at eta =
    sqrt(q/(tau_tilde T)) as the quantity (the rederived variant of fednova.cor3_sched is (182) there
    exactly). Every grid point of T lies above the T_min of the conditions (ranges in each sampler)."""
    thm1 = compile_expr(get("fednova.thm1_sched").variant("printed").bound)
    thm3 = compile_expr(get("fednova.thm3_sched").variant("printed").bound)
    cor3 = compile_expr(get("fednova.cor3_sched").variant("rederived").bound)
    clients = (ORDER_L, *ORDER_TAUS, *RATIOS, *P_RAW, *ORDER_CONSTANTS)

    def sgd_clients(c):
        """(182) at the schedule for identical vanilla-SGD clients with tau_tilde local steps:
        tau_eff = tau (FedNova's default [L961]), B = tau - 1, C = tau (tau - 1) ((121)-(124))."""
        tau = c["tau_tilde"]
        return cor3({**c, "tau_eff": tau, "B": tau - 1, "C": tau * (tau - 1)})

    common = dict(points=64, steps=13, conditions=(T_MIN_REPAIR,))
    fixed_tau_eff = (T_MIN_REPAIR, "a server tau_eff fixed across rounds, which the proof of Theorem 3 "
                                   "assumes (L800-L833, notes 4.9)")
    return [
        OrderClaim("thm1_sched.rate_T", "fednova.thm1_sched", "printed",
                   "(8) [L157]: Theorem 1 at eta = sqrt(m/(tau_bar T)) is O(1/sqrt(m tau_bar T)) in T, "
                   "T in 1e7..1e10 (above T_min of (98)-(99) for every sampled instance)", "L157/L635",
                   Sampler(clients, _fedavg_build), thm1, "T", -0.5, (7, 10), **common),
        OrderClaim("thm1_sched.rate_m", "fednova.thm1_sched", "printed",
                   "(8) [L157]: Theorem 1 at eta = sqrt(m/(tau_bar T)) is O(1/sqrt(m tau_bar T)) in m, m in "
                   "1..100 identical clients, T large enough for the conditions and for the m/(tau_bar T) "
                   "terms to be lower order", "L157",
                   Sampler((ORDER_L, ORDER_TAUS[0], RATIOS[0], *ORDER_CONSTANTS, Param("T/T_min", 1.0, 1e2)),
                           _identical_build), thm1, "m", -0.5, (0, 2), **common),
        OrderClaim("thm3_sched.rate_T", "fednova.thm3_sched", "printed",
                   "[L210], (149): Theorem 3 (FedNova) at eta = sqrt(m/(tau_tilde T)) is "
                   "O(1/sqrt(m tau_tilde T)) in T, T in 1e7..1e10 (above T_min_152)", "",
                   Sampler(clients, _fednova_build), thm3, "T", -0.5, (7, 10),
                   **{**common, "conditions": fixed_tau_eff}),
        OrderClaim("cor3_sched.rate_T", "fednova.cor3_sched", "rederived",
                   "[L212], (155) [L851]: Corollary 3's (182) at eta = sqrt(q/(tau_tilde T)) is "
                   "O(1/sqrt(q tau_tilde T)) in T, T in 1e11..1e14 (above T_min)", "L212/L851/L955",
                   Sampler((*clients, Param("q", 1, 100, integer=True)), _fednova_build), cor3, "T", -0.5,
                   (11, 14), **common),
        OrderClaim("cor3_sched.rate_tau_tilde", "fednova.cor3_sched", "rederived",
                   "[L212], (155) [L851]: Corollary 3's (182) at eta = sqrt(q/(tau_tilde T)) is "
                   "O(1/sqrt(q tau_tilde T)) in tau_tilde (identical vanilla-SGD clients, tau_eff = "
                   "tau_tilde, tau_tilde in 1..1000, T in 1e10..1e12 above T_min)", "L212/L851/L955",
                   Sampler((ORDER_L, Param("q", 1, 100, integer=True), *ORDER_CONSTANTS, Param("T", 1e10, 1e12, integer=True)),
                           _build()), sgd_clients, "tau_tilde", -0.5, (0, 3), **common),
    ]


@functools.cache
def claims() -> tuple[Claim, ...]:
    """Every audited claim of FedNova, in paper order (built and compiled once)."""
    return (
        *_thm1_claims(),
        _thm2_floor_claim(),
        *(c for v in ("printed", "corrected") for c in _lemma4_claims(v)),
        *_fedprox_claims(),
        *(_cor2_claim(v) for v in ("printed", "rederived")),
        *_cor3_claims(),
        *_order_claims(),
    )


#: the paper ``fednova`` of ``fedbound audit``; citation: seed L1-18
AUDIT = PAPERS.register(PaperAudit(
    PAPER.scope, "FedNova: Theorems 1-2, Lemma 4, FedProx's closed forms, Corollaries 2-3",
    PAPER.seed, claims, adapter="fedbound.theory.fednova.adapter",
    citation=Citation(
        "Tackling the Objective Inconsistency Problem in Heterogeneous Federated Optimization",
        ("Jianyu Wang", "Qinghua Liu", "Hao Liang", "Gauri Joshi", "H. Vincent Poor"), 2020,
        "NeurIPS", "2007.07481")))
