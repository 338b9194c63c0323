r"""The theorem ``junk.thm1`` about the algorithm ``junk``, its checkable claims, and the paper
``junk`` that holds them (``fedbound audit junk``, ``fedbound verify junk``).

Theorem 1 (an illustration written by ``fedbound new plugin``, not a published result). Let each
f_i be L-smooth and f = sum_i p_i f_i mu-strongly convex with minimizer x*; let the stochastic
gradients be unbiased with variance at most sigma^2; let zeta^2 = sum_i p_i ||grad f_i(x*)||^2.
Run ``junk`` with K local steps of step gamma, c of n clients per round and server momentum beta
from x_0, D = ||x_0 - x*||^2. If

    gamma <= (1 - beta)^2 / (8 K L),                                                  (1)

then after T rounds

    E||x_T - x*||^2 <= 4/(1 - beta)^2 (1 - mu gamma K/4)^T D
                       + 8 gamma L sigma^2 / (mu^2 (1 - beta))
                       + 8 gamma K L zeta^2 (1 - c/n) / (mu^2 c (1 - beta))
                       + 16 gamma^2 K^2 L^3 zeta^2 / mu^3:                             (2)

a linear rate to a floor made of the gradient noise, the sampling of clients and the client drift
of local steps. ``fedbound verify junk`` checks (2) against Monte-Carlo runs, ``fedbound pep
junk`` against the worst case over all L-smooth, mu-strongly convex clients.
"""
from __future__ import annotations

import math

import numpy as np

from fedbound.extend import (Claim, Domain, Measure, PaperAudit, Param, Provenance, Result,
                             Sampler, StepCondition, Variant, compile_expr, declare_constant,
                             register_check, register_paper, register_result, shared,
                             theorem_check)

PAPER = "junk"
SOURCE = "fedbound_junk/theory.py"
INF = math.inf

# ---- the theorem's own constants (scope junk; L, mu, sigma, gamma, T, n are fedbound's) ------------
K = declare_constant("K", Domain(1, INF, low_open=False, integer=True), "local steps per round",
                     scope=PAPER)
beta = declare_constant("beta", Domain(0.0, 1.0, low_open=False), "server Nesterov momentum",
                        scope=PAPER)
c = declare_constant("c", Domain(1, INF, low_open=False, integer=True), "clients sampled per round",
                     scope=PAPER)
zeta2 = declare_constant("zeta2", Domain(0.0, INF, low_open=False),
                         "heterogeneity at the optimum, sum_i p_i ||grad f_i(x*)||^2", scope=PAPER)
D = declare_constant("D", Domain(0.0, INF, low_open=False), "initial distance ||x_0 - x*||^2",
                     scope=PAPER)
L, mu, sigma, gamma, T, n = (shared(name) for name in ("L", "mu", "sigma", "gamma", "T", "n"))

RATE = 1 - mu * gamma * K / 4
BOUND = (4 / (1 - beta) ** 2 * RATE ** T * D
         + 8 * gamma * L * sigma ** 2 / (mu ** 2 * (1 - beta))
         + 8 * gamma * K * L * zeta2 * (1 - c / n) / (mu ** 2 * c * (1 - beta))
         + 16 * gamma ** 2 * K ** 2 * L ** 3 * zeta2 / mu ** 3)
STEP = StepCondition("(1)", (1 - beta) ** 2 / (8 * K * L), source="(1)")

THM1 = register_result(Result(
    id=f"{PAPER}.thm1",
    title="Theorem 1: linear rate of FedAvg with server Nesterov momentum, to a floor",
    statement="Under L-smoothness, mu-strong convexity and noise variance sigma^2, gamma <= "
              "(1-beta)^2/(8KL) gives E||x_T - x*||^2 <= 4/(1-beta)^2 (1 - mu gamma K/4)^T D + "
              "8 gamma L sigma^2/(mu^2(1-beta)) + 8 gamma K L zeta^2 (1-c/n)/(mu^2 c (1-beta)) + "
              "16 gamma^2 K^2 L^3 zeta^2/mu^3.",
    provenance=Provenance(SOURCE, "(2)", "1-20"),
    assumptions=("each f_i L-smooth", "f mu-strongly convex", "unbiased gradients, variance <= sigma^2",
                 "c clients sampled uniformly without replacement"),
    variants=[Variant("printed", "(2) under the step condition (1)", bound=BOUND, conditions=(STEP,),
                      extras={"rate": RATE})],
    lhs="E||x_T - x*||^2",
    measure=Measure("dist2"),          # what (2) bounds, in terms of a run: checkable against runs
    requires={"mu": (Domain(0.0, INF), "f mu-strongly convex (mu > 0)")},
))


# ---- claims: what the audit checks by computation (fedbound audit junk) ----------------------------
def _sampled(raw: dict) -> dict:
    """Admissible constants: mu <= L, gamma a fraction of the cap (1), c <= n."""
    out = dict(raw)
    out["mu"] = out.pop("mu/L") * out["L"]
    out["gamma"] = out.pop("gamma/cap") * (1 - out["beta"]) ** 2 / (8 * out["K"] * out["L"])
    out["c"] = np.maximum(1.0, np.round(out.pop("c/n") * out["n"]))
    return out


SAMPLER = Sampler((Param("L", 1e-3, 1e3), Param("mu/L", 1e-6, 1.0), Param("K", 1, 100, integer=True),
                   Param("beta", 0.0, 0.99, log=False), Param("gamma/cap", 1e-4, 1.0),
                   Param("n", 1, 1000, integer=True), Param("c/n", 0.0, 1.0, log=False),
                   Param("sigma", 1e-3, 1e3), Param("zeta2", 1e-6, 1e6), Param("D", 1e-6, 1e6),
                   Param("T", 1, 1e6, integer=True)), _sampled)
_rate = compile_expr(RATE)
_bound = compile_expr(BOUND)


def claims() -> list[Claim]:
    """Two sentences of Theorem 1, each checked on admissible constants: the rate of (2) is a
    contraction under (1), and (2) does not increase from T to T + 1 (a bound that grew with the
    rounds would contradict a linear rate to a floor)."""
    return [
        Claim("thm1.contraction", THM1.id, "printed", "under (1), 0 <= 1 - mu gamma K/4 <= 1", "",
              SAMPLER, lambda k: (np.stack([-_rate(k), _rate(k)], -1),
                                  np.stack([np.zeros_like(_rate(k)), np.ones_like(_rate(k))], -1)),
              parts=("rate >= 0", "rate <= 1")),
        Claim("thm1.monotone", THM1.id, "printed", "under (1), (2) at T + 1 is at most (2) at T", "",
              SAMPLER, lambda k: (_bound({**k, "T": k["T"] + 1}), _bound(k))),
    ]


register_paper(PaperAudit(PAPER, "junk: Theorem 1 (linear rate to a floor)", "", claims,
                          adapter="fedbound_junk.adapter"))

# ---- the theorem against measured runs (fedbound verify junk thm1) ----------------------------------
#: the run: --lr defaults to the largest step (1) admits at the run's constants
register_check(theorem_check(THM1.id, PAPER, defaults={"local_steps": 2}, step_option="lr",
                             sigma=0.1, rounds=200, seeds=20))
