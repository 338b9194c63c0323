"""Hypothesis strategies of fedbound.testing produce valid, exactly described objects: constants only
inside their domains (open ends excluded), admissible constants of every registered result, and bad
arguments as FedboundErrors when the strategy is made."""
import numpy as np
import pytest
import torch
from hypothesis import find, given, settings, strategies as st

from fedbound.errors import FedboundError
from fedbound.testing import (admissible_constants, constant_strategy, constants, least_squares_tasks,
                              networks, quadratic_tasks)
from fedbound.theory import get, results
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


# -- every domain of every registered result ---------------------------------------------------------
RESULT_VARIANTS = [(r.id, v) for r in results() for v in r.variants]


@pytest.mark.parametrize("rid,variant", RESULT_VARIANTS, ids=[f"{r}:{v}" for r, v in RESULT_VARIANTS])
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_every_result_draws_admissible_values(rid, variant, data):
    """admissible_constants of every registered result: each value inside the result's domain (its
    assumptions included), every step-size condition holding, the input accepted by the result."""
    result = get(rid)
    values = data.draw(admissible_constants(rid, variant))
    for name, value in values.items():
        assert result.domain(name)[0].contains(np.asarray(value)), (name, value)
    result.check(values)
    if result.variant(variant).conditions:
        ev = result.evaluate(variant, partial=True, **values)
        assert ev.conditions_hold and all(np.all(h) for h in ev.conditions_hold.values())
        assert set(result.variant(variant).variables()) <= set(values)


def _open_ended():
    """(key, domain) of every declared constant with a finite open end (after every paper loads)."""
    results()
    return [(k, c.domain) for k, c in sorted(S.all_constants().items())
            if not c.domain.integer and ((c.domain.low_open and np.isfinite(c.domain.low))
                                         or (c.domain.high_open and np.isfinite(c.domain.high)))]


OPEN_ENDED = _open_ended()


@pytest.mark.parametrize("key,domain", OPEN_ENDED, ids=[k for k, _ in OPEN_ENDED])
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_open_ends_are_never_drawn(key, domain, data):
    """Default ranges and bounds reaching an open end (beta1 in [0, 1) with bounds (0.5, 1)) stay
    strictly inside: the open end itself is never drawn."""
    low = domain.low if np.isfinite(domain.low) else domain.high - 10.0
    high = domain.high if np.isfinite(domain.high) else low + 10.0
    for bounds in (None, (low, high), (low, low + 1e-300 + 1e-12 * abs(low))):
        value = data.draw(constant_strategy(key, bounds, domain=domain))
        assert domain.contains(np.asarray(value)), (key, bounds, value)


def test_beta1_is_drawn_below_one():
    """The reported case: AFGA's beta1 in [0, 1) with bounds ending at 1."""
    beta1 = constants(["beta1"], bounds={"beta1": (0.999999, 1.0)}, scope="afga")
    assert find(beta1, lambda c: True)["beta1"] < 1.0
    assert find(beta1, lambda c: c["beta1"] >= 0.9999999)["beta1"] < 1.0


@pytest.mark.parametrize("make,pattern", [
    (lambda: constants(["K"], bounds={"K": (5, 2)}, scope="sdgt"),
     r"no values to draw for K \(local steps \(D2D rounds\) per global round\): bounds \(5, 2\)"),
    (lambda: constants(["K"], bounds={"K": (1.2, 1.8)}, scope="sdgt"), r"no values to draw for K"),
    (lambda: constants(["beta1"], bounds={"beta1": (1.0, 2.0)}, scope="afga"),
     r"beta1 \(AMSGrad first-moment factor beta1\): bounds \(1, 2\) have no value in its domain in \[0, 1\)"),
    (lambda: constants(["p"], bounds={"p": (0.0, 0.0)}, scope="sdgt"), r"no values to draw for p"),
    (lambda: constants(["L"], bounds={"L": (1.0, np.inf)}), r"bounds\['L'\]\[1\] must be finite, got inf"),
    (lambda: constants(["K"], bounds={"K": (1, np.inf)}, scope="sdgt"), r"bounds\['K'\]\[1\] must be finite, got inf"),
    (lambda: constant_strategy("L", domain=S.Domain(2000.0, np.inf)),
     r"no values to draw for L \(smoothness constant\): its default range has no value in its domain "
     r"in \(2000, inf\); pass bounds"),
    (lambda: constants(["L"], bounds={"L": (1.0, "2")}), r"bounds\['L'\]\[1\] must be a real number, got '2'"),
    (lambda: constants(["L"], bounds={"L": 1.0}), r"bounds\['L'\] must be a list or tuple, got 1.0"),
    (lambda: constants(["L", "mu"], fixed={"mu": -1.0}), r"mu \(strong-convexity constant .*\) must be in \[0, inf\)"),
    (lambda: constants(["L"], fixed={"Ll": 1.0}), r"unknown fixed constant 'Ll'; did you mean 'L'"),
    (lambda: constants(["L"], bounds={"mu": (0, 1)}), r"unknown constant of bounds 'mu'"),
    (lambda: constants("L"), r"names must be an iterable \(not a string\), got 'L'"),
    (lambda: admissible_constants("sdgt.thm3", fraction=(0.0, 1.0)), r"fraction \(low\) must be in \(0, 1\]"),
    (lambda: admissible_constants("sdgt.thm3", fraction=(0.5, 2.0)), r"fraction \(high\) must be in \[0.5, 1\]"),
    (lambda: admissible_constants("sdgt.thm3", variable="eta"), r"variable must be one of gamma"),
    (lambda: admissible_constants(3), r"result must be a string or a fedbound Result, got 3"),
    (lambda: admissible_constants("sdgt.thm3", "printed"), r"sdgt.thm3 has no variant 'printed'"),
], ids=lambda v: "" if callable(v) else v[:30])
def test_bad_arguments_are_fedbound_errors_when_the_strategy_is_made(make, pattern):
    with pytest.raises(FedboundError, match=pattern):
        make()


@settings(max_examples=20, deadline=None)
@given(constants(["L", "mu"], fixed={"mu": 5.0}, bounds={"L": (0.1, 10.0)}))
def test_a_larger_constant_is_drawn_above_a_fixed_smaller_one(values):
    assert 5.0 <= values["L"] <= 10.0 and values["mu"] == 5.0


@pytest.mark.parametrize("make,kwargs,message", [
    ("quadratic_tasks", {"n": 0}, "n must be an integer >= 1"),
    ("quadratic_tasks", {"d": "x"}, "d must be an integer"),
    ("quadratic_tasks", {"kappa": (10.0, 2.0)}, "kappa (high) must be >= 10"),
    ("quadratic_tasks", {"kappa": (0.5, 2.0)}, "kappa (low) must be >= 1"),
    ("quadratic_tasks", {"mu": (0.0, 1.0)}, "mu (low) must be > 0"),
    ("quadratic_tasks", {"heterogeneity": "ab"}, "heterogeneity must be a list or tuple, got 'ab'"),
    ("quadratic_tasks", {"kappa": (1.0, float("nan"))}, "kappa[1] must be a finite real number, got nan"),
    ("networks", {"S": 0}, "S must be an integer >= 1"),
    ("networks", {"m": "a"}, "m must be an integer"),
    ("networks", {"topologies": ["nope"]}, "topology must be one of"),
    ("networks", {"topologies": []}, "at least one topology"),
    ("networks", {"topologies": "ring"}, "topologies must be a list"),
    ("networks", {"equal_sizes": 3}, "equal_sizes must be True or False"),
    ("least_squares_tasks", {"rows": 0}, "rows must be an integer >= 1"),
])
def test_task_and_network_strategies_check_their_arguments(make, kwargs, message):
    """A bad argument of a task or network strategy is a FedboundError naming it when the strategy
    is made, never hypothesis' own error or a TypeError at draw time (issue 23)."""
    import fedbound.testing as testing
    from fedbound.errors import FedboundError

    with pytest.raises(FedboundError) as info:
        getattr(testing, make)(**kwargs)
    assert message in str(info.value)
