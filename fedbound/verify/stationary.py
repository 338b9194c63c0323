r"""Exact stationary error of SD-GT under gradient noise (quadratic task, full participation).

With the exact operator of :mod:`fedbound.verify.operator`, one round is
:math:`s^{t+1} = M s^t + c + B\xi^t` with i.i.d. noise of covariance :math:`(\sigma^2/d) I` per
gradient (the task's ``with_noise(sigma)``: Gaussian :math:`N(0, \sigma^2/d\, I)`, or uniform on the
sphere, which has the same covariance). The mean of the error :math:`e^t = s^t - s^\star` follows
the noise-free recursion and vanishes, so :math:`\bar x_g^t \to x^\star`, and its covariance
:math:`P_t` converges to the solution of the discrete Lyapunov equation on V

.. math:: P = M_V P M_V^\top + (\sigma^2/d)\, B_V B_V^\top, \qquad B_V = Q^\top B .

Stationary values of the analysis quantities (papers/sdgt.md 1.6, with
:math:`\bar x_g = x^\star`): :math:`E\|x_g - x^\star\|^2 = \mathrm{tr}\,P_{x_g}`,
:math:`\mathcal{Y} = \mathrm{tr}\,P_{Y}/n`, :math:`\mathcal{Z} = \mathrm{tr}\,P_{Z}/n`,
:math:`\Gamma = (1/n)\,E\|X^{t,K+1} - \mathbf 1 x^{\star\top}\|_F^2 = (1/n)[\mathrm{tr}(E P E^\top)
+ (\sigma^2/d)\,\mathrm{tr}(F F^\top)]`, and Theorem 3's Lyapunov function
:math:`\mathcal{L}_\infty = \Gamma + \gamma\mathcal{Y} + \gamma\mathcal{Z}` ((96) [L1025]; its
first term :math:`\|\bar x_g - x^\star\|^2` is 0). Theorem 3 (98) implies
:math:`\mathcal{L}_\infty \le \|(I - A)^{-1} b\|_1` for gamma <= gamma_bar
(papers/sdgt.md 4.6, numerical check 4).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_discrete_lyapunov

from fedbound.algorithms.semidecentralized.sdgt import SDGT
from fedbound.argtypes import NonNegative
from fedbound.errors import require
from fedbound.verify.operator import LinearOperator, sdgt_operator


@dataclass(frozen=True)
class StationaryMoments:
    """Stationary second moments (see module doc): dist2 = E||x_g - x*||^2, Gamma, Y, Z, and
    lyapunov = Gamma + gamma (Y + Z)."""

    dist2: float
    Gamma: float
    Y: float
    Z: float
    lyapunov: float
    spectral_radius: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def stationary_moments(algorithm: SDGT, sigma: NonNegative, operator: LinearOperator | None = None
                       ) -> StationaryMoments:
    """Exact stationary moments of SD-GT (``algorithm``, full participation, quadratic task) with
    gradient noise of standard deviation ``sigma`` (E||xi_i||^2 = sigma^2 per gradient)."""
    op = sdgt_operator(algorithm) if operator is None else operator
    n, d, S = algorithm.task.n, algorithm.task.d, algorithm.net.S
    require(op.c.shape == (3 * n * d + d + S * d,),
            f"operator must be the SD-GT operator of this algorithm (state size {3 * n * d + d + S * d}), "
            f"got one of state size {op.c.size}")
    require(op.spectral_radius < 1.0,
            f"no stationary regime: rho(M|_V) = {op.spectral_radius:.6g} >= 1 (reduce gamma)")
    d, n = algorithm.task.d, algorithm.task.n
    variance = sigma ** 2 / d
    Q = op.basis
    B_V = Q.T @ op.B
    P_V = solve_discrete_lyapunov(op.M_V, variance * (B_V @ B_V.T))
    P = Q @ P_V @ Q.T

    def trace(field: str) -> float:
        sl = op.slices[field]
        return float(np.trace(P[sl, sl]))

    Gamma = (float(np.trace(op.E @ P @ op.E.T)) + variance * float(np.sum(op.F ** 2))) / n
    Y, Z = trace("Y") / n, trace("Z") / n
    gamma = algorithm.gamma
    return StationaryMoments(trace("x_g"), Gamma, Y, Z, Gamma + gamma * (Y + Z),
                             op.spectral_radius)


__all__ = ["StationaryMoments", "stationary_moments"]
