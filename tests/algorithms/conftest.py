"""Fixtures for the algorithm tests: small ring/complete networks and heterogeneous quadratics."""
from __future__ import annotations

import pytest

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
