"""The interface an algorithm is written against, once, for every backend (issue 13).

A method of :mod:`fedbound.pep.methods` is a function ``build(env, cfg)`` that runs the algorithm
on ``env`` and declares its conditions and its metric. Three backends implement the interface:

* :class:`fedbound.pep.symbolic.PepEnv`: PEPit points and expressions; the metric becomes the PEP
  objective, the conditions its constraints (the worst case over the function class);
* :class:`fedbound.pep.numeric.QuadraticEnv`: numpy vectors of an explicit quadratic instance
  (a lower bound on the worst case);
* :class:`fedbound.pep.numeric.ReplayEnv`: numpy vectors read back from the solved PEP (the worst
  function found by the SDP, replayed through the same algorithm code).

The interface (``env.``): ``n`` functions f_i; ``weights`` w_i of the objective F = sum_i w_i f_i;
``x0`` (start) and ``xs`` (a stationary point of F); ``grad(i, x)``, ``value(i, x)``;
``sq(v)`` = ||v||^2, ``dot(u, v)``; ``require(expr, bound)`` adds the condition expr <= bound;
``measure(expr)`` sets the metric; ``mix_class(lo, hi, points)`` applies an unknown symmetric
generalized doubly stochastic W whose eigenvalues other than the consensus one lie in [lo, hi]
(:mod:`fedbound.pep.consensus`). Points support +, - and multiplication by floats; a fixed mixing
matrix is :func:`mix` (a linear combination, exact in every backend).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from PEPit import Point

from fedbound.errors import ValidationError


class Env:
    """The interface of the module doc: the base class of every backend (
    :class:`fedbound.pep.symbolic.PepEnv`, :class:`fedbound.pep.numeric.NumericEnv`), so that a
    function taking an ``env`` can say which objects it takes."""


def combine(weights: Sequence[float], points: Sequence):
    """sum_j weights[j] points[j] over the nonzero weights (points of any backend)."""
    if len(points) == 0 or len(weights) != len(points):
        raise ValidationError(f"combine needs one weight per point and at least one point, got "
                              f"{len(weights)} weights and {len(points)} points")
    terms = [(float(w), p) for w, p in zip(weights, points) if w != 0]
    if not terms:
        return 0.0 * points[0]
    out = terms[0][0] * terms[0][1]
    for w, p in terms[1:]:
        out = out + w * p
    return out


def mean(points: Sequence):
    """(1/len) sum of ``points``."""
    if len(points) == 0:
        raise ValidationError("mean needs at least one point, got none")
    return combine([1.0 / len(points)] * len(points), points)


def mix(W: np.ndarray, points: Sequence) -> list:
    """Row i: sum_j W_ij points[j] (a fixed mixing matrix)."""
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or W.shape[1] != len(points):
        raise ValidationError(f"W must be a matrix with one column per point ({len(points)}), got shape "
                              f"{W.shape}")
    return [combine(W[i], points) for i in range(W.shape[0])]


def objective_grad(env: Env, x: Point | np.ndarray):
    """grad F(x) = sum_i w_i grad f_i(x)."""
    return combine(env.weights, [env.grad(i, x) for i in range(env.n)])


def objective_value(env: Env, x: Point | np.ndarray):
    """F(x) = sum_i w_i f_i(x)."""
    return sum(w * env.value(i, x) for i, w in enumerate(env.weights))


def heterogeneity(env: Env, x: Point | np.ndarray):
    """sum_i w_i ||grad f_i(x)||^2 (at x*: the heterogeneity zeta^2 of the issue, with w_i = 1/n)."""
    return sum(w * env.sq(env.grad(i, x)) for i, w in enumerate(env.weights))
