"""Hypothesis strategies of fedbound.testing produce valid, exactly described objects."""
import numpy as np
import torch
from hypothesis import given, settings, strategies as st

from fedbound.testing import (admissible_constants, constants, least_squares_tasks, networks,
                              quadratic_tasks)
from fedbound.theory import get
from fedbound.theory import symbols as S

torch.set_num_threads(1)


@settings(max_examples=40, deadline=None)
@given(constants(["L", "mu", "K", "n", "sigma", "gamma", "p", "q"], scope="sdgt"))
def test_constants_in_their_domains(values):
    """SD-GT's p, q, K (FedNova declares its own q: short names resolve in a scope)."""
    for name, value in values.items():
        assert S.constant(name, "sdgt").domain.contains(np.asarray(value))
    assert values["mu"] <= values["L"]
    assert isinstance(values["K"], int)


@settings(max_examples=20, deadline=None)
@given(constants(["L", "mu", "K"], bounds={"K": (2, 3)}, fixed={"L": 1.0}, scope="sdgt"))
def test_bounds_and_fixed_values(values):
    assert values["L"] == 1.0 and values["K"] in (2, 3) and values["mu"] <= 1.0


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["main", "appendix", "rederived"]).flatmap(
    lambda v: st.tuples(st.just(v), admissible_constants(get("sdgt.thm3"), v))))
def test_admissible_step_satisfies_every_condition(variant_and_values):
    variant, values = variant_and_values
    assert values["gamma"] > 0 and {"T", "Lyap1"} <= set(values)
    ev = get("sdgt.thm3").evaluate(variant, **values)
    assert ev.all_conditions_hold


@settings(max_examples=25, deadline=None)
@given(networks())
def test_networks_are_valid_fog_networks(network):
    assert network.n == int(network.m.sum()) and len(network.blocks) == network.S
    for W in network.blocks:
        np.testing.assert_allclose(W.sum(axis=0), 1.0, atol=1e-12)
        np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
    assert 0 < network.q <= 1


@settings(max_examples=20, deadline=None)
@given(quadratic_tasks())
def test_quadratic_tasks_have_exact_optimum_and_constants(task):
    assert float(torch.linalg.vector_norm(task.global_grad(task.x_star))) < 1e-9
    eig = torch.linalg.eigvalsh(task.hessians)
    assert abs(float(eig.min()) - task.mu) < 1e-9 and abs(float(eig.max()) - task.L) < 1e-9
    assert task.mu > 0


@settings(max_examples=20, deadline=None)
@given(least_squares_tasks())
def test_least_squares_tasks_have_exact_optimum(task):
    scale = max(1.0, float(torch.linalg.vector_norm(task.x_star)))
    assert float(torch.linalg.vector_norm(task.global_grad(task.x_star))) < 1e-8 * scale
    assert task.loss(task.x_star) <= task.loss(task.x_star + 0.1) + 1e-12
