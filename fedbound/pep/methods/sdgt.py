"""SD-GT (seed 003, Algorithm 1 [L105-L173], papers/sdgt.md 2.1), deterministic, full
participation, against Theorem 3 (issue 13).

S subnets of m clients, W_s = J + lam (I - J) (symmetric, doubly stochastic; 1 - rho_s =
||W_s - J_s||_2^2 = lam^2, so q = 1 - lam^2), h_s = m_s (p = 1), exact gradients (sigma = 0).
Initialisation [L111-L112]: y_i = gbar(x0) - gbar_s(x0), z_i = gbar_s(x0) - grad f_i(x0), x_g = x0.
Round t: K steps x_i^{k+1/2} = x_i^k - gamma (grad f_i(x_i^k) + y_i + z_i) (4), mixing (5),
z~ accumulated (6); z_i += (S_i - sum_j w_ij S_j)/(K gamma) (7); x~_j = x_j^{K+1} - x_g + K gamma y_j (8);
x_g += mean_j x~_j (9)-(10) (equal subnet sizes); y_i = psi_s = (mean_{j in s} x~_j - x~_g)/(K gamma) (11).
Metric: Theorem 3's Lyapunov function (96) after T rounds, Lyap_{T+1} = ||x_g - x*||^2 + Gamma +
gamma Y + gamma Z (sdgt.md 1.6: Gamma = (1/n) sum_i ||x_i^{T,K+1} - x_g||^2, Y and Z the tracking
errors against y_i* = grad f(x_g) - gbar_s(x_g), z_i* = gbar_s(x_g) - grad f_i(x_g)), with
Lyap_1 = ||x0 - x*||^2 <= 1 (Gamma_1 = Y_1 = Z_1 = 0 at this initialisation). Theory: Lyap_{T+1} <=
(1 - mu K gamma/4)^T Lyap_1 (98) at sigma = 0 for gamma <= gamma_bar (fedbound.theory ``sdgt.thm3``,
variant ``main``; gamma_bar from its step conditions at p = 1, q = 1 - lam^2).
"""
from __future__ import annotations

import numpy as np

from fedbound.errors import ValidationError
from fedbound.pep.env import Env, mean, mix
from fedbound.pep.consensus import spectral_instance
from fedbound.pep.method import Method, Theory, option, register
from fedbound.pep.methods.common import LR, MU, ZETA, L, family, start_and_heterogeneity, strongly_convex_check
from fedbound.registry import integer_option, number_option
from fedbound.theory.registry import get


def build(env: Env, cfg: dict) -> None:
    S, m, K, gamma = cfg["subnets"], cfg["per_subnet"], cfg["local_steps"], cfg["lr"]
    W = spectral_instance(m, cfg["lam"])
    subnets = [list(range(s * m, (s + 1) * m)) for s in range(S)]

    def trackers(x):
        g = [env.grad(i, x) for i in range(env.n)]
        gbar = mean(g)
        gs = [mean([g[i] for i in sub]) for sub in subnets]
        return [gbar - gs[i // m] for i in range(env.n)], [gs[i // m] - g[i] for i in range(env.n)]

    y, z = trackers(env.x0)
    xg = env.x0
    for _ in range(cfg["rounds"]):
        x = [xg] * env.n
        acc = [None] * env.n
        for _ in range(K):
            half = [x[i] - gamma * (env.grad(i, x[i]) + y[i] + z[i]) for i in range(env.n)]
            step = [half[i] - x[i] + gamma * y[i] for i in range(env.n)]
            acc = step if acc[0] is None else [a + s for a, s in zip(acc, step)]
            x = [p for sub in subnets for p in mix(W, [half[i] for i in sub])]
        mixed = [p for sub in subnets for p in mix(W, [acc[i] for i in sub])]
        z = [z[i] + (1.0 / (K * gamma)) * (acc[i] - mixed[i]) for i in range(env.n)]
        moved = [x[j] - xg + K * gamma * y[j] for j in range(env.n)]
        moved_g = mean(moved)
        psi = [(1.0 / (K * gamma)) * (mean([moved[j] for j in sub]) - moved_g) for sub in subnets]
        y = [psi[i // m] for i in range(env.n)]
        xg = xg + moved_g
    y_star, z_star = trackers(xg)
    lyap = env.sq(xg - env.xs) + (1.0 / env.n) * (
        sum(env.sq(xi - xg) for xi in x) + gamma * sum(env.sq(a - b) for a, b in zip(y, y_star))
        + gamma * sum(env.sq(a - b) for a, b in zip(z, z_star)))
    start_and_heterogeneity(env, cfg["zeta"])
    env.measure(lyap)


def theory(cfg: dict) -> Theory:
    """Theorem 3's bound and step condition at ``cfg``: floats, or traced numbers (the exact bound,
    gamma <= gamma_bar decided exactly: :mod:`fedbound.pep.audit`'s proofs)."""
    constants = {"L": cfg["L"], "mu": cfg["mu"], "K": cfg["local_steps"], "p": 1.0, "q": 1.0 - cfg["lam"] ** 2}
    result = get("sdgt.thm3")
    cap, which = result.max_step(variant="main", **constants)
    cap = np.asarray(cap, dtype=object).item()
    rate = 1 - cfg["mu"] * cfg["local_steps"] * cfg["lr"] / 4
    ok = bool(cfg["lr"] <= cap)
    bar = f"{cap:.3g}" if isinstance(cap, float) else str(cap)
    return Theory(rate ** cfg["rounds"], "sdgt.thm3 (98), main: (1 - mu K gamma/4)^T Lyap_1", ok,
                  "" if ok else f"gamma > gamma_bar = {bar} ({which})")


def _check(cfg: dict) -> None:
    if cfg["mu"] == 0:
        raise ValidationError("SD-GT Theorem 3 needs mu > 0, got mu=0")
    if cfg["lam"] == 1.0:
        raise ValidationError("lam must be < 1: W_s = J + (I - J) = I is no communication within a subnet "
                              "(q = 1 - lam^2 = 0)")
    strongly_convex_check(cfg)


METHOD = register(Method(
    "sdgt", "SD-GT, deterministic, full participation (vs Theorem 3)",
    (option(integer_option, "subnets", "subnets (S)", 2, low=1, high=4, examples=(1, 2), aliases=("S",)),
     option(integer_option, "per_subnet", "clients per subnet (m)", 2, low=1, high=4, examples=(1, 2),
            aliases=("m",)),
     option(integer_option, "local_steps", "D2D rounds per global round (K)", 1, low=1, high=8,
            examples=(1, 2), aliases=("K",)),
     option(integer_option, "rounds", "global rounds (T)", 1, low=1, high=8, examples=(1, 2),
            aliases=("T",)),
     LR, L, MU, ZETA,
     option(number_option, "lam", "W_s = J + lam (I - J): non-consensus eigenvalue", 0.5, low=-1.0,
            high=1.0, low_open=True, examples=(0.0, 0.5))),
    setting=lambda cfg: {"n": cfg["subnets"] * cfg["per_subnet"], "L": cfg["L"], "mu": cfg["mu"]},
    build=build, family=family, theory=theory, conditions=_check, doc=__doc__))
