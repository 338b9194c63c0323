r"""FedAda2's heavy-tail results (Section 3 / App. A of seed 004; papers/fedada2.md 4.1-4.3): their
bound constants as registered Results and the counterexample constructions as numbers/functions.
The Monte-Carlo checks live elsewhere (the reproductions); here are the deterministic parts.

Construction (Prop. 9 (i) [L338-L342]): d = 1, F_i(x, xi_i) = x^2/2 + xi_i x, xi_i ~ t_{i+1} (client 1
has infinite variance), g = x + xi_i, f(x) = x^2/2, x* = 0, L = mu = 1. Prop. 10 [L475-L516]: client 1
has xi_1 ~ Cauchy(0, gamma), gamma in (0, 1/3), the others N(0, sigma_i^2); K = 1, clients sampled
without replacement. (:func:`prop9_laws`, :func:`prop10_laws`; the task is
fedbound.tasks.heavy_tailed.HeavyTailedQuadratic.)

* Prop. 9 (i) [L316-L369]: under FedAvg E||grad f(x_{t+1})||^2 >= p_1^t eta_l^2/|S^t|^2 E xi_1^2 = inf:
  "fedada2.prop9_i" (extra: the coefficient of E xi_1^2).
* Prop. 9 (ii) [L373-L424]: client AdaGrad (K = 1) with eta_l <= eps: lim E|x_t| <= B/(1 - eps_hat)
  < 2 sqrt(3)/(1 - eps_hat); schedule eta_l^t = 1/((t + t0)(1 - eps_hat)), t0 the smallest positive
  integer with 1/((1 + t0)(1 - eps_hat)) < eps: "fedada2.prop9_ii". The condition eta_l <= eps is a
  step condition on the variable eta_l (``max_step(variable="eta_l")``).
* Prop. 9 (iii) [L426-L441]: with eta_l <= 2 eps and |x_t| < delta: E x_{t+1}^2 <= 2 delta^2 + 2 eta_l^2
  B~: "fedada2.prop9_iii" (a condition on eta_l).
* Prop. 9 (iv) [L332-L334, L443-L463]: with eta_l^t = 1/t^2, E||grad f(x_t)||^2 <= 2 x0^2 + 2 (int_1^inf
  x^-2 dx)^2 (statement), 2 x0^2 + 2 K^2 (proof), 2 x0^2 + 2 K^2 (pi^2/6)^2 (correct: sum 1/t^2 = pi^2/6
  > 1, notes 8.15): "fedada2.prop9_iv".
* Prop. 10 (ii) [L514-L516]: lim E|x_t| <= 2/(1 - eps_hat) (B <= 2 for gamma < 1/3): "fedada2.prop10_ii".
* Prop. 14 (= Prop. 5) [L651-L661]: x_t in B_{Kt}(x_0) (printed; eta_l K t in l_inf, notes 8.19):
  "fedada2.prop14".
* Theorem 13 (= Thm 4) [L544-L649]: mu-strongly convex f_t: E f_{t+1}(x_{t+1}) >= ... + mu eta_l^2/(2|S^t|^2)
  E||sum sum g||^2 (eq. (6)) = inf: "fedada2.thm13" (extra: that coefficient).
"""
from __future__ import annotations

import math
from typing import Annotated

import numpy as np
import sympy as sp

from fedbound.argtypes import Choice, Count, NonNegative, NonNegativeArray, NonNegativeInt, Positive, Range
from fedbound.errors import ValidationError
from fedbound.theory.fedada2.common import K_local, declare, eps_client, eta_l, where
from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Result, StepCondition, Variant
from fedbound.theory.symbols import (HALF_OPEN_UNIT, NONNEGATIVE, POSITIVE, POSITIVE_INTEGER, UNIT, T,
                                      mu)

eps_hat = declare("eps_hat", HALF_OPEN_UNIT, "Prop. 9: slack eps_hat with I_i(eps) >= 1 - eps_hat")
x0_abs = declare("x0", NONNEGATIVE, "Prop. 9: |x_0| of the heavy-tail toy problem")
B_noise = declare("B_noise", POSITIVE, "Prop. 9: the noise bound B of (5)")
B_tilde = declare("B_tilde", POSITIVE, "Prop. 9 (iii): bound on E(|xi|/(|x + xi| + eps))^2")
delta_region = declare("delta", POSITIVE, "Prop. 9 (iii): radius delta of the stable region")
cohort = declare("cohort", POSITIVE_INTEGER, "number |S^t| of sampled clients (with multiplicity)")
p_heavy = declare("p_heavy", UNIT, "probability that the heavy-tailed client is sampled")

T0 = sp.Max(1, sp.floor(1 / (eps_client * (1 - eps_hat))))          # [L415]
ETA_CAP = StepCondition("prop9 (ii) eta_l <= eps", eps_client, False, "[L381-L383]", variable=eta_l)

PROP9_I = register(Result(
    id="fedada2.prop9_i",
    title="Proposition 9 (i) (= Prop. 2 (i)): a heavy-tailed client breaks FedAvg",
    statement="In the construction xi_i ~ t_{i+1}, for any sampling with p_1^t > 0 and eta_l > 0: "
              "E||grad f(x_{t+1})||^2 >= p_1^t eta_l^2/|S^t|^2 E xi_1^2 = inf.",
    provenance=where("Proposition 9 (i)", "316-369"),
    assumptions=("d = 1, F_i(x, xi) = x^2/2 + xi x, xi_i ~ t_{i+1}", "minibatches with replacement"),
    lhs="E||grad f(x_{t+1})||^2",
    variants=[Variant("printed", "the coefficient of E xi_1^2 = inf in the lower bound [L369]",
                      extras={"heavy_tail_coefficient": p_heavy * eta_l ** 2 / cohort ** 2})],
))

PROP9_II = register(Result(
    id="fedada2.prop9_ii",
    title="Proposition 9 (ii): client AdaGrad bounds E|x_t|",
    statement="Client-side AdaGrad (K = 1) with eta_l <= eps and eta_l^t = 1/((t + t0)(1 - eps_hat)) gives "
              "lim_t E|x_t - x*| <= 2 sqrt(3)/(1 - eps_hat).",
    provenance=where("Proposition 9 (ii), (4)-(5)", "373-424"),
    assumptions=("1 > I_i(eps) >= 1 - eps_hat for all x_t (notes 8.16: fails for large |x_t|)",
                 "B < 2 sqrt(3) (asserted, notes 8.18)"),
    lhs="limsup_t E|x_t|",
    variants=[
        Variant("printed", "2 sqrt(3)/(1 - eps_hat) [L324, L424]",
                bound=2 * sp.sqrt(3) / (1 - eps_hat), conditions=(ETA_CAP,), extras={"t0": T0}),
        Variant("with_B", "B/(1 - eps_hat) with the noise bound B of (5); extra: the recursion's bound "
                          "at round T [L415-L421]", bound=B_noise / (1 - eps_hat), conditions=(ETA_CAP,),
                extras={"t0": T0, "bound_at_T": (T0 - 1) / (T + T0) * x0_abs
                        + (T + 1) * B_noise / ((T + T0) * (1 - eps_hat))}),
    ],
    known_issues=(Flag("8.16", "I_i(eps) -> 0 as |x_t| -> inf, so I_i(eps) >= 1 - eps_hat is not uniform"),
                  Flag("8.17", "the maximiser of |xi| p_nu(xi) is |xi| = 1, not (3/2 + 2/(i+1))^(-1/2)"),
                  Flag("8.18", "B < 2 sqrt(3) asserted without computation")),
))

PROP9_III = register(Result(
    id="fedada2.prop9_iii",
    title="Proposition 9 (iii): the Lyapunov-stable region",
    statement="With eta_l <= 2 eps and |x_t| < delta: E x_{t+1}^2 <= 2 delta^2 + 2 eta_l^2 B~; delta, eta_l "
              "<= O(T^-1/2) give O(1/T).",
    provenance=where("Proposition 9 (iii)", "426-441"),
    assumptions=("|x_t| < delta", "B~ bounds E(|xi|/(|x + xi| + eps))^2"),
    lhs="E x_{t+1}^2",
    variants=[Variant("printed", "as printed",
                      bound=2 * delta_region ** 2 + 2 * eta_l ** 2 * B_tilde,
                      conditions=(StepCondition("prop9 (iii) eta_l <= 2 eps", 2 * eps_client, False,
                                                "[L433]", variable=eta_l),))],
))

PROP9_IV = register(Result(
    id="fedada2.prop9_iv",
    title="Proposition 9 (iv): deterministic second-moment bound with eta_l^t = 1/t^2",
    statement="With eta_l^t = 1/t^2: E||grad f(x_t)||^2 <= 2||x_0||^2 + 2 (int_1^inf x^-2 dx)^2 for all t.",
    provenance=where("Proposition 9 (iv)", "332-334, 443-463"),
    assumptions=("client AdaGrad steps |g/(|g| + eps)| <= 1",),
    lhs="E||grad f(x_t)||^2 = E x_t^2",
    variants=[
        Variant("printed", "the statement [L334]: 2 x0^2 + 2", bound=2 * x0_abs ** 2 + 2),
        Variant("proof", "the proof's last line [L463]: 2 x0^2 + 2 K^2", bound=2 * x0_abs ** 2 + 2 * K_local ** 2),
        Variant("corrected", "sum_t 1/t^2 = pi^2/6 (notes 8.15): 2 x0^2 + 2 K^2 (pi^2/6)^2",
                bound=2 * x0_abs ** 2 + 2 * K_local ** 2 * (sp.pi ** 2 / 6) ** 2),
    ],
    known_issues=(Flag("8.15", "sum_{t>=1} 1/t^2 <= int_1^inf x^-2 dx = 1 is false (pi^2/6)"),),
))

PROP10_II = register(Result(
    id="fedada2.prop10_ii",
    title="Proposition 10 (ii): client AdaGrad with a Cauchy client",
    statement="With xi_1 ~ Cauchy(0, gamma_c), gamma_c < 1/3, client AdaGrad gives lim_t E||grad f(x_t)|| <= "
              "2/(1 - eps_hat).",
    provenance=where("Proposition 10 (ii)", "514-516"),
    assumptions=("those of Prop. 9 (ii)", "B <= 2 for gamma_c < 1/3 (asserted)"),
    lhs="limsup_t E|x_t|",
    variants=[Variant("printed", "2/(1 - eps_hat)", bound=2 / (1 - eps_hat),
                      conditions=(ETA_CAP,), extras={"t0": T0})],
))

THM13 = register(Result(
    id="fedada2.thm13",
    title="Theorem 13 (= Thm 4): FedAvg is deeply remorseful",
    statement="For mu-strongly convex f_t and a heavy-tailed client sampled with non-zero probability, "
              "E f_{t+1}(x_{t+1}) >= f_{t+1}(x_t) - <grad f_{t+1}(x_t), step> + mu eta_l^2/(2|S^t|^2) "
              "E||sum sum g||^2 = inf, so E R(T) = inf and E f_{t+1}(x_{t+1})^2 = inf.",
    provenance=where("Theorem 13, (6)", "544-649"),
    assumptions=("f_t mu-strongly convex", "finite noise mean", "heavy-tailed client sampled w.p. > 0"),
    lhs="E f_{t+1}(x_{t+1})",
    variants=[Variant("printed", "the coefficient of the infinite noise moment in (6)",
                      extras={"noise_coefficient": mu * eta_l ** 2 / (2 * cohort ** 2)})],
))


PROP14 = register(Result(
    id="fedada2.prop14",
    title="Proposition 14 (= Prop. 5): client AdaGrad keeps the iterates in a ball",
    statement="Client-side AdaGrad makes FedAvg non-remorseful and non-resentful: its proof places x_t in "
              "the ball B_{Kt}(x_0), so f(x_t) is bounded by the extreme-value theorem.",
    provenance=where("Proposition 14", "651-661"),
    assumptions=("zero-init client AdaGrad, each coordinate step |g_j|/(sqrt(v_j) + eps) <= 1",
                 "server learning rate 1 (FedAvg averaging)"),
    lhs="||x_t - x_0||_inf",
    variants=[
        Variant("printed", "radius K t as printed [L657] (presumes eta_l <= 1, notes 8.19)", bound=K_local * T),
        Variant("rederived", "radius eta_l K t in the l_inf norm (z = 1: no delayed preconditioner)",
                bound=eta_l * K_local * T),
    ],
    known_issues=(Flag("8.19", "K t assumes eta_l <= 1, d = 1 or the l_inf norm, and z = 1 (with delay the "
                               "steps are not bounded by eta_l [L1510])"),),
))


# -- constructions and numbers -----------------------------------------------------------------------

#: the noise laws of Propositions 9 and 10
Law = Annotated[str, Choice(("student_t", "cauchy", "gaussian"))]
#: eps_hat of Prop. 9 (ii), in [0, 1)
EpsHat = Annotated[float, Range(0.0, 1.0, high_open=True)]


def prop9_laws(n_clients: Count) -> list[tuple[str, float]]:
    """Prop. 9's noise laws [L338-L342]: client i (1-based) has xi_i ~ t_{i+1}."""
    if n_clients < 1:
        raise ValidationError(f"n_clients must be >= 1, got {n_clients}")
    return [("student_t", float(i + 1)) for i in range(1, n_clients + 1)]


def prop10_laws(n_clients: Count, gamma_c: Annotated[float, Range(0.0, 1 / 3, low_open=True, high_open=True)],
                sigma: Positive = 1.0) -> list[tuple[str, float]]:
    """Prop. 10's noise laws [L475-L481]: client 1 Cauchy(0, gamma_c), gamma_c in (0, 1/3); the others
    N(0, sigma^2) (the paper leaves sigma_i open)."""
    if not 0 < gamma_c < 1 / 3:
        raise ValidationError(f"gamma_c must be in (0, 1/3), got {gamma_c}")
    if n_clients < 1 or sigma <= 0:
        raise ValidationError(f"need n_clients >= 1 and sigma > 0, got {n_clients}, {sigma}")
    return [("cauchy", gamma_c)] + [("gaussian", sigma)] * (n_clients - 1)


def _law(law: str, param: float):
    from scipy import stats   # 0.3 s to import: only where a law is evaluated

    if law == "student_t":
        return stats.t(param)
    if law == "cauchy":
        return stats.cauchy(scale=param)
    if law == "gaussian":
        return stats.norm(scale=param)
    raise ValidationError(f"law must be one of student_t, cauchy, gaussian, got {law!r}")


def second_moment(law: Law, param: Positive) -> float:
    """E xi^2: nu/(nu - 2) for t_nu with nu > 2, inf for nu <= 2 and for Cauchy; sigma^2 for Gaussian."""
    if law == "student_t":
        return param / (param - 2) if param > 2 else math.inf
    if law == "cauchy":
        return math.inf
    return param ** 2


def _expect(law: str, param: float, fn, x: float) -> float:
    """E fn(xi) by quadrature, split at the kink xi = -x."""
    from scipy import integrate

    pdf = _law(law, param).pdf
    left = integrate.quad(lambda s: fn(s) * pdf(s), -np.inf, -x, limit=200)[0]
    right = integrate.quad(lambda s: fn(s) * pdf(s), -x, np.inf, limit=200)[0]
    return left + right


def i_eps(law: Law, param: Positive, eps: Positive, x: float = 0.0) -> float:
    """I(eps) = E[1/(|x + xi| + eps)] [L399-L403] (notes 4.1: t_2, x = 0: 1.742, 0.844, 0.557 at eps =
    0.1, 0.5, 1)."""
    return _expect(law, param, lambda s: 1.0 / (abs(x + s) + eps), x)


def noise_ratio(law: Law, param: Positive, eps: Positive, x: float = 0.0) -> float:
    """E[|xi|/(|x + xi| + eps)], the noise term of (4)-(5) [L405-L413]."""
    return _expect(law, param, lambda s: abs(s) / (abs(x + s) + eps), x)


def noise_bound(law: Law, param: Positive, eps: Positive, x_max: Positive = 50.0) -> float:
    """sup_x E[|xi|/(|x + xi| + eps)] (the best B of (5)); the law is symmetric so x >= 0 suffices.
    Notes 4.1/4.2: t_2 1.157/0.644/0.465, Cauchy(0, 0.3) 0.784/0.416/0.295 at eps = 0.1/0.5/1."""
    grid = np.concatenate([[0.0], np.geomspace(1e-2, x_max, 12)])
    values = [noise_ratio(law, param, eps, x) for x in grid]
    k = int(np.argmax(values))
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
    from scipy import optimize

    res = optimize.minimize_scalar(lambda x: -noise_ratio(law, param, eps, x), bounds=(lo, hi),
                                   method="bounded", options={"xatol": 1e-6})
    return max(max(values), -res.fun)


def t0(eps: Positive, eps_hat_value: EpsHat) -> int:
    """Smallest positive integer t0 with 1/((1 + t0)(1 - eps_hat)) < eps [L415]."""
    if eps <= 0 or not 0 <= eps_hat_value < 1:
        raise ValidationError(f"need eps > 0 and eps_hat in [0, 1), got {eps}, {eps_hat_value}")
    return max(1, math.floor(1 / (eps * (1 - eps_hat_value))))


def adagrad_schedule(t: NonNegative | NonNegativeArray, eps: Positive, eps_hat_value: EpsHat) -> np.ndarray:
    """eta_l^t = 1/((t + t0)(1 - eps_hat)) of Prop. 9 (ii) [L415]."""
    return 1.0 / ((np.asarray(t, dtype=float) + t0(eps, eps_hat_value)) * (1 - eps_hat_value))


def movement_bound(K: Count, T: NonNegativeInt) -> float:
    """Deterministic |x_{T+1} - x_0| <= K sum_{t<=T} 1/t^2 for client AdaGrad with eta_l^t = 1/t^2
    (each local step moves at most eta_l^t, Prop. 9 (iv) [L443-L463]); below K pi^2/6 for every T."""
    t = np.arange(1, T + 1, dtype=float)
    return float(K * np.sum(1.0 / t ** 2))
