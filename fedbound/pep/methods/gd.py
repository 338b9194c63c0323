"""Gradient descent, the sanity certificate (issue 13).

x_{k+1} = x_k - gamma grad f(x_k), N steps, f L-smooth and mu-strongly convex, ||x0 - x*||^2 <= 1;
metric ||x_N - x*||^2. The worst case is exactly rho^(2N) with rho = max(|1 - gamma mu|,
|1 - gamma L|) (the gradient step is a rho-contraction, tight on a quadratic; e.g. Taylor, Hendrickx
and Glineur, "Smooth strongly convex interpolation and exact worst-case performance of first-order
methods", Math. Program. 2017): the theory column, for every gamma > 0.
"""
from __future__ import annotations

from fedbound.pep.env import Env
from fedbound.pep.method import Method, Theory, option, register
from fedbound.pep.methods.common import LR, MU, L, start_and_heterogeneity, strongly_convex_check, family
from fedbound.registry import integer_option


def build(env: Env, cfg: dict) -> None:
    x = env.x0
    for _ in range(cfg["steps"]):
        x = x - cfg["lr"] * env.grad(0, x)
    start_and_heterogeneity(env, None)
    env.measure(env.sq(x - env.xs))


def theory(cfg: dict) -> Theory:
    rho = max(abs(1 - cfg["lr"] * cfg["mu"]), abs(1 - cfg["lr"] * cfg["L"]))
    return Theory(rho ** (2 * cfg["steps"]), "rho^(2N), rho = max(|1 - gamma mu|, |1 - gamma L|) "
                  "(Taylor-Hendrickx-Glineur 2017)", True)


METHOD = register(Method(
    "gd", "gradient descent (sanity check: tight rho^(2N))",
    (option(integer_option, "steps", "gradient steps (N)", 5, low=1, high=70, examples=(1, 5),
            aliases=("N",)), L, MU, LR),
    setting=lambda cfg: {"n": 1, "L": cfg["L"], "mu": cfg["mu"]},
    build=build, family=lambda cfg: family(cfg, zero_g=True), theory=theory,
    conditions=strongly_convex_check, doc=__doc__))
