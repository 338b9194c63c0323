"""Small SD-GT settings shared by the verify tests (float64, 2-core friendly)."""
import pytest
import torch
from threadpoolctl import threadpool_limits

from fedbound.network import Network
from fedbound.tasks import LeastSquares, Quadratic
from fedbound.verify import SDGTSetting

torch.set_num_threads(1)
threadpool_limits(1)   # small dense eigen/Schur problems: BLAS threads only add contention


@pytest.fixture(scope="session")
def ring3x4():
    return Network.from_topology("ring", 3, 4)


@pytest.fixture(scope="session")
def quadratic():
    """Heterogeneous quadratic, every f_i strongly convex (mu = 0.5, L = 2)."""
    return Quadratic.generate(12, 4, kappa=4.0, mu=0.5, heterogeneity=1.0, seed=0)


@pytest.fixture(scope="session")
def least_squares():
    """Strongly convex least squares: 10 AR(1) rows >= d = 4 per client, so every f_i is."""
    task = LeastSquares.generate(n=12, m=10, d=4, omega=0.5, seed=0)
    assert task.mu > 0
    return task


@pytest.fixture
def setting(quadratic, ring3x4):
    return SDGTSetting(quadratic, ring3x4, K=3, gamma=0.05, h=2)
