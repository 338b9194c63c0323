r"""Constants, provenance and the series constant c(beta) shared by the FedAda2 results.

Seed 004_a1d7c636af01c22e.txt ("Efficient Adaptive Federated Optimization"), notes papers/fedada2.md.
Every FedAda2 constant is declared in scope ``"fedada2"`` (key ``"fedada2.K"``; FedAda2 results
see it under its short name, the paper's symbol) through :func:`declare`. ``eps`` (the client
smoothing) shadows the shared target accuracy ``eps`` on purpose. The Python name of each symbol in
this package and its short name (what ``evaluate``, ``max_step`` and the CLI take):

=============  ============  ============================================  ==========================
Python name    short name    meaning                                       paper symbol (notes 1.2)
=============  ============  ============================================  ==========================
K_local        K             local steps per round                          K
z_delay        z             preconditioner delay                           z
eta_l          eta_l         client learning rate                           eta_ell
eta_server     eta           server learning rate                           eta
tau_adapt      tau           server adaptivity (outside the square root)    tau
vtilde0        vtilde0       server second-moment init (>= tau^2)           vtilde_0
eps_client     eps           client smoothing (shadows the shared eps)      epsilon
eps_s          eps_s         client "clip" threshold (zeroes small steps)   epsilon_s
beta1_server   beta1_tilde   server momentum                                beta~_1
beta1, beta2   beta1, beta2  client Adam decays                             beta_1, beta_2
G_inf          G             coordinate-wise gradient bound (A2)            G
v0             v0            client preconditioner init                     v_0
d_params       d             model dimension                                d
f_gap          f_gap         f(x_0) - f(x*)                                 Psi_1
phi1_bound     Phi1          a bound on |Delta_t| (Lemmas 16, 22)           Phi_1
B_weight       B             bound on the weights |Xi_i^t|                  B
=============  ============  ============================================  ==========================

Shared with the other papers (same meaning and domain): ``L`` (smoothness), ``T`` (rounds), ``mu``.

c(beta) (Theorem 20 [L852-L859], Lemma 21 [L1056-L1066])::

    u0(beta) = inf{u in N : beta^v v^2 < 1/v^2 for all v >= u}      (N = {1, 2, ...})
    c(beta)  = sum_{u=0}^{u0} beta^u u^2 + int_{u0}^inf x^-2 dx = sum_{u=0}^{u0} beta^u u^2 + 1/u0

is the sympy function :class:`c_beta`: exact (mpmath at the requested precision, u0 decided in
integer arithmetic) under ``evalf`` and vectorized numpy under lambdify (:func:`c_beta_numeric`).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Annotated

import mpmath
import numpy as np
import sympy as sp
from scipy.special import lambertw

from fedbound.argtypes import Positive, PositiveArray, Range
from fedbound.errors import ValidationError
from fedbound.theory.paper import Paper
from fedbound.theory.symbols import HALF_OPEN_UNIT, NONNEGATIVE, POSITIVE, POSITIVE_INTEGER, Domain

SEED = "004_a1d7c636af01c22e.txt"
SCOPE = "fedada2"
PAPER = Paper(SCOPE, SEED)
declare, where = PAPER.declare, PAPER.where


K_local = declare("K", POSITIVE_INTEGER, "local steps per round (paper K)")
z_delay = declare("z", POSITIVE_INTEGER, "preconditioner delay z (1 = no delay)")
eta_l = declare("eta_l", POSITIVE, "client learning rate eta_ell")
eta_server = declare("eta", POSITIVE, "server learning rate eta")
tau_adapt = declare("tau", POSITIVE, "server adaptivity tau")
vtilde0 = declare("vtilde0", POSITIVE, "server second-moment init vtilde_0 (>= tau^2)")
eps_client = declare("eps", POSITIVE, "client smoothing epsilon (not a target accuracy)", shadow=True)
eps_s = declare("eps_s", POSITIVE, "client clip threshold epsilon_s")
beta1_server = declare("beta1_tilde", HALF_OPEN_UNIT, "server momentum beta~_1")
beta1 = declare("beta1", HALF_OPEN_UNIT, "client Adam first-moment decay beta_1")
beta2 = declare("beta2", Domain(0.0, 1.0, True, True), "client Adam second-moment decay beta_2")
G_inf = declare("G", POSITIVE, "coordinate-wise gradient bound G (A2)")
v0 = declare("v0", NONNEGATIVE, "client preconditioner init v_0")
d_params = declare("d", POSITIVE_INTEGER, "model dimension d")
f_gap = declare("f_gap", NONNEGATIVE, "initial gap f(x_0) - f(x*) (Psi_1)")


# -- c(beta) and u0(beta) ----------------------------------------------------------------------

#: a decay rate beta (a number or an array of them) in [0, 1)
DecayRate = Annotated[np.ndarray, Range(0.0, 1.0, high_open=True)]


def u0_numeric(beta: DecayRate) -> np.ndarray:
    """u0(beta) vectorized: 1 + the last v >= 1 with beta^v v^4 >= 1 (1 where there is none).

    v^4 beta^v = 1 at v = -W_{-1}(-a)/a, a = -log(beta)/4 (Lambert W, real for a <= 1/e); the
    candidate is corrected by direct evaluation so that equality cases (beta = 1/2, v = 16) count.
    """
    beta = np.asarray(beta, dtype=float)
    with np.errstate(divide="ignore"):
        a = -np.log(beta) / 4
    reach = (beta > 0) & (a <= 1 / math.e)
    out = np.ones(beta.shape)
    if np.any(reach):
        ar = np.atleast_1d(a[reach])
        b = np.atleast_1d(beta[reach])
        v = np.floor(-lambertw(-ar, -1).real / ar)

        def big(x):
            return x ** 4 * b ** x >= 1

        for _ in range(4):
            v = np.where(big(v + 1), v + 1, v)
            v = np.where(~big(v) & (v > 1), v - 1, v)
        out[reach] = v + 1
    return out


def c_beta_numeric(beta: DecayRate) -> np.ndarray:
    """c(beta) in float64, vectorized: sum_{u>=0} u^2 beta^u = beta(1+beta)/(1-beta)^3 minus the tail
    sum_{u>=m} u^2 beta^u = beta^m (m^2/(1-beta) + 2m beta/(1-beta)^2 + beta(1+beta)/(1-beta)^3),
    m = u0 + 1, plus 1/u0 (all terms positive, the tail small: no cancellation)."""
    beta = np.asarray(beta, dtype=float)
    u0 = u0_numeric(beta)
    m = u0 + 1
    one = 1 - beta
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        full = beta * (1 + beta) / one ** 3
        tail = beta ** m * (m ** 2 / one + 2 * m * beta / one ** 2 + full)
        return full - tail + 1 / u0


def u0_exact(beta: Fraction) -> int:
    """u0(beta) for a rational beta in [0, 1): the sign of 4 log v + v log beta in 256-bit mpmath,
    and integer arithmetic (v^4 p^v >= q^v) where that is within rounding of 0 (beta = 1/2, v = 16)."""
    if not 0 <= beta < 1:
        raise ValidationError(f"beta must be a rational in [0, 1), got {beta}")
    p, q = beta.numerator, beta.denominator
    if p == 0:
        return 1
    peak = max(1, math.ceil(4 / math.log(q / p)))  # v^4 beta^v decreases beyond 4/log(1/beta)

    def big(v: int) -> bool:
        with mpmath.workprec(256):
            s = 4 * mpmath.log(v) + v * (mpmath.log(p) - mpmath.log(q))
            if abs(s) > mpmath.mpf(2) ** -200:
                return bool(s > 0)
        return v ** 4 * p ** v >= q ** v

    v = max(int(u0_numeric(p / q)) - 2, peak)
    while big(v + 1):
        v += 1
    while v > peak and not big(v):
        v -= 1
    return v + 1 if big(v) else 1


def c_beta_prime_numeric(beta: DecayRate) -> np.ndarray:
    """c'(beta) = sum_{u=1}^{u0} u^3 beta^(u-1), the derivative of c where u0(beta) is constant (c
    steps where u0 changes; there this is the derivative at the new u0), vectorized: with m = u0 + 1
    the derivative of :func:`c_beta_numeric`'s full - tail at fixed m,
    (1 + 4 beta + beta^2)/(1 - beta)^4 + beta^(m-1) P(beta, m)/(1 - beta)^4, P the polynomial below."""
    b = np.asarray(beta, dtype=float)
    m = u0_numeric(b) + 1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        full = (1 + 4 * b + b ** 2) / (1 - b) ** 4
        poly = (b ** 3 * (m - 1) ** 3 - 3 * b ** 2 * m ** 3 + 6 * b ** 2 * m ** 2 - 4 * b ** 2
                + 3 * b * m ** 3 - 3 * b * m ** 2 - 3 * b * m - b - m ** 3)
        return full + b ** (m - 1) * poly / (1 - b) ** 4


class c_beta_prime(sp.Function):
    """c'(beta) (:func:`c_beta_prime_numeric`), the derivative sympy takes of :class:`c_beta` (for the
    sensitivities of :mod:`fedbound.theory.anatomy`)."""

    nargs = 1
    _imp_ = staticmethod(c_beta_prime_numeric)


class c_beta(sp.Function):
    """c(beta) of Lemma 21 [L1056-L1062] as a sympy function (see the module docstring); its
    derivative is :class:`c_beta_prime`."""

    nargs = 1
    _imp_ = staticmethod(c_beta_numeric)

    def fdiff(self, argindex: Annotated[int, Range(1, 1)] = 1):
        """d c(beta)/d beta (sympy's hook; c has one argument)."""
        return c_beta_prime(self.args[0])

    def _eval_evalf(self, prec):
        arg = self.args[0]
        if not arg.is_number:
            return None
        exact = arg if arg.is_Rational else sp.Rational(arg.evalf(prec + 30))
        beta = Fraction(int(exact.p), int(exact.q))
        u0 = u0_exact(beta)
        with mpmath.workprec(prec + 64):
            b = mpmath.mpf(beta.numerator) / beta.denominator
            one = 1 - b
            m = u0 + 1
            full = b * (1 + b) / one ** 3
            tail = b ** m * (m ** 2 / one + 2 * m * b / one ** 2 + full)
            value = full - tail + mpmath.mpf(1) / u0
            return sp.Float(value, precision=prec)


def l_tilde(d: sp.Expr | Positive | PositiveArray, G: sp.Expr | Positive | PositiveArray,
            eta: sp.Expr | Positive | PositiveArray, eps_s_value: sp.Expr | Positive | PositiveArray
            ) -> sp.Expr | np.ndarray:
    """The "pseudo-Lipschitz" constant L~ = 2 sqrt(d) G/(eta_l eps_s) [L138-L142] (sympy or numpy)."""
    root = sp.sqrt(d) if isinstance(d, sp.Basic) else np.sqrt(d)
    return 2 * root * G / (eta * eps_s_value)


K_over_z = sp.ceiling(K_local / z_delay)   # |F| = number of preconditioner updates in K steps


# -- constants of single results -----------------------------------------------------------------
phi1_bound = declare("Phi1", POSITIVE, "coordinate-wise bound Phi_1 on the "
                     "pseudo-gradients |Delta_t| (Lemmas 16, 22)")
B_weight = declare("B", POSITIVE, "bound B on the pseudo-gradient weights |Xi_i^t|")
eps_w = declare("eps_w", POSITIVE, "lower bound eps_w on the weights Xi_i^t")
K_minus = declare("K_minus", POSITIVE_INTEGER, "K^- = min local steps over clients and rounds")
xi_plus = declare("xi_plus", POSITIVE, "upper weight bound Xi^+ of blended strategies")
xi_minus = declare("xi_minus", POSITIVE, "lower weight bound Xi^- of blended strategies")
a_min = declare("a_min", POSITIVE, "min_l a_l (Theorem 25 numerator weights)")
A_max = declare("A_max", POSITIVE, "max_l A_l (Theorem 25 numerator weights)")
m_min = declare("m_min", POSITIVE, "min_l m_l (Theorem 25 denominators)")
M_max = declare("M_max", POSITIVE, "max_l M_l (Theorem 25 denominators)")
