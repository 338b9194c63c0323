"""fedbound.control.sdgt: SD-GT's co-optimization controller (seed 003, Sec. IV-D, problem (31), Algorithm 2):

* :mod:`~fedbound.control.sdgt.spec`       the network spec (subnet sizes, DS and D2D costs; NET.json);
* :mod:`~fedbound.control.sdgt.objective`  the objective variants (31)/(27)/F24 as numpy functions,
  :class:`ControlProblem`, and the K-stationarity root of (118);
* :mod:`~fedbound.control.sdgt.gp`         (31) as an exact DGP in u_s = 1 - beta_s (cvxpy, DPP, checked),
  by default grouped by subnet size (one term per distinct m_s), or per subnet;
* :mod:`~fedbound.control.sdgt.reduced`    the fast exact nested 1-D route to the same optimum;
* :mod:`~fedbound.control.sdgt.integer`    certified integer (K, h_s) and the :class:`Plan`;
* :mod:`~fedbound.control.sdgt.estimators` Y-hat (28), Gamma-hat (29), H-hat (30);
* :mod:`~fedbound.control.sdgt.baseline`   the released code's grid search, for comparison.
"""
from fedbound.control.sdgt.baseline import GridChoice, official_grid
from fedbound.control.sdgt.estimators import estimate_Gamma, estimate_H, estimate_Y
from fedbound.control.sdgt.gp import ContinuousSolution, compiled_gp, solve_gp
from fedbound.control.sdgt.integer import Certificate, IntegerOptimum, Plan, integer_optimum, plan
from fedbound.control.sdgt.objective import (DEFAULT_K_CAP, DEFAULT_LAMBDAS, VARIANTS, ControlProblem,
                                        best_u, energy_per_round, k_minimizer, k_stationary_root,
                                        objective, reduced_objective)
from fedbound.control.sdgt.reduced import solve_reduced
from fedbound.control.sdgt.spec import NetSpec, load_spec, spec_from_dict
from fedbound.network.sampling import participation

__all__ = [
    "NetSpec", "load_spec", "spec_from_dict",
    "ControlProblem", "DEFAULT_LAMBDAS", "DEFAULT_K_CAP", "VARIANTS", "objective",
    "reduced_objective", "energy_per_round", "best_u", "participation", "k_stationary_root",
    "k_minimizer",
    "ContinuousSolution", "solve_gp", "compiled_gp", "solve_reduced",
    "Certificate", "IntegerOptimum", "Plan", "integer_optimum", "plan",
    "estimate_Y", "estimate_Gamma", "estimate_H", "GridChoice", "official_grid",
]
#: the closed loop (Algorithm 2 inside SD-GT) needs torch and the algorithms: loaded on first use,
#: so that the solver side (and ``fedbound control plan``) does not pay for importing torch
_CLOSED_LOOP = ("ClosedLoop", "ClosedLoopState", "ClosedLoopTrajectory", "RoundLog",
                "Theorem5Interval", "theorem5_interval")
__all__ += list(_CLOSED_LOOP)


def __getattr__(name: str):
    if name in _CLOSED_LOOP:
        from fedbound.control.sdgt import closed_loop
        return getattr(closed_loop, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
