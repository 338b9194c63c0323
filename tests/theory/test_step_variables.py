"""Results with several step variables (issue 21 item 6): the largest value of one needs the others
that its conditions involve (or says which condition applies), the step variables have an order in
which each can be chosen after the others, and admissible_constants draws them all. On toy results
with conditions on gamma and on a server step eta, in an isolated symbol registry."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fedbound.errors import ValidationError
from fedbound.testing import admissible_constants
from fedbound.theory import get
from fedbound.theory import symbols as S
from fedbound.theory.result import Provenance, Result, StepCondition, Variant
from fedbound.theory.stepsize import step_order

WHERE = Provenance("none", "(toy)", "1-2")


def build() -> dict[str, Result]:
    eta = S.declare("eta", S.POSITIVE, "toy server step size", scope="twostep")
    g, L, T = S.gamma, S.L, S.T

    def result(name, *conditions):
        return Result(f"twostep.{name}", name, "a bound with conditions on gamma and on eta", WHERE, (),
                      [Variant("printed", "toy", bound=1 / (g * eta * T), conditions=conditions)])

    return {r.id: r for r in (
        # eta's cap involves gamma: gamma first, then eta
        result("chain", StepCondition("(g)", 1 / (4 * L)), StepCondition("(e)", 1 / (g * L), variable=eta)),
        # each cap involves the other variable: no order
        result("cycle", StepCondition("(g)", 1 / (4 * L * eta)),
               StepCondition("(e)", 1 / (g * L), strict=True, variable=eta)),
        # independent conditions
        result("apart", StepCondition("(g)", 1 / (4 * L)), StepCondition("(e)", 2 / L, variable=eta)))}


@pytest.fixture
def toy(register_toy_results):
    """The toy results, registered, in a symbol registry restored after the test."""
    return register_toy_results(build)


def test_a_condition_on_the_other_variable_bounds_this_one_when_it_is_given(toy):
    """eta <= 1/(gamma L) at a given eta is gamma <= 1/(eta L): it binds for eta > 4, (g) below."""
    r = toy["twostep.chain"]
    best, binding = r.max_step(variable="gamma", L=1.0, eta=np.array([1.0, 10.0]))
    np.testing.assert_allclose(best, [0.25, 0.1], rtol=1e-11)
    assert list(binding) == ["(g)", "(e) (on eta)"]
    assert np.all(best * np.array([1.0, 10.0]) <= 1.0 + 1e-12)   # eta gamma L <= 1


def test_the_other_variable_must_be_given_or_chosen_later(toy):
    r = toy["twostep.chain"]
    with pytest.raises(ValidationError, match=r"condition \(e\) on the step variable eta \(toy server "
                                              r"step size\), eta <= 1/\(L\*gamma\), involves gamma: give eta"):
        r.max_step(variable="gamma", L=1.0)
    best, binding = r.max_step(variable="gamma", L=1.0, later=["eta"])
    assert float(best) == 0.25 and str(binding) == "(g)"
    with pytest.raises(ValidationError, match="given and named in later="):
        r.max_step(variable="gamma", L=1.0, eta=1.0, later="eta")
    with pytest.raises(ValidationError, match=r"the cap of \(e\), eta <= 1/\(L\*gamma\), depends on the "
                                              r"step variable gamma \(local step size\); give gamma"):
        r.max_step(variable="eta", L=1.0)
    assert float(r.max_step(variable="eta", L=1.0, gamma=0.1)[0]) == pytest.approx(10.0)


def test_a_variable_whose_caps_need_a_later_one_cannot_go_first(toy):
    with pytest.raises(ValidationError, match="depends on the step variable eta"):
        toy["twostep.cycle"].max_step(variable="gamma", L=1.0, later=["eta"])


def test_independent_step_variables_need_nothing_of_each_other(toy):
    r = toy["twostep.apart"]
    assert float(r.max_step(variable="gamma", L=2.0)[0]) == 0.125
    assert float(r.max_step(variable="eta", L=2.0)[0]) == 1.0


def test_a_strict_condition_on_the_other_variable_is_marked_strict(toy):
    """gamma <= 1/(4 L eta) and eta < 1/(gamma L): at eta = 0.5 (g) binds; the supremum is 0.5."""
    best, binding = toy["twostep.cycle"].max_step(variable="gamma", L=1.0, eta=np.array([0.5, 10.0]))
    np.testing.assert_allclose(best, [0.5, 0.025], rtol=1e-11)
    assert list(binding) == ["(g)", "(g)"]
    best, binding = toy["twostep.cycle"].max_step(variable="gamma", L=1.0, eta=3.0)
    assert float(best) == pytest.approx(1 / 12) and str(binding) == "(g)"


def test_step_order(toy):
    assert step_order(toy["twostep.chain"]) == ["gamma", "eta"]
    assert step_order(toy["twostep.chain"], variables=["eta"]) == ["eta"]
    assert step_order(get("sdgt.thm3"), "appendix") == ["gamma"]
    with pytest.raises(ValidationError, match=r"the conditions on eta, gamma depend on each other "
                                              r"\(\(g\): gamma <= 1/\(4\*L\*eta\); \(e\): eta < 1/\(L\*gamma\)\); "
                                              r"give one of them"):
        step_order(toy["twostep.cycle"])


@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_admissible_constants_draws_every_step_variable_in_order(toy, data):
    """Both gamma and eta are drawn and every condition holds (eta's at the drawn gamma)."""
    r = toy["twostep.chain"]
    values = data.draw(admissible_constants(r))
    assert {"gamma", "eta"} <= set(values)
    assert r.evaluate(**values).all_conditions_hold


@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_admissible_constants_with_the_other_variable_fixed(toy, data):
    r = toy["twostep.cycle"]
    eta = data.draw(st.floats(0.1, 10.0))
    values = data.draw(admissible_constants(r, fixed={"eta": eta}))
    assert values["eta"] == eta and r.evaluate(**values).all_conditions_hold
    values = data.draw(admissible_constants(r, variable="gamma", fixed={"eta": eta}))
    assert r.evaluate(**values).all_conditions_hold


def test_admissible_constants_refuses_mutually_dependent_or_missing_variables(toy):
    with pytest.raises(ValidationError, match="depend on each other"):
        admissible_constants(toy["twostep.cycle"])
    with pytest.raises(ValidationError, match=r"with variable='gamma' give the other step variables "
                                              r"in fixed= \(eta\)"):
        admissible_constants(toy["twostep.chain"], variable="gamma")
