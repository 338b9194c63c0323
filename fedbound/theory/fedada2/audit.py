r"""The checkable claims of FedAda2 (seed 004, papers/fedada2.md), for :mod:`fedbound.theory.audit`.

Coordinate-wise lemmas are checked against the client optimizers themselves, written here as plain
vectorized numpy recursions (independent of fedbound.algorithms): SM3-II with delay z
(:func:`sm3_ii`, Algorithm 4 [L717-L736] / Algorithm 2 [L667-L695]), ADMU (:func:`admu`, Algorithm 7
[L1357-L1375]) and AGDU (:func:`agdu`, Algorithm 9 [L1490-L1512]), each over a batch of gradient
sequences. A gradient sequence is G times a pattern from a fixed table (pattern 0: all +1, the others
uniform in [-1, 1], seed 0) with the entries at preconditioner-update steps k = 1, z+1, 2z+1, ...
scaled by ``update_scale`` in [1e-6, 1] (small is the worst case of Lemma 15's proof: the
preconditioner hardly grows while the other steps move by about G/(sqrt(v0) + eps)). The parameter
vector is a 2 x 3 matrix (d = 6) with the SM3 cover rows + columns (q = 5).

Realizable instances only (issue 22): Lemmas 15, 17, 28 and 30 serve Theorem 20 and Corollaries 27
and 29, which assume full-batch local gradients [L128, L913], g_k = grad F_i(x_{k-1}). A gradient
that is zero in every coordinate is not a full-batch counterexample: the client then stays where it
is and every later gradient is zero too, so the old domain's update_scale = 0 (zero gradients at
every update step, non-zero elsewhere) was one stochastic realization, not a full-batch run. With
update_scale > 0 every gradient is non-zero, the iterates move at every step, and such a sequence is
the full-batch gradient sequence of some smooth F_i with |grad_j F_i| <= G (a smooth interpolation
through the visited points; L is free in these lemmas): the counterexamples below are realizable.
The lemmas are pathwise statements (every realization, A2 holds per sample [L134-L136]); the
expectation of Proposition 9 (iv) is checked by Monte Carlo (:func:`_prop9_expectation`), never by
one realization.

What each claim is (``claims()``, :data:`META`): ``kind`` "printed" for the paper's statements and
"consistency" for the readings fedbound builds (a proved or tight form, the vanishing terms of
Theorem 20, the non-vacuity comparison); ``conditions`` names the repairs of the paper's definitions
a verdict depends on (:data:`MU_CARRY_OVER`, :data:`MU0_IS_V0`); ``corrected`` links a printed
statement to its corrected reading; the client lemmas' regime of use is eta_l <= 1 (Theorem 20 takes
eta_l = c T^-1/2, Corollary 24 [L1120-L1126]).

Domains (log-uniform unless said): K in 1..12, z in 1..4, G in [1e-2, 1e2], eps in [1e-4, 10], v0 in
[1e-6, 10] (mu_0 = v0 wires v0 into SM3, notes 2.4), eta_l in [1e-3, 10], pattern 0..63 and
update_scale in [0, 1] (uniform); beta1 in [0, 0.99] and beta2 = beta1^2 + (1 - beta1^2) s, s in
[1e-3, 1) for Adam; the server: beta~1 in [0, 0.999] (uniform), T in 1..200, tau in [1e-3, 10].
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Annotated, Mapping

import numpy as np
import sympy as sp
from scipy.special import polygamma

from fedbound.argtypes import Count, Dims, Range
from fedbound.papers import PAPERS, Citation, PaperAudit
from fedbound.theory.certify.trace import Traced, array, exact_twin, to_sympy
from fedbound.theory.claim import Claim, Param, Regime, Sampler, compile_expr
from fedbound.theory.expectation_claim import ExpectationClaim
from fedbound.theory.order_claim import OrderClaim
from fedbound.theory.registry import get
from fedbound.theory.fedada2.common import PAPER

K_MAX, D_ROWS, D_COLS, PATTERNS = 12, 2, 3, 64
D = D_ROWS * D_COLS
#: SM3 cover of a 2 x 3 matrix: its rows and its columns (q = 5), as a (q, d) membership mask
COVER = np.array([[(j // D_COLS) == r for j in range(D)] for r in range(D_ROWS)]
                 + [[(j % D_COLS) == c for j in range(D)] for c in range(D_COLS)])


def _table() -> np.ndarray:
    table = np.random.default_rng(0).uniform(-1.0, 1.0, (PATTERNS, K_MAX, D))
    table[0] = 1.0
    return table


PATTERN_TABLE = _table()

K_ = Param("K", 1, K_MAX, integer=True)
Z_ = Param("z", 1, 4, integer=True)
G_ = Param("G", 1e-2, 1e2)
EPS_ = Param("eps", 1e-4, 10.0)
V0_ = Param("v0", 1e-6, 10.0)
ETA_ = Param("eta_l", 1e-3, 10.0)
PATTERN_ = Param("pattern", 0, PATTERNS - 1, log=False, integer=True)
SCALE_ = Param("update_scale", 1e-6, 1.0, log=False)   # > 0: full-batch realizable (module doc)
CLIENT = (K_, Z_, G_, EPS_, V0_, ETA_, PATTERN_, SCALE_)


#: per-instance values of a batch of N instances (N,): step counts >= 1, positive and non-negative
#: reals, decay rates in [0, 1); gradient sequences (N, K_MAX, d)
Steps = Annotated[np.ndarray, Dims((1,)), Range(1.0)]
PositiveBatch = Annotated[np.ndarray, Dims((1,)), Range(0.0, low_open=True)]
NonNegativeBatch = Annotated[np.ndarray, Dims((1,)), Range(0.0)]
DecayBatch = Annotated[np.ndarray, Dims((1,)), Range(0.0, 1.0, high_open=True)]
Gradients = Annotated[np.ndarray, Dims((3,))]


def update_steps(K: Steps, z: Steps) -> np.ndarray:
    """(N, K_MAX) mask of the preconditioner-update steps k = 1, z+1, 2z+1, ... <= K [L695]."""
    k = np.arange(1, K_MAX + 1)
    return ((k - 1) % z[:, None] == 0) & (k <= K[:, None])


def gradients(c: Mapping[str, np.ndarray], d: Annotated[int, Range(1, D)] = D) -> np.ndarray:
    """(N, K_MAX, d) gradient sequences of the module docstring (zero beyond step K)."""
    pattern = PATTERN_TABLE[c["pattern"].astype(int)][:, :, :d]
    update = update_steps(c["K"], c["z"])
    active = np.arange(1, K_MAX + 1) <= c["K"][:, None]
    scale = np.where(update, c["update_scale"][:, None], 1.0) * active
    return c["G"][:, None, None] * pattern * scale[:, :, None]


def sm3_ii(g: Gradients, z: Steps, eps: PositiveBatch, eta: PositiveBatch, v0: NonNegativeBatch,
           carry_over: bool = True, cover: Annotated[np.ndarray, Dims((2,))] = COVER
           ) -> dict[str, np.ndarray]:
    """SM3-II with delay z over a batch, Algorithm 4 [L717-L736] / eq. (SM3) [L695]:

    update step ((k-1)/z integer): v_k(j) = min_{b: j in S_b} mu_{k-1}(b) + g_k(j)^2,
                                   mu_k(b) = max_{j in S_b} v_k(j)   (mu_k reset to 0 first);
    other steps: v_k = v_{k-1}, and mu_k = mu_{k-1} (``carry_over``, notes 2.4) or mu_k = 0 as printed
    (Alg. 2 line 7 [L675], Alg. 4 line 4 [L723]);  x_k = x_{k-1} - eta g_k/(sqrt(v_k) + eps).

    mu_0 = v0 (so that v0 enters, notes 2.4). Returns the displacement ``delta`` = x_K - x_0 (N, d),
    the ``v`` and ``mu`` histories (N, K_MAX, d) and (N, K_MAX, q)."""
    n, steps, d = g.shape
    mu = np.broadcast_to(v0[:, None], (n, cover.shape[0])).astype(v0.dtype)   # float, or the
    v = np.broadcast_to(v0[:, None], (n, d)).astype(v0.dtype)                  # certifier's exact
    x = np.zeros((n, d))                                                       # numbers (objects)
    vs, mus = np.zeros((n, steps, d), v0.dtype), np.zeros((n, steps, cover.shape[0]), v0.dtype)
    for k in range(1, steps + 1):
        gk = g[:, k - 1]
        update = ((k - 1) % z == 0)[:, None]
        v_new = np.min(np.where(cover[None], mu[:, :, None], np.inf), axis=1) + gk ** 2
        mu_new = np.max(np.where(cover[None], v_new[:, None, :], -np.inf), axis=2)
        v = np.where(update, v_new, v)
        mu = np.where(update, mu_new, mu if carry_over else 0.0)
        x = x - eta[:, None] * gk / (np.sqrt(v) + eps[:, None])
        vs[:, k - 1], mus[:, k - 1] = v, mu
    return {"delta": x, "v": vs, "mu": mus}


def agdu(g: Gradients, z: Steps, eps: PositiveBatch, eta: PositiveBatch, v0: NonNegativeBatch) -> np.ndarray:
    """AGDU, Algorithm 9 [L1490-L1512]: v_k = v_{k-1} + g_k^2 on update steps, x_k = x_{k-1} - eta g_k/
    (sqrt(v_k) + eps); returns x_K - x_0 (N, d)."""
    v = np.broadcast_to(v0[:, None], g[:, 0].shape).astype(v0.dtype)
    x = np.zeros(g[:, 0].shape)
    for k in range(1, g.shape[1] + 1):
        gk = g[:, k - 1]
        v = np.where(((k - 1) % z == 0)[:, None], v + gk ** 2, v)
        x = x - eta[:, None] * gk / (np.sqrt(v) + eps[:, None])
    return x


def admu(g: Gradients, K: Steps, z: Steps, b1: DecayBatch, b2: DecayBatch, eps: PositiveBatch,
         eta: PositiveBatch, bias_correction: bool = True) -> np.ndarray:
    """ADMU, Algorithm 7 [L1357-L1375] (m_0 = v_0 = 0): m_k = b1 m_{k-1} + (1 - b1) g_k; on update steps
    v_k = b2 v_{k-1} + (1 - b2) g_k^2 and v-hat_k = v_k/(1 - b2^ceil(k/z)), else v-hat_k = v-hat_{k-1};
    m-hat_k = m_k/(1 - b1^k); x_k = x_{k-1} - eta m-hat_k/(sqrt(v-hat_k) + eps). Without
    ``bias_correction`` m-hat = m and v-hat = v (what Lemma 28's proof uses, notes 8.13). Steps beyond
    K are skipped. Returns x_K - x_0 (N, d)."""
    m = np.zeros(g[:, 0].shape)
    v = np.zeros_like(m)
    vhat = np.zeros_like(m)
    x = np.zeros_like(m)
    for k in range(1, g.shape[1] + 1):
        gk = g[:, k - 1]
        active = (k <= K)[:, None]
        update = ((k - 1) % z == 0)[:, None] & active
        m = np.where(active, b1[:, None] * m + (1 - b1[:, None]) * gk, m)
        v = np.where(update, b2[:, None] * v + (1 - b2[:, None]) * gk ** 2, v)
        n_updates = np.ceil(k / z)[:, None]
        if bias_correction:
            vhat = np.where(update, v / (1 - b2[:, None] ** n_updates), vhat)
            mhat = m / (1 - b1[:, None] ** k)
        else:
            vhat, mhat = v, m
        x = np.where(active, x - eta[:, None] * mhat / (np.sqrt(vhat) + eps[:, None]), x)
    return x


def _worst(lhs: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per sample (axis 0), the pair (lhs, rhs) of largest lhs/rhs over all other axes."""
    n = lhs.shape[0]
    lhs, rhs = np.broadcast_arrays(lhs, rhs)
    lhs, rhs = lhs.reshape(n, -1), rhs.reshape(n, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        i = np.argmax(np.where(rhs > 0, lhs / rhs, np.where(lhs > 0, np.inf, 0.0)), axis=1)
    rows = np.arange(n)
    return lhs[rows, i], rhs[rows, i]


def _bound(result_id: str, variant: str):
    return compile_expr(get(result_id).variant(variant).bound)


# Lemma 15 and the SM3 accumulator ------------------------------------------------------------------

def _lemma15(variant: str, carry_over: bool = True) -> Claim:
    bound = _bound("fedada2.lemma15", variant)

    def check(c):
        delta = sm3_ii(gradients(c), c["z"], c["eps"], c["eta_l"], c["v0"],
                       carry_over=carry_over)["delta"]
        return np.max(np.abs(delta), axis=1), bound(c)

    mu = "mu carried over" if carry_over else "mu reset every step as printed"
    return Claim("lemma15.phi1", "fedada2.lemma15", variant + ("" if carry_over else ", mu reset"),
                 f"|Delta_i^t| <= Phi_1 coordinate-wise for SM3-II with delay z ({mu}, mu_0 = v0) "
                 f"on bounded gradients, Phi_1 {variant}", "8.1", Sampler(CLIENT), check)


def _accumulator(carry_over: bool) -> Claim:
    """The printed algorithm (mu reset) is checked at v0 = 0, where mu_0 = v0 = 0 is Algorithm 2's own
    initialisation, so that its verdict depends on no repair; the carry-over reading with v0 >= 0
    wired in as mu_0 = v0 (notes 2.4)."""
    params = CLIENT if carry_over else tuple(p for p in CLIENT if p.name != "v0")

    def check(c):
        if not carry_over:
            c = dict(c, v0=np.zeros_like(c["G"]))
        g = gradients(c)
        v = sm3_ii(g, c["z"], c["eps"], c["eta_l"], c["v0"], carry_over=carry_over)["v"]
        update = update_steps(c["K"], c["z"])
        lower = c["v0"][:, None, None] + np.cumsum(np.where(update[:, :, None], g ** 2, 0.0), axis=1)
        active = (np.arange(1, K_MAX + 1) <= c["K"][:, None])[:, :, None]
        return _worst(np.where(active, lower, 0.0), np.where(active, v, 1.0))

    name = "carry_over" if carry_over else "printed"
    text = "mu carried over on non-update steps" if carry_over else "mu reset every step as printed"
    return Claim("sm3.accumulator", "fedada2.lemma15", name,
                 f"SM3-II with delay ({text}) satisfies Lemma 15's v_k(j) >= v0 + sum_{{l <= ceil(k/z)}} "
                 "g_{(l-1)z+1}(j)^2 for every k <= K and j [L748-L752]" + ("" if carry_over else ", v0 = 0"),
                 "8.12", Sampler(params), check)


def _lemma17(variant: str) -> Claim:
    bound = _bound("fedada2.lemma17", variant)

    def check(c):
        c = dict(c, v0=np.zeros_like(c["G"]), d=np.full_like(c["G"], D))
        out = sm3_ii(gradients(c), c["z"], c["eps"], c["eta_l"], c["v0"])
        k = np.arange(1, K_MAX + 1)
        c_k = {name: np.asarray(value)[:, None] for name, value in c.items()}
        rhs = bound(dict(c_k, K=k[None, :].astype(float)))[:, :, None]
        both = np.concatenate([out["v"], out["mu"]], axis=2)
        active = (k <= c["K"][:, None])[:, :, None]
        return _worst(np.where(active, both, 0.0), np.where(active, rhs, 1.0))

    return Claim("lemma17.accumulator", "fedada2.lemma17", variant,
                 f"SM3-II (v0 = 0): mu_k(b), v_k(j) <= the Lemma 17 bound ({variant}) at every k <= K",
                 "8.29", Sampler((K_, Z_, G_, EPS_, ETA_, PATTERN_, SCALE_)), check)


# Lemma 16 -----------------------------------------------------------------------------------------

SERVER = (Param("beta1_tilde", 0.0, 0.999, log=False), Param("T", 1, 200, integer=True),
          Param("tau", 1e-3, 10.0), Param("eta", 1e-3, 10.0), Param("Phi1", 1e-3, 1e3),
          PATTERN_, Param("sign_flip", 0.0, 1.0, log=False))
T_MAX = 200


def _deltas(c: dict) -> np.ndarray:
    """(N, T_MAX) server pseudo-gradients with |Delta_t| <= Phi_1: Phi_1 times a pattern's entries
    (repeated to length T_MAX; pattern 0 is constant), negated where |entry| < ``sign_flip``, zero
    beyond T."""
    rows = PATTERN_TABLE[c["pattern"].astype(int)].reshape(len(c["T"]), -1)
    rows = np.tile(rows, (1, -(-T_MAX // rows.shape[1])))[:, :T_MAX]
    sign = np.where(np.abs(rows) < c["sign_flip"][:, None], -1.0, 1.0)
    active = np.arange(1, T_MAX + 1) <= c["T"][:, None]
    return c["Phi1"][:, None] * np.abs(rows) * sign * active


def _lemma16(variant: str) -> Claim:
    bound = _bound("fedada2.lemma16", variant)

    def check(c):
        delta = _deltas(c)
        b, tau, eta = c["beta1_tilde"], c["tau"], c["eta"]
        m, v = np.zeros(len(b)), tau ** 2
        worst = np.zeros(len(b))
        for t in range(T_MAX):
            m = b * m + (1 - b) * delta[:, t]
            v = v + delta[:, t] ** 2
            worst = np.maximum(worst, np.where(t < c["T"], eta * np.abs(m) / (np.sqrt(v) + tau), 0.0))
        return worst, bound(c)

    return Claim("lemma16.server_step", "fedada2.lemma16", variant,
                 f"SU with m~_0 = 0, v~_0 = tau^2 and |Delta_t| <= Phi_1: every server step <= Phi_2 ({variant})",
                 "", Sampler(SERVER), check)


# Lemmas 21 and 22 -------------------------------------------------------------------------------

def _lemma21(variant: str) -> Claim:
    bound = _bound("fedada2.lemma21", variant)
    sampler = Sampler((Param("beta1_tilde", 0.0, 0.999, log=False), Param("T", 1, 1000, integer=True)))

    def check(c):
        # sum_{t<=T} sum_{r<=t} b^(t-r) (t-r)^2 = sum_{u=0}^{T-1} (T - u) b^u u^2, summed term by term
        b, T = c["beta1_tilde"], c["T"]
        total, power = np.zeros_like(b), np.ones_like(b)
        for u in range(1, int(np.max(T))):
            power = power * b
            total += np.where(u < T, (T - u) * power * u ** 2, 0.0)
        return total, bound(c)

    return Claim("lemma21.series", "fedada2.lemma21", variant,
                 f"sum_t sum_(r<=t) b^(t-r) (t-r)^2 <= {'c(b) T' if variant == 'printed' else 'b(1+b)/(1-b)^3 T'}",
                 "", sampler, check)


def _lemma22() -> Claim:
    bound = _bound("fedada2.lemma22", "printed")

    def check(c):
        delta = _deltas(c)
        b, tau = c["beta1_tilde"][:, None], c["tau"][:, None]
        t = np.arange(1, T_MAX + 1)[None, :]
        s = np.cumsum(delta ** 2, axis=1)
        lhs = np.sum((1 - b ** t) * delta ** 2 / (s + tau ** 2), axis=1)  # (1-b) sum_r b^(t-r) = 1 - b^t
        return lhs, bound(c)

    return Claim("lemma22.log_sum", "fedada2.lemma22", "printed",
                 "(1-b) sum_t sum_(r<=t) b^(t-r) Delta_t^2/(sum_(l<=t) Delta_l^2 + tau^2) <= 1 - b + "
                 "log(1 + T Phi_1^2/tau^2) for |Delta_t| <= Phi_1", "", Sampler(SERVER), check)


# Lemmas 28 and 30 ---------------------------------------------------------------------------------

def _adam_build(raw: dict) -> dict:
    c = dict(raw)
    b1 = c["beta1"]
    c["beta2"] = b1 ** 2 + (1 - b1 ** 2) * c.pop("beta2 position")
    c["B"] = np.ones_like(b1)
    return c


ADAM = Sampler((K_, Z_, G_, Param("eps", 1e-8, 1.0), ETA_, PATTERN_, SCALE_,
                Param("beta1", 0.0, 0.99, log=False), Param("beta2 position", 1e-3, 0.999)), _adam_build)


def _lemma28(bias_correction: bool) -> Claim:
    bound = _bound("fedada2.lemma28", "printed")

    def check(c):
        g = gradients(c, d=1)
        delta = admu(g, c["K"], c["z"], c["beta1"], c["beta2"], c["eps"], c["eta_l"],
                     bias_correction=bias_correction)
        return np.abs(delta[:, 0]), bound(c)

    which = "bias-corrected ADMU (Algorithm 7 as written)" if bias_correction else \
        "ADMU without bias correction (as Lemma 28's proof treats it)"
    return Claim("lemma28.phi1", "fedada2.lemma28",
                 "printed, " + ("bias-corrected" if bias_correction else "no bias correction"),
                 f"|Delta_i^t| <= Lemma 28's Phi_1 (Xi = B = 1) for {which}", "8.13", ADAM, check)


def _lemma30(variant: str) -> Claim:
    bound = _bound("fedada2.lemma30", variant)

    def check(c):
        delta = agdu(gradients(c), c["z"], c["eps"], c["eta_l"], c["v0"])
        return np.max(np.abs(delta), axis=1), bound(dict(c, B=np.ones_like(c["v0"])))

    return Claim("lemma30.phi1", "fedada2.lemma30", variant,
                 f"|Delta_i^t| <= Lemma 30's Phi_1 ({variant}, B = 1) for AGDU with v_0 = v0",
                 "8.28", Sampler(CLIENT), check)


# Proposition 9 (iv) -------------------------------------------------------------------------------

def _inverse_squares(T: np.ndarray) -> np.ndarray:
    """sum_{t=1}^T 1/t^2 = pi^2/6 - psi_1(T + 1) (the trigamma function)."""
    return np.pi ** 2 / 6 - polygamma(1, T + 1)


def _exact_inverse_squares(T: np.ndarray) -> np.ndarray:
    """The same sum exactly (the certifier's numbers): pi^2/6 - psi_1(T + 1), kept as sympy's
    trigamma (compared with its guaranteed digits, never expanded into T rationals)."""
    return array([Traced(sp.pi ** 2 / 6 - sp.polygamma(1, to_sympy(t) + 1, evaluate=False))
                  for t in np.asarray(T, dtype=object).reshape(-1)]).reshape(np.shape(T))


INVERSE_SQUARES = exact_twin(_inverse_squares, _exact_inverse_squares)


def _prop9_series() -> Claim:
    def check(c):
        T = c["T"]
        return INVERSE_SQUARES(T), np.ones_like(T)   # sum_{t<=T} 1/t^2

    return Claim("prop9_iv.series", "fedada2.prop9_iv", "printed",
                 "the step of (iv) [L463]: sum_{t=1}^T 1/t^2 <= int_1^inf x^-2 dx = 1", "8.15",
                 Sampler((Param("T", 1, 10 ** 6, integer=True),)), check)


# Proposition 14 -----------------------------------------------------------------------------------

def _prop14(variant: str, delayed: bool) -> Claim:
    bound = _bound("fedada2.prop14", variant)
    params = (K_, Z_ if delayed else Param("z", 1, 1, integer=True), G_, EPS_, ETA_, PATTERN_, SCALE_)

    def check(c):
        zero = np.zeros_like(c["G"])
        delta = agdu(gradients(c), c["z"], c["eps"], c["eta_l"], zero)
        return np.max(np.abs(delta), axis=1), bound(dict(c, T=np.ones_like(zero)))

    label = variant + (", delayed z" if delayed else ", z = 1")
    return Claim("prop14.movement", "fedada2.prop14", label,
                 "one round of zero-init client AdaGrad (AGDU, " + ("z in 1..4" if delayed else "z = 1")
                 + f") moves every coordinate at most the Prop. 14 radius at t = 1 ({variant})", "8.19",
                 Sampler(params), check)


# Theorem 20: does the bound vanish with eta_l = c T^-1/2? -----------------------------------------

T_FAR = (2.0 ** 60, 2.0 ** 70)


def _thm20_vanishes(variant: str) -> Claim:
    """Log-slopes in T, between T = 2^60 and 2^70, of each ratio Psi_i/Psi6 of the bound with eta_l =
    c T^-1/2 and eta fixed (Corollary 24's choice [L1120-L1126]); part 1 "vanishes": the largest slope
    is <= -0.01; part 2 "rate T^-1/2": it is <= -0.49."""
    terms = [compile_expr(get("fedada2.thm20").variant(variant).extras[f"Psi{i}"]) for i in range(1, 7)]
    sampler = Sampler((Param("f_gap", 1e-3, 1e3), Param("eta", 1e-3, 10.0), Param("L", 1e-3, 1e3),
                       Param("d", 1, 1000, integer=True), K_, Z_, G_, EPS_,
                       Param("eps_s", 1e-6, 1.0), Param("tau", 1e-3, 10.0),
                       Param("beta1_tilde", 0.0, 0.99, log=False), V0_, Param("vtilde0 / tau^2", 1.0, 100.0),
                       Param("c_l", 1e-3, 10.0)), _thm20_build)

    def ratios(c, T):
        c = dict(c, T=np.full_like(c["c_l"], T), eta_l=c["c_l"] / np.sqrt(T))
        psi = [f(c) for f in terms]
        return np.stack([p / psi[5] for p in psi[:5]], axis=-1)

    def check(c):
        r1, r2 = ratios(c, T_FAR[0]), ratios(c, T_FAR[1])
        slope = np.max(np.log(r2 / r1), axis=-1) / np.log(T_FAR[1] / T_FAR[0])
        return np.stack([slope, slope], -1), np.broadcast_to([-0.01, -0.49], (len(slope), 2))

    return Claim("thm20.vanishes", "fedada2.thm20", variant,
                 "with eta_l = c T^-1/2, eta fixed, every term Psi_i/Psi6 of the bound vanishes (log-slope in "
                 "T <= -0.01 between T = 2^60 and 2^70) at rate T^-1/2 (slope <= -0.49)", "8.2", sampler, check,
                 parts=("vanishes", "rate T^-1/2"), log=True)


def _thm20_build(raw: dict) -> dict:
    c = dict(raw)
    c["vtilde0"] = c.pop("vtilde0 / tau^2") * c["tau"] ** 2
    return c


# Theorem 20 at typical constants: non-vacuity and the claimed rate --------------------------------

#: the regime of typical constants of Theorem 20 (module doc of the claims below)
TYPICAL = Sampler((Param("T", 10, 10 ** 6, integer=True), Param("c_l", 1e-2, 1.0), Param("eta", 1e-3, 1.0),
                   Param("tau", 1e-5, 1e-1), Param("eps", 1e-3, 1.0), Param("eps_s", 1e-4, 1e-2),
                   Param("beta1_tilde", 0.0, 0.99, log=False), Param("G", 0.1, 10.0), Param("L", 0.1, 100.0),
                   Param("d", 10, 10 ** 5, integer=True), K_, Z_, Param("f_gap", 0.1, 100.0)),
                  lambda raw: dict(raw, eta_l=raw["c_l"] / np.sqrt(raw["T"]), v0=np.zeros_like(raw["T"]),
                                   vtilde0=raw["tau"] ** 2))


def trivial_bound(c: Mapping[str, np.ndarray]) -> np.ndarray:
    """A bound on min_{t in [T]} ||grad f(x_{t-1})||^2 <= ||grad f(x_0)||^2 that needs no theorem:
    d G^2 (A2, coordinate-wise |grad_j F_i| <= G, so |grad_j f| <= G [L134-L138]) and 2 L f_gap (f
    L-smooth and bounded below with a minimiser [L90, L130]: ||grad f(x)||^2 <= 2 L (f(x) - f*))."""
    return np.minimum(c["d"] * c["G"] ** 2, 2 * c["L"] * c["f_gap"])


def _thm20_nonvacuous(variant: str) -> Claim:
    """Theorem 20's bound against :func:`trivial_bound` at typical constants (:data:`TYPICAL`): T in
    10..1e6, eta_l = c_l T^-1/2 with c_l in [0.01, 1] (Corollary 24's choice [L1120-L1126], inside
    the rederived variant's step condition T eta_l^2 <= 1), the server eta in [1e-3, 1], tau in
    [1e-5, 0.1], the client eps in [1e-3, 1] and eta_l ranges of the paper's grids (notes 6.2,
    [L1649-L1702]), eps_s in [1e-4, 1e-2] (1e-3 in the notes' numerical set-up, notes 4.9), v0 = 0
    and v~0 = tau^2 (FedAda2's defaults [L668, L675]), G in [0.1, 10], L in [0.1, 100], d in 10..1e5,
    K in 1..12, z in 1..4, f_gap in [0.1, 100]. Vacuous when the bound exceeds the trivial bound at
    every admissible random point of the regime."""
    bound = _bound("fedada2.thm20", variant)

    def check(c):
        return bound(c), trivial_bound(c)

    return Claim("thm20.nonvacuous" + ("" if variant == "printed" else "." + variant), "fedada2.thm20",
                 variant, f"Theorem 20's bound ({variant}) at typical constants is below the trivial bound "
                 "min(d G^2, 2 L f_gap) on min_t ||grad f(x_{t-1})||^2", "step", TYPICAL, check,
                 log=False, kind="consistency", tests="nonvacuous",
                 regime=Regime.at_least(T=10))


def _thm20_rate(variant: str) -> OrderClaim:
    """Corollary 24's rate [L1120-L1126]: with eta fixed and eta_l = c_l T^-1/2 the bound is
    O(T^-1/2), fitted over T = 1e16..1e20 (four decades, in Phi2's asymptotic branch eta Phi1/tau <
    eta sqrt(1 - b~1) at every sampled point: the notes' pre-asymptotic trap, 4.9)."""
    bound = _bound("fedada2.thm20", variant)

    def value(c):
        T = np.round(c["T"])                                   # whole rounds
        return bound(dict(c, T=T, eta_l=c["c_l"] / np.sqrt(T)))

    return OrderClaim("thm20.rate" + ("" if variant == "printed" else "." + variant), "fedada2.thm20", variant,
                      f"Corollary 24: with eta = Theta(1), eta_l = c T^-1/2 Theorem 20's bound ({variant}) is "
                      "O(T^-1/2)", "8.2", TYPICAL, value, variable="T", claimed=-0.5, decades=(16, 20),
                      kind="printed" if variant == "printed" else "consistency")


def _cor24_rate(variant: str) -> OrderClaim:
    """Corollary 24 [L1120-L1126] in its own Theta-form: the sum of psi_i/psi6 at eta = 1, eta_l =
    T^-1/2 (a function of T alone) is O(T^-1/2), fitted over T = 1e2..1e8 (each grid value rounded to
    whole rounds)."""
    formula = _bound("fedada2.cor24", variant)

    def bound(c):
        return formula(dict(c, T=np.round(c["T"])))

    return OrderClaim("cor24.rate" + ("" if variant == "printed" else "." + variant), "fedada2.cor24", variant,
                      f"Corollary 24: the Theta-form of the bound ({variant}) at eta = 1, eta_l = T^-1/2 is "
                      "O(T^-1/2)", "8.2", Sampler((Param("T", 1, 10, integer=True),)), bound, variable="T",
                      claimed=-0.5, decades=(2, 8), points=4,
                      kind="printed" if variant == "printed" else "consistency")


# Proposition 9 (iv) by Monte Carlo ------------------------------------------------------------------

PROP9 = Sampler((Param("N", 1, 10, integer=True), Param("participation", 0.0, 1.0, log=False),
                 Param("K", 1, 5, integer=True), Param("eps", 1e-3, 1.0), Param("x0", 0.0, 3.0, log=False),
                 Param("T", 1, 20, integer=True)),
                lambda raw: dict(raw, cohort=np.maximum(1, np.round(raw["participation"] * raw["N"]))))


def prop9_toy(c: Mapping[str, float], rng: np.random.Generator, seeds: Count) -> np.ndarray:
    """``seeds`` realizations of ||grad f(x_T)||^2 = x_T^2 on Proposition 9's toy problem [L338-L342,
    L443-L463]: d = 1, f = x^2/2, N clients, client i (1-based) with g = x + xi, xi ~ t_{i+1} (client
    1 heavy-tailed); each round samples ``cohort`` clients uniformly without replacement, each runs K
    local steps of the normalised client AdaGrad (2) [L375-L379], x <- x - eta_t g/(|g| + eps), with
    eta_t = 1/t^2, and the server averages (learning rate 1)."""
    n, m, K = int(c["N"]), int(c["cohort"]), int(c["K"])
    x = np.full(seeds, float(c["x0"]))
    for t in range(1, int(c["T"]) + 1):
        clients = np.argsort(rng.random((seeds, n)), axis=1)[:, :m]          # 0-based: t_{i+2}
        local = np.repeat(x[:, None], m, axis=1)
        for _ in range(K):
            g = local + rng.standard_t(clients + 2.0)
            local = local - g / (np.abs(g) + c["eps"]) / t ** 2
        x = local.mean(axis=1)
    return x ** 2


def _prop9_expectation(variant: str) -> ExpectationClaim:
    bound = _bound("fedada2.prop9_iv", variant)
    which = {"printed": "2 x0^2 + 2 (the statement [L334])", "proof": "2 x0^2 + 2 K^2 (the proof [L463])"}
    return ExpectationClaim(
        "prop9_iv.expectation" + ("" if variant == "printed" else "." + variant), "fedada2.prop9_iv", variant,
        f"Proposition 9 (iv): client AdaGrad with eta_t = 1/t^2 on the Student-t toy has E||grad f(x_T)||^2 "
        f"<= {which[variant]}; Monte Carlo over the noise and the sampling", "8.15", PROP9, prop9_toy,
        lambda c: float(bound({k: np.asarray(float(v)) for k, v in c.items()})),
        instances=48, kind="printed" if variant == "printed" else "consistency")


# What each claim is ------------------------------------------------------------------------------

#: the repairs of the paper's definitions a verdict may depend on (notes 2.4, 8.12)
MU_CARRY_OVER = ("mu carried over on non-update steps: Alg. 2 line 7 [L675] and Alg. 4 line 4 [L723] "
                 "reset mu every step (notes 2.4, 8.12)")
MU0_IS_V0 = "mu_0 = v0 wires v0 into SM3, which Alg. 2 never uses (notes 2.4)"
#: the regime of use of the client lemmas: Theorem 20 takes eta_l = c T^-1/2 [L1120-L1126]
SMALL_STEP = Regime("eta_l <= 1 (Theorem 20 takes eta_l = c T^-1/2, Cor. 24 [L1120-L1126])",
                    lambda v: np.asarray(v["eta_l"]) <= 1.0)
BOTH_REPAIRS = (MU_CARRY_OVER, MU0_IS_V0)

#: (id, variant) of a built claim -> what replaces its fields (a new id for every reading beside the
#: printed one, so that ``corrected`` names exactly one claim)
META: dict[tuple[str, str], dict] = {
    ("lemma15.phi1", "printed"): dict(conditions=BOTH_REPAIRS, corrected="lemma15.phi1.proved", regime=SMALL_STEP),
    ("lemma15.phi1", "proved"): dict(id="lemma15.phi1.proved", kind="consistency", conditions=BOTH_REPAIRS,
                                     regime=SMALL_STEP),
    ("lemma15.phi1", "proved, mu reset"): dict(id="lemma15.phi1.mu_reset", kind="consistency",
                                               conditions=(MU0_IS_V0,), regime=SMALL_STEP),
    ("sm3.accumulator", "printed"): dict(corrected="sm3.accumulator.carry_over"),
    ("sm3.accumulator", "carry_over"): dict(id="sm3.accumulator.carry_over", kind="consistency",
                                            conditions=BOTH_REPAIRS),
    ("lemma16.server_step", "tight"): dict(id="lemma16.server_step.tight", kind="consistency"),
    ("lemma17.accumulator", "printed"): dict(conditions=(MU_CARRY_OVER,)),
    ("lemma17.accumulator", "proved"): dict(id="lemma17.accumulator.proved", kind="consistency",
                                            conditions=(MU_CARRY_OVER,)),
    ("lemma21.series", "closed_form"): dict(id="lemma21.series.closed_form", kind="consistency"),
    ("lemma28.phi1", "printed, bias-corrected"): dict(regime=SMALL_STEP),
    ("lemma28.phi1", "printed, no bias correction"): dict(id="lemma28.phi1.no_bias_correction",
                                                          kind="consistency", regime=SMALL_STEP),
    ("lemma30.phi1", "printed"): dict(regime=SMALL_STEP),
    ("lemma30.phi1", "tight"): dict(id="lemma30.phi1.tight", kind="consistency", regime=SMALL_STEP),
    ("prop14.movement", "printed, z = 1"): dict(corrected="prop14.movement.rederived", regime=SMALL_STEP),
    ("prop14.movement", "rederived, z = 1"): dict(id="prop14.movement.rederived", kind="consistency"),
    ("prop14.movement", "rederived, delayed z"): dict(id="prop14.movement.delayed", kind="consistency",
                                                      regime=SMALL_STEP),
    ("thm20.vanishes", "printed"): dict(kind="consistency"),
    ("thm20.vanishes", "rederived"): dict(id="thm20.vanishes.rederived", kind="consistency"),
}


def _described(claim: Claim) -> Claim:
    return dataclasses.replace(claim, **META.get((claim.id, claim.variant), {}))


@functools.cache
def claims() -> tuple:
    """Every audited claim of FedAda2 (built and compiled once)."""
    return (
        *(_described(c) for c in (
            *(_lemma15(v) for v in ("printed", "proved")),
            _lemma15("proved", carry_over=False),
            *(_accumulator(carry) for carry in (False, True)),
            *(_lemma16(v) for v in ("printed", "tight")),
            *(_lemma17(v) for v in ("printed", "proved")),
            *(_lemma21(v) for v in ("printed", "closed_form")),
            _lemma22(),
            *(_lemma28(bias) for bias in (True, False)),
            *(_lemma30(v) for v in ("printed", "tight")),
            _prop9_series(),
            _prop14("printed", False), _prop14("rederived", False), _prop14("rederived", True),
            *(_thm20_vanishes(v) for v in ("printed", "rederived")),
        )),
        *(_prop9_expectation(v) for v in ("printed", "proof")),
        *(_thm20_nonvacuous(v) for v in ("printed", "rederived")),
        *(_thm20_rate(v) for v in ("printed", "rederived")),
        *(_cor24_rate(v) for v in ("printed", "rederived")),
    )


#: the paper ``fedada2`` of ``fedbound audit``; citation: seed L5-7 (the 2024 preprint)
AUDIT = PAPERS.register(PaperAudit(
    PAPER.scope, "FedAda2: Lemmas 15-30, the SM3 accumulators, Propositions 9 and 14, Theorem 20",
    PAPER.seed, claims, adapter="fedbound.theory.fedada2.adapter",
    citation=Citation(
        "Efficient Adaptive Federated Optimization",
        ("Su Hyeong Lee", "Sidharth Sharma", "Manzil Zaheer", "Tian Li"), 2024,
        "arXiv preprint (a later version: NeurIPS 2025)", "2410.18117")))
