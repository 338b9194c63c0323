"""SD-GT's special cases (seed 003 Sec. III-C [L179-L206], sdgt.md 2.3), to 1e-12."""
import dataclasses

import pytest
import torch

from fedbound.algorithms import SDGT, GradientTracking, Scaffnew

TOL = 1e-12


def max_diff(a, b):
    return float(torch.max(torch.abs(a - b)))


@pytest.mark.parametrize("sigma", [0.0, 0.3])
def test_case1_one_client_per_subnet_is_scaffnew(make_network, make_quadratic, sigma):
    """S = n, W_s = [1], h_s = 1: z stays 0 and y = -h of Scaffnew with communication every K."""
    n, K, gamma = 6, 4, 0.05
    task = make_quadratic(n, 5, seed=11, sigma=sigma)
    sdgt = SDGT(task, make_network([1] * n), lr=gamma, local_steps=K, clients_per_subnet=1, seed=5)
    scaffnew = Scaffnew(task, lr=gamma, local_steps=K)
    a = sdgt.init()
    # same control variate (h = -y^1) and the same position of the noise stream
    b = dataclasses.replace(scaffnew.init(), H=-a.Y, rng=a.rng)
    for _ in range(25):
        a, b = sdgt.step(a), scaffnew.step(b)
        assert torch.count_nonzero(a.Z) == 0
        assert max_diff(a.x_g, b.x_g) <= TOL
        assert max_diff(a.X, b.X) <= TOL
        assert max_diff(a.Y, -b.H) <= TOL


@pytest.mark.parametrize("init", ["printed", "corrected"])
def test_case2_single_subnet_one_step_no_aggregation_is_atc_gradient_tracking(
        make_network, make_quadratic, init):
    """S = 1, K = 1, no global aggregation: x^{t+1} = W(x - gamma zhat), zhat = z + grad f_i(x).
    The printed init (z^1 = 0) gives the standard tracker zhat^0 = grad f_i(x^0); the corrected
    init gives zhat^0 = (1/n) sum_j grad f_j(x^0)."""
    task = make_quadratic(8, 5, seed=12)
    network = make_network([8])
    sdgt = SDGT(task, network, lr=0.05, local_steps=1, init=init, global_aggregation=False)
    gt = GradientTracking(task, network, lr=0.05)
    a, b = sdgt.init(), gt.init()
    if init == "corrected":
        b = dataclasses.replace(b, T=b.G.mean(dim=0).expand_as(b.G).clone())
    for _ in range(40):
        assert max_diff(a.Y, torch.zeros_like(a.Y)) == 0.0
        assert max_diff(a.X, b.X) <= TOL
        assert max_diff(a.Z + task.grad(a.X), b.T) <= TOL
        a, b = sdgt.step(a), gt.step(b)
