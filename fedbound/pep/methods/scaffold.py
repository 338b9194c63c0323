"""SCAFFOLD, deterministic, full participation (Karimireddy et al., ICML 2020, Algorithm 1 with
option-II control variates, as :mod:`fedbound.algorithms.federated.scaffold`; issue 13).

Per round, from y_i = x each client takes K steps y_i <- y_i - gamma (grad f_i(y_i) - c_i + c),
then c_i <- c_i - c + (x - y_i)/(K gamma), x <- x + eta_g (1/n) sum_i (y_i - x), c <- (1/n) sum_i c_i.
Control variates start at zero (``c0 = zero``, the toolkit's implementation: the first round is
FedAvg) or at c_i = grad f_i(x0) (``c0 = grad``). Class, conditions and metric as FedAvg
(:mod:`fedbound.pep.methods.local`). With ``c0 = grad`` the worst case does not depend on zeta:
adding a_i^T x with sum_i a_i = 0 to the f_i shifts every c_i by a_i and leaves the iterates
unchanged, so every zeta has the worst case of zeta = 0 -- the PEP certifies it numerically.
No bound of the four papers covers SCAFFOLD in this setting (theory: none).
"""
from __future__ import annotations

from fedbound.pep.env import mean
from fedbound.pep.method import Method, option, register
from fedbound.pep.methods.common import (GAMMA, K_STEPS, MU, N_CLIENTS, ROUNDS, ZETA, L, family,
                                         start_and_heterogeneity, strongly_convex_check)
from fedbound.registry import choice_option, number_option


def build(env, cfg: dict) -> None:
    n, K, gamma = env.n, cfg["K"], cfg["gamma"]
    x = env.x0
    cs = [env.grad(i, x) if cfg["c0"] == "grad" else 0.0 * x for i in range(n)]
    c = mean(cs)
    for _ in range(cfg["R"]):
        ys = []
        for i in range(n):
            y = x
            for _ in range(K):
                y = y - gamma * (env.grad(i, y) - cs[i] + c)
            ys.append(y)
        cs = [cs[i] - c + (1.0 / (K * gamma)) * (x - ys[i]) for i in range(n)]
        x = x + cfg["eta_g"] * mean([y - x for y in ys])
        c = mean(cs)
    start_and_heterogeneity(env, cfg["zeta"])
    env.measure(env.sq(x - env.xs))


METHOD = register(Method(
    "scaffold", "SCAFFOLD (deterministic, option II control variates)",
    (N_CLIENTS, K_STEPS, ROUNDS, GAMMA, L, MU, ZETA,
     option(number_option, "eta_g", "global step size", 1.0, low=0.0, high=10.0, low_open=True,
            examples=(0.5, 1.0)),
     option(choice_option, "c0", "initial control variates: zero or grad (c_i = grad f_i(x0))", "zero",
            choices=("zero", "grad"), examples=("zero", "grad"))),
    setting=lambda cfg: {"n": cfg["n"], "L": cfg["L"], "mu": cfg["mu"]},
    build=build, family=family, conditions=strongly_convex_check, doc=__doc__))
