"""Scaffnew / ProxSkip for federated learning (Mishchenko et al., ICML 2022, Algorithm 1 with the
consensus constraint, f(x_1..x_n) = sum_i f_i(x_i); issue 13).

Each step every client takes x^_i = x_i - gamma (grad f_i(x_i) - h_i); with probability p the
server averages, x_i <- (1/n) sum_j (x^_j - (gamma/p) h_j) and h_i <- h_i + (p/gamma)(x_i - x^_i),
otherwise x_i <- x^_i. Start x_i = x0, h_i = grad f_i(x0) - (1/n) sum_j grad f_j(x0) (sum_i h_i = 0,
as ProxSkip requires). The random communication is enumerated: all 2^T coin sequences share one
Gram matrix (a tree of iterates) and the metric is the expectation
E Psi_T = sum_seq P(seq) Psi_T(seq), Psi = sum_i ||x_i - x*||^2 + (gamma/p)^2 sum_i ||h_i - grad f_i(x*)||^2,
under Psi_0 <= 1 (and the heterogeneity condition, which bounds nothing here by the same shift
invariance as SCAFFOLD). Theory: ProxSkip's Theorem 3.6, E Psi_T <= (1 - min(gamma mu, p^2))^T Psi_0
for gamma <= 1/L (not one of the four papers; cited from arXiv:2202.09357).
"""
from __future__ import annotations

from fedbound.pep.env import Env, heterogeneity, mean
from fedbound.pep.method import Method, Theory, option, register
from fedbound.pep.methods.common import LR, MU, N_CLIENTS, ZETA, L, family, strongly_convex_check
from fedbound.registry import integer_option, number_option


def _lyapunov(env, xs, hs, ratio2):
    return sum(env.sq(x - env.xs) + ratio2 * env.sq(h - env.grad(i, env.xs))
               for i, (x, h) in enumerate(zip(xs, hs)))


def build(env: Env, cfg: dict) -> None:
    n, gamma, p, T = env.n, cfg["lr"], cfg["p"], cfg["steps"]
    ratio2 = (gamma / p) ** 2
    g0 = [env.grad(i, env.x0) for i in range(n)]
    g0bar = mean(g0)
    x_start, h_start = [env.x0] * n, [g - g0bar for g in g0]
    terms = []

    def walk(xs, hs, t, prob):
        if t == T:
            terms.append(prob * _lyapunov(env, xs, hs, ratio2))
            return
        xh = [x - gamma * (env.grad(i, x) - h) for i, (x, h) in enumerate(zip(xs, hs))]
        avg = mean([x - (gamma / p) * h for x, h in zip(xh, hs)])
        walk([avg] * n, [h + (p / gamma) * (avg - x) for x, h in zip(xh, hs)], t + 1, prob * p)
        if p < 1:
            walk(xh, hs, t + 1, prob * (1 - p))

    walk(x_start, h_start, 0, 1.0)
    env.require(_lyapunov(env, x_start, h_start, ratio2), 1.0)
    if n > 1:
        env.require(heterogeneity(env, env.xs), cfg["zeta"] ** 2)
    env.measure(sum(terms[1:], terms[0]))


def theory(cfg: dict) -> Theory:
    rate = 1 - min(cfg["lr"] * cfg["mu"], cfg["p"] ** 2)
    ok = cfg["lr"] <= 1 / cfg["L"]
    return Theory(rate ** cfg["steps"], "ProxSkip Theorem 3.6: (1 - min(gamma mu, p^2))^T", ok,
                  "" if ok else "gamma > 1/L")


METHOD = register(Method(
    "scaffnew", "Scaffnew / ProxSkip, random communication enumerated",
    (N_CLIENTS, option(integer_option, "steps", "steps T, each followed by an average with probability p "
                       "(coin flips enumerated: 2^T branches)", 3, low=1, high=6, examples=(1, 2),
                       aliases=("T",)),
     option(number_option, "p", "communication probability", 0.5, low=0.0, high=1.0, low_open=True,
            examples=(0.5, 1.0)),
     LR, L, MU, ZETA),
    setting=lambda cfg: {"n": cfg["n"], "L": cfg["L"], "mu": cfg["mu"]},
    build=build, family=family, theory=theory, conditions=strongly_convex_check, doc=__doc__))
