"""Decentralized GD (DGD) and gradient tracking (DIGing) with a fixed W or a spectral class
(issue 13; consensus steps: :mod:`fedbound.pep.consensus`).

n agents, f_i L-smooth and mu-strongly convex, all start at x0 with ||x0 - x*||^2 <= 1 and
(1/n) sum_i ||grad f_i(x*)||^2 <= zeta^2. With X the agents' points and M the mixing (a fixed
doubly stochastic W given as ``W``, else every W of the spectral class [lam_lo, lam_hi]):

    DGD:  X <- M X - gamma grad F(X)
    GT:   X <- M X - gamma Y,  Y <- M Y + grad F(X_new) - grad F(X),  Y_0 = grad F(X_0).

Metric (1/n) sum_i ||x_i^T - x*||^2. No bound of the four papers (theory: none). The lower-bound
family instantiates the class as W = J + lam (I - J), lam in [lam_lo, lam_hi].
"""
from __future__ import annotations

from fedbound.errors import ValidationError
from fedbound.network.mixing import is_connected
from fedbound.pep.env import Env, mix
from fedbound.pep.method import Method, matrix_option, option, register, stochastic_matrix
from fedbound.pep.methods.common import (LR, MU, N_CLIENTS, ZETA, L, family, start_and_heterogeneity,
                                         strongly_convex_check)
from fedbound.registry import integer_option, number_option


def _mixer(env, cfg: dict):
    if cfg["W"] is not None:
        return lambda pts: mix(cfg["W"], pts)
    return lambda pts: env.mix_class(cfg["lam_lo"], cfg["lam_hi"], pts)


def build_dgd(env: Env, cfg: dict) -> None:
    M, X = _mixer(env, cfg), [env.x0] * env.n
    for _ in range(cfg["rounds"]):
        X = [m - cfg["lr"] * env.grad(i, x) for i, (m, x) in enumerate(zip(M(X), X))]
    _finish(env, cfg, X)


def build_gt(env: Env, cfg: dict) -> None:
    M, X = _mixer(env, cfg), [env.x0] * env.n
    G = [env.grad(i, x) for i, x in enumerate(X)]
    Y = list(G)
    for _ in range(cfg["rounds"]):
        X = [m - cfg["lr"] * y for m, y in zip(M(X), Y)]
        G_new = [env.grad(i, x) for i, x in enumerate(X)]
        Y = [m + g1 - g0 for m, g1, g0 in zip(M(Y), G_new, G)]
        G = G_new
    _finish(env, cfg, X)


def _finish(env, cfg: dict, X: list) -> None:
    start_and_heterogeneity(env, cfg["zeta"])
    env.measure(sum(env.sq(x - env.xs) for x in X) * (1.0 / env.n))


def _check(cfg: dict) -> None:
    strongly_convex_check(cfg)
    if cfg["n"] < 2:
        raise ValidationError(f"n must be >= 2 for a decentralized method, got {cfg['n']}")
    if cfg["W"] is not None:
        cfg["W"] = stochastic_matrix("W", cfg["W"], cfg["n"])
        if not is_connected(cfg["W"]):
            raise ValidationError("W must connect the agents (a decentralized method mixes: W = I, or a W "
                                  "whose graph falls apart, is no communication between some agents)")
    elif not cfg["lam_lo"] <= cfg["lam_hi"]:
        raise ValidationError(f"lam_lo must be <= lam_hi, got {cfg['lam_lo']:g} > {cfg['lam_hi']:g}")
    elif cfg["lam_lo"] == 1.0:
        raise ValidationError("lam_lo = lam_hi = 1 is the class of W = I only (no communication): a "
                              "decentralized method mixes, give lam_lo < 1")


OPTIONS = (N_CLIENTS, option(integer_option, "rounds", "iterations (T)", 3, low=1, high=32, examples=(1, 2),
                             aliases=("T",)),
           LR, L, MU, ZETA,
           option(matrix_option, "W", "fixed doubly stochastic mixing matrix as JSON rows (else the "
                  "spectral class)", None, examples=("[[0.5, 0.5], [0.5, 0.5]]",)),
           option(number_option, "lam_lo", "spectral class: smallest non-consensus eigenvalue", -0.5,
                  low=-1.0, high=1.0, examples=(-0.5, 0.0)),
           option(number_option, "lam_hi", "spectral class: largest non-consensus eigenvalue", 0.5,
                  low=-1.0, high=1.0, examples=(0.0, 0.5)))


def _family(cfg: dict) -> dict:
    return family(cfg, lam=None if cfg["W"] is not None else (cfg["lam_lo"], cfg["lam_hi"]))


def _setting(cfg: dict) -> dict:
    return {"n": cfg["n"], "L": cfg["L"], "mu": cfg["mu"]}


DGD = register(Method("dgd", "decentralized gradient descent, fixed W or spectral class", OPTIONS,
                      setting=_setting, build=build_dgd, family=_family, conditions=_check, doc=__doc__))
GT = register(Method("gt", "gradient tracking (DIGing), fixed W or spectral class", OPTIONS,
                     setting=_setting, build=build_gt, family=_family, conditions=_check, doc=__doc__))
