r"""The per-round contraction of SD-GT measured on the algorithm itself, by the power method.

With full participation and exact gradients on a quadratic, a round maps the deviation
:math:`e^t = s^t - s^\star` of the state :math:`s = (X, Y, Z, x_g, \psi)` from the fixed point
linearly, :math:`e^{t+1} = M e^t` (:mod:`fedbound.verify.operator`). A plain run measures the
contraction from :math:`\|x_g^t - x^\star\|` only until the error reaches roundoff; when the two
leading eigenvalues of :math:`M|_V` are close, the ratio has not converged by then. Here the real
``alg.step`` is iterated instead on a deviation that is rescaled to a fixed norm after every block
of rounds (rescaling commutes with a linear map), so the run can last as long as the ratio needs:

.. math:: c_b = \left(\|e^{(b+1)B}\| / \|e^{bB}\|\right)^{1/B}, \qquad
          \hat c = \exp\Big(\tfrac{1}{|\text{tail}|}\sum_{b \in \text{tail}} \log c_b\Big),

the tail being the second half of the blocks. Each rescaling also projects the deviation back onto
the invariant subspace V (zero subnet sums of z), where the exact trajectory lies. Its error estimate is the distance between the
estimates over the second half and over the last quarter (the transient decays like
:math:`|\lambda_2/\lambda_1|^t`; a complex dominant pair makes the block factors oscillate around
the radius, and the average over many blocks converges to it).
"""
from __future__ import annotations

import math
from dataclasses import replace

import torch

from fedbound.algorithms.semidecentralized.sdgt import SDGT
from fedbound.argtypes import Count, Positive
from fedbound.errors import require
from fedbound.verify.operator import FIELDS, analytic_fixed_point


def renormalized_contraction(alg: SDGT, rounds: Count = 20000, block: Count = 50,
                             scale: Positive = 1e-3) -> tuple[float, float, int]:
    """``(c, error, rounds)``: the measured per-round contraction of ``alg`` (an SDGT with full
    participation on a quadratic task with exact gradients) towards its fixed point."""
    require(rounds >= 4 * block, f"rounds must be >= 4 * block = {4 * block}, got {rounds}")
    star = {k: torch.as_tensor(v, dtype=alg.task.dtype) for k, v in analytic_fixed_point(alg).items()}

    def deviation_norm(state) -> float:
        return math.sqrt(sum(float(torch.sum((getattr(state, k) - star[k]) ** 2)) for k in FIELDS))

    def rescaled(state, factor: float):
        deviation = {k: getattr(state, k) - star[k] for k in FIELDS}
        # back onto V: roundoff seeds the conserved subnet sums of z (eigenvalue 1, outside V),
        # and every rescaling would amplify them until they dominate
        deviation["Z"] = deviation["Z"] - alg.net.expand(alg.net.subnet_mean(deviation["Z"]))
        return replace(state, **{k: star[k] + deviation[k] * factor for k in FIELDS})

    state = alg.init()
    norm = deviation_norm(state)
    require(norm > 0, "the initial state is already the fixed point: nothing to measure")
    state = rescaled(state, scale / norm)
    logs = []
    for _ in range(rounds // block):
        for _ in range(block):
            state = alg.step(state)
        norm = deviation_norm(state)
        require(norm > 0, "the deviation vanished exactly: the contraction is 0")
        logs.append(math.log(norm / scale) / block)
        state = rescaled(state, scale / norm)
    half, quarter = logs[len(logs) // 2:], logs[3 * len(logs) // 4:]
    c = math.exp(sum(half) / len(half))
    error = abs(c - math.exp(sum(quarter) / len(quarter)))
    return c, error, len(logs) * block


__all__ = ["renormalized_contraction"]
