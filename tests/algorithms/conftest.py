"""Fixtures for the algorithm tests: small ring/complete networks, heterogeneous quadratics, and
the iterates of an optimizer transform."""
from __future__ import annotations

import pytest
import torch

from fedbound.network.subnets import Network
from fedbound.tasks import Quadratic


@pytest.fixture
def make_network():
    """Network of ring (or complete) subnets of the given sizes."""
    def make(sizes, topology="ring"):
        return Network.from_topology(topology, len(sizes), list(sizes))
    return make


@pytest.fixture
def make_quadratic():
    """Heterogeneous quadratic, eigenvalues in [0.5, 2]; sigma > 0 adds Gaussian gradient noise
    with E||noise||^2 = sigma^2; heterogeneity = 0 gives every client the same minimiser."""
    def make(n, d, seed=0, sigma=0.0, heterogeneity=1.0):
        task = Quadratic.generate(n, d, kappa=4.0, mu=0.5, heterogeneity=heterogeneity, seed=seed)
        return task.with_noise(sigma) if sigma > 0 else task
    return make


@pytest.fixture(scope="session")
def transform_steps():
    """``steps(transform, shape, rounds=5, seed=0)``: the iterates (rounds, *shape) of an optimizer
    transform fed random float64 gradients from a random start (shape (d,) for a server, (rows, d)
    for a client); two transforms that take the same steps give equal stacks."""
    def steps(transform, shape, rounds=5, seed=0):
        gen = torch.Generator().manual_seed(seed)
        x = torch.randn(shape, dtype=torch.float64, generator=gen)
        state, out = transform.init(x), []
        for _ in range(rounds):
            updates, state = transform.update(torch.randn(shape, dtype=torch.float64, generator=gen),
                                              state, x)
            x = x + updates
            out.append(x)
        return torch.stack(out)
    return steps
