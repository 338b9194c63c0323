"""A plan names the limits its optimum sits on (fedbound.control.sdgt.limits): K = K_cap, every
device sampled, a subnet at one device; the GP's dual value of a limit is its worth, checked against
the change of the optimum when the cap moves (finite difference) and against the envelope
derivative of the objective at K = K_cap."""
import numpy as np
import pytest

from fedbound.control import ControlProblem, NetSpec
from fedbound.control.sdgt.gp import CONSTRAINTS, solve_gp
from fedbound.control.sdgt.integer import integer_optimum, plan
from fedbound.control.sdgt.objective import objective

#: the README's network (fedbound control plan --spec net.json)
README = NetSpec(m=[10, 10, 10], E=[42.0, 17.0, 80.0], E_d2d=[0.4, 0.2, 1.0])
#: how far the dual (an elasticity, -d log J*/d log K_cap) may be from the envelope derivative:
#: Clarabel's default tolerances give the duals to about 1e-6 (measured: 2e-9 to 8e-7 at K_cap = 5
#: to 500)
DUAL_ATOL = 2e-6
#: and from the central difference of J* at K_cap +- 1, whose own error is the solver's 1e-8 on
#: J* times K_cap/2 (7e-6 measured at K_cap = 500) plus its curvature, about 2/K_cap^2 relative
FD_ATOL = 2e-5


def _names(p) -> list[str]:
    return [lim.name for lim in p.limits]


def test_the_readme_plan_names_its_caps():
    p = plan(ControlProblem(README))
    assert p.K == p.problem.K_cap == 49 and all(h == m for h, m in zip(p.h, README.m))
    assert _names(p) == ["K <= K_cap", "every device sampled"]
    cap = p.limits[0]
    assert cap.where == "K = K_cap = 49" and cap.dual > 0 and cap.marginal < 0
    assert "K_cap = 49" in cap.words and "raising the cap by one" in cap.words
    data = p.to_dict()["active_constraints"]
    assert [d["name"] for d in data] == _names(p) and data[0]["dual"] == cap.dual
    assert set(p.continuous.duals) == set(CONSTRAINTS)


@pytest.mark.parametrize("K_cap", [20, 49, 500])
def test_the_dual_value_of_the_cap_is_the_change_of_the_optimum_when_the_cap_moves(K_cap):
    """The dual of K <= K_cap is the elasticity -d log J*/d log K_cap, so dJ*/dK_cap = -dual J*/K_cap:
    against the central difference (J*(K_cap + 1) - J*(K_cap - 1))/2 of the relaxation's optimum,
    and against the envelope theorem (only K <= K_cap involves K_cap, so dJ*/dK_cap = dJ/dK at the
    optimum, K = K_cap)."""
    p = plan(ControlProblem(README, K_cap=K_cap))
    cap, J = p.limits[0], p.continuous.value
    assert cap.name == "K <= K_cap" and cap.marginal == pytest.approx(-cap.dual * J / K_cap, rel=1e-12)
    up = solve_gp(ControlProblem(README, K_cap=K_cap + 1)).value
    down = solve_gp(ControlProblem(README, K_cap=K_cap - 1)).value
    elasticity = -(up - down) / 2 * K_cap / J
    assert abs(cap.dual - elasticity) <= FD_ATOL + 2 * cap.dual / K_cap ** 2
    c = p.continuous
    h = 1e-6 * K_cap
    dJ_dK = (objective(K_cap + h, c.p, c.u, p.problem) - objective(K_cap - h, c.p, c.u, p.problem)) / (2 * h)
    assert abs(cap.dual - (-float(dJ_dK) * K_cap / J)) <= DUAL_ATOL
    # and the integer plan's own step when the cap moves by one
    assert cap.integer_step == pytest.approx(integer_optimum(ControlProblem(README, K_cap=K_cap + 1)).value
                                             - p.objective, rel=1e-12)
    assert cap.integer_step < 0


def test_a_plan_inside_its_limits_names_none():
    """Costly D2D rounds and sampling: K and h_s inside their ranges, no limit binds."""
    spec = NetSpec(m=[10, 10, 10], E=[4.2e4, 1.7e4, 8e4], E_d2d=[400.0, 200.0, 1000.0])
    p = plan(ControlProblem(spec, lambdas=(1.0, 0.1, 1e-5), K_cap=49))
    assert 1 < p.K < 49 and any(1 < h < m for h, m in zip(p.h, spec.m))
    assert p.limits == () and p.to_dict()["active_constraints"] == []


def test_the_reduced_route_names_the_limits_without_duals():
    p = plan(ControlProblem(README), method="reduced")
    assert _names(p) == ["K <= K_cap", "every device sampled"]
    assert all(lim.dual is None for lim in p.limits) and "--method gp" in p.limits[0].words
    assert p.limits[0].integer_step < 0


def test_per_subnet_duals_are_lists():
    sol = solve_gp(ControlProblem(README), form="per_subnet")
    assert isinstance(sol.duals["u <= 1"], list) and len(sol.duals["h_s >= 1"]) == 3
    assert abs(sol.duals["K <= K_cap"] - solve_gp(ControlProblem(README)).duals["K <= K_cap"]) <= 2 * DUAL_ATOL
    assert np.all(np.asarray(sol.duals["h_s >= 1"]) >= -1e-9)
