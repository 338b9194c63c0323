"""Shared drivers for the optimizer oracle tests: one state-dependent gradient field, a loop that runs
a fedbound transform on it, and one that runs a torch.optim optimizer on it (float64). The test files
get this module through the session fixture ``oracles``."""
from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

TOL = dict(rtol=1e-12, atol=1e-12)


class Field:
    """g_k(x) = h * x - c + xi_k: a diagonal quadratic plus a fixed noise sequence, so that
    trajectories of different implementations agree only if every step agrees."""

    def __init__(self, shape, steps: int, seed: int = 0, noise: float = 1.0):
        gen = torch.Generator().manual_seed(seed)
        kw = dict(dtype=torch.float64, generator=gen)
        self.h = 0.5 + torch.rand(shape, **kw)
        self.c = torch.randn(shape, **kw)
        self.xi = noise * torch.randn((steps, *shape), **kw)
        self.x0 = torch.randn(shape, **kw)

    def grad(self, x: torch.Tensor, k: int) -> torch.Tensor:
        return self.h * x - self.c + self.xi[k]

    @property
    def steps(self) -> int:
        return self.xi.shape[0]


def run_transform(transform, field: Field, x0=None):
    """Iterates x_{k+1} = x_k + updates of ``transform`` on the field; returns the trajectory
    (steps, *shape) and the final state."""
    x = (field.x0 if x0 is None else x0).clone()
    state = transform.init(x)
    out = []
    for k in range(field.steps):
        updates, state = transform.update(field.grad(x, k), state, x)
        x = x + updates
        out.append(x)
    return torch.stack(out), state


def run_torch(opt_cls, field: Field, **kwargs) -> torch.Tensor:
    """The same iteration with a torch.optim optimizer fed p.grad = g_k(p)."""
    p = torch.nn.Parameter(field.x0.clone())
    opt = opt_cls([p], **kwargs)
    out = []
    for k in range(field.steps):
        p.grad = field.grad(p.detach(), k)
        opt.step()
        out.append(p.detach().clone())
    return torch.stack(out)


def to_numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


@pytest.fixture(scope="session")
def oracles():
    return sys.modules[__name__]
