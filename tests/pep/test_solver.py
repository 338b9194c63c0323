"""The LMI fix and the fallback chain of fedbound.pep.solver (issue 13)."""
from PEPit.wrappers.cvxpy_wrapper import CvxpyWrapper

from fedbound.pep import solver
from fedbound.pep.certificate import method
from fedbound.pep.symbolic import PepEnv


def built_gt():
    m = method("gt")
    cfg = m.config(n=2, rounds=2, lr=0.5, zeta=0.3, lam_lo=-0.2, lam_hi=0.4)
    env = PepEnv(**m.setting(cfg))
    m.build(env, cfg)
    env.close()
    return env


def equality_rows(wrapper_class) -> int:
    env = built_gt()
    env.problem._prepare_constraints(verbose=0)
    wrapper = wrapper_class(verbose=0)
    wrapper.set_main_variables()
    for matrix in env.problem._list_of_prepared_psd:
        wrapper.send_lmi_constraint_to_solver(matrix)
    return sum(1 for c in wrapper._list_of_solver_constraints if type(c).__name__ == "Equality")


def test_lmi_equalities_written_once():
    steps = 4                                           # GT mixes X and Y at each of T = 2 iterations
    assert equality_rows(CvxpyWrapper) == steps * steps  # PEPit: every off-diagonal entry twice
    assert equality_rows(solver.DeduplicatedCvxpyWrapper) == steps * (steps + 1) // 2


def test_chain_solves_and_points_evaluate():
    env = built_gt()
    sol = solver.solve(env.problem)
    assert sol.status == "optimal" and sol.duality_gap < 1e-6 and sol.gram_size == 13
    assert env.x0.eval().shape == (sol.gram_size,)
    assert [label for label, _ in solver.CHAIN] == ["clarabel", "clarabel+reg1e-7", "scs"]
