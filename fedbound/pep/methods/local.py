"""Local-update methods: FedAvg, FedProx (strongly convex) and FedNova (non-convex, Theorem 1).

FedAvg and FedProx (issue 13). n clients, f_i L-smooth and mu-strongly convex, x* the minimizer of
f = (1/n) sum_i f_i, ||x0 - x*||^2 <= 1 and (1/n) sum_i ||grad f_i(x*)||^2 <= zeta^2. Per round,
from y_i = x each client takes K steps y_i <- y_i - gamma (grad f_i(y_i) + mu_prox (y_i - x))
(mu_prox = 0: FedAvg; > 0: FedProx's proximal step x <- x - eta[g + mu (x - x^(t,0))], seed 001 (31),
papers/fednova.md 2.4 [L58]), then x <- (1/n) sum_i y_i. Metric
||x_R - x*||^2. With zeta = 0 every f_i has x* as minimizer and FedAvg is exactly GD on each:
worst case rho^(2KR), rho = max(|1 - gamma mu|, |1 - gamma L|) (the theory column; none for
zeta > 0: the four papers bound FedAvg only for non-convex objectives). Both are round methods
(:func:`fedbound.pep.rounds.round_method`): FedAvg's round, with the proximal coefficient
``proximal_mu`` (``mu_prox`` before).

FedNova (seed 001, update rule (4) [L93] with vanilla local GD, a_i = (1, ..., 1),
||a_i||_1 = tau_i). Client i takes tau_i steps y_i <- y_i - eta grad F_i(y_i) from x, and
x <- x - tau_eff sum_i p_i (x - y_i)/tau_i, tau_eff = sum_i p_i tau_i, p_i = 1/n. The class is
Theorem 1's deterministic case (sigma = 0): F_i L-smooth (non-convex), F~ = sum_i p_i F_i with
F~(x0) - F~_inf <= Delta and Assumption 3 sum_i p_i ||grad F_i(x)||^2 <= beta^2 ||grad F~(x)||^2
+ kappa^2. The PEP imposes Assumption 3 at x* and at every server iterate, and F~(x0) - F~(z) <= Delta
at x* (a stationary point) and at every server iterate: all implied by the assumptions, so the PEP
is a relaxation and its value an upper bound on the worst case. Metric: (1/R) sum_{t<R}
||grad F~(x^t)||^2, compared with (97) at sigma = 0 (fedbound.theory ``fednova.thm1``, printed,
C = max_i tau_i (tau_i - 1) by (95), valid under (98)-(99)). The lower-bound family shares one
Hessian diag(h), h in [0, L]^d, across clients, so Assumption 3 holds everywhere, not only at the
sampled points (needs beta^2 >= 1, which Jensen's inequality forces anyway). The round is a
:class:`fedbound.pep.rounds.RoundSpec` (normalized aggregation, tau_eff "steps"); the theory a
:class:`fedbound.pep.method.ResultTheory` of ``fednova.thm1``.
"""
from __future__ import annotations

from fedbound.errors import ValidationError
from fedbound.pep.env import Env, heterogeneity, objective_grad, objective_value
from fedbound.pep.method import Method, ResultTheory, Theory, integers_option, option, register
from fedbound.pep.methods.common import LOCAL_STEPS, LR, ROUNDS, L, step_check
from fedbound.pep.rounds import RoundSpec, round_method
from fedbound.registry import number_option


def fedavg_theory(cfg: dict) -> Theory | None:
    if cfg["zeta"] > 0 or cfg.get("proximal_mu", 0.0) > 0:
        return None
    rho = max(abs(1 - cfg["lr"] * cfg["mu"]), abs(1 - cfg["lr"] * cfg["L"]))
    return Theory(rho ** (2 * cfg["local_steps"] * cfg["rounds"]), "zeta = 0: GD on every client, rho^(2KR)",
                  True)


FEDAVG = register(round_method(
    "fedavg", "FedAvg: K local GD steps then averaging, heterogeneity zeta", RoundSpec(lr=LR, local_steps=LOCAL_STEPS),
    theory=fedavg_theory, doc=__doc__))

FEDPROX = register(round_method(
    "fedprox", "FedProx: K local GD steps on f_i + (proximal_mu/2)||y - x||^2, then averaging",
    RoundSpec(lr=LR, local_steps=LOCAL_STEPS,
              proximal_mu=option(number_option, "proximal_mu", "proximal coefficient (FedProx's mu)", 0.1,
                                 low=0.0, high=1e6, examples=(0.0, 0.5), aliases=("mu_prox",))),
    theory=fedavg_theory, doc=__doc__))

TAUS = option(integers_option, "local_steps", "local steps tau_i of each client, comma-separated", "2,4",
              low=1, high=32, examples=("2,4", (1, 3)), aliases=("taus",))
ETA = option(number_option, "lr", "client learning rate, the paper's eta (lr L <= 4)", 0.05, low=0.0,
             high=1e6, low_open=True, examples=(0.05, 0.1), aliases=("eta",))
#: FedNova's round: tau_i local GD steps of size eta, normalized averaging with tau_eff = sum_i p_i tau_i
FEDNOVA_ROUND = RoundSpec(lr=ETA, local_steps=TAUS, aggregation="normalized", tau_eff="steps")


def build_fednova(env: Env, cfg: dict) -> None:
    server = FEDNOVA_ROUND.run(env, cfg, cfg["rounds"])
    gap = cfg["Delta"]
    for z in [env.xs] + server[1:]:
        env.require(objective_value(env, env.x0) - objective_value(env, z), gap)
    for z in [env.xs] + server[:-1]:
        env.require(heterogeneity(env, z) - cfg["beta2"] * env.sq(objective_grad(env, z)), cfg["kappa2"])
    env.measure(sum(env.sq(objective_grad(env, z)) for z in server[:-1]) * (1.0 / cfg["rounds"]))


def _fednova_constants(cfg: dict) -> dict:
    taus, n = cfg["local_steps"], len(cfg["local_steps"])
    return dict(L=cfg["L"], Delta=cfg["Delta"], eta=cfg["lr"], tau_eff=sum(taus) / n, T=cfg["rounds"], m=n,
                C=max(t * (t - 1) for t in taus), kappa2=cfg["kappa2"], beta2=cfg["beta2"])


FEDNOVA_THEORY = ResultTheory("fednova.thm1", _fednova_constants, "printed", {"sigma": 0.0, "A": 1.0, "B": 1.0},
                              "fednova.thm1 (97) printed, sigma = 0, C = max tau_i (tau_i - 1)")


def _fednova_check(cfg: dict) -> None:
    step_check("lr", cfg["lr"], cfg["L"])
    if cfg["beta2"] < 1:
        raise ValidationError(f"beta2 must be >= 1 (Jensen: sum_i p_i ||grad F_i||^2 >= ||grad F~||^2), "
                              f"got {cfg['beta2']:g}")


FEDNOVA = register(Method(
    "fednova", "FedNova with unequal tau_i (non-convex, vs Theorem 1 at sigma = 0)",
    (TAUS, ROUNDS, ETA, L,
     option(number_option, "Delta", "initial gap F~(x0) - F~_inf <= Delta", 1.0, low=0.0, high=1e6,
            low_open=True, examples=(1.0, 2.0), constant=True),
     option(number_option, "beta2", "Assumption 3 beta^2 (>= 1)", 1.0, low=0.0, high=1e6,
            examples=(1.0, 2.0), constant=True),
     option(number_option, "kappa2", "Assumption 3 kappa^2", 1.0, low=0.0, high=1e6,
            examples=(0.0, 1.0), constant=True)),
    setting=lambda cfg: {"n": len(cfg["local_steps"]), "L": cfg["L"], "mu": 0.0, "nonconvex": True},
    build=build_fednova, family=lambda cfg: {"h_low": 0.0, "shared_h": True, "zero_g": cfg["kappa2"] == 0},
    theory=FEDNOVA_THEORY, conditions=_fednova_check, doc=__doc__))
