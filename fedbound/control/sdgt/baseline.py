"""The controller of SD-GT's released code, as a baseline (anchors.md 1.1).

EvanChen022kan/SD-GT-INFOCOM, functions/SemiFL_NN.py (``control == 3``): no geometric program;
it enumerates K in {1..49} and one sample count j in {1..n_c} shared by all subnets
(beta = (n_c - j)/n_c, equal-sized subnets assumed) and takes the argmin of a closed-form
surrogate. Its surrogate has (1 - beta^2)^-4 in the first term where (31) has p^-2; for a fair
comparison this baseline evaluates OUR objective J (:func:`fedbound.control.sdgt.objective.objective`)
on the same grid. With unequal subnet sizes the shared count runs over j in 1..min_s m_s.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedbound import resources
from fedbound.argtypes import Count
from fedbound.control.sdgt.objective import ControlProblem, objective
from fedbound.network.sampling import participation

#: the released code's K range (main.py uses 99 in one sweep)
OFFICIAL_K_MAX = 49


@dataclass(frozen=True)
class GridChoice:
    """Best grid point: K, the shared sample count j, h = (j, ..., j), p and J."""

    K: int
    j: int
    h: tuple
    p: float
    value: float


def official_grid(problem: ControlProblem, K_max: Count = OFFICIAL_K_MAX) -> GridChoice:
    """argmin of J over K in 1..K_max and h_s = j for all s, j in 1..min_s m_s (vectorized)."""
    m = problem.spec.m
    resources.require_memory(f"the official grid of K_max = {K_max} x {int(m.min())} sample counts",
                             2.0 * K_max * int(m.min()) * m.size)
    j = np.arange(1, int(m.min()) + 1)
    h = np.repeat(j[:, None], m.size, axis=1)
    K = np.arange(1, K_max + 1)
    values = objective(K[:, None], participation(h, m)[None, :], (h / m)[None, :, :], problem)
    k_i, j_i = np.unravel_index(int(np.argmin(values)), values.shape)
    return GridChoice(K=int(K[k_i]), j=int(j[j_i]), h=tuple(int(x) for x in h[j_i]),
                      p=float(participation(h[j_i], m)), value=float(values[k_i, j_i]))
