"""fedbound.control.sdgt: SD-GT's co-optimization controller (seed 003, Sec. IV-D, problem (31), Algorithm 2):

* :mod:`~fedbound.control.sdgt.spec`       the network spec (subnet sizes, DS and D2D costs; NET.json);
* :mod:`~fedbound.control.sdgt.objective`  the objective variants (31)/(27)/F24 as numpy functions,
  :class:`ControlProblem`, and the K-stationarity root of (118);
* :mod:`~fedbound.control.sdgt.gp`         (31) as an exact DGP in u_s = 1 - beta_s (cvxpy, DPP, checked),
  by default grouped by subnet size (one term per distinct m_s), or per subnet;
* :mod:`~fedbound.control.sdgt.reduced`    the fast exact nested 1-D route to the same optimum;
* :mod:`~fedbound.control.sdgt.integer`    certified integer (K, h_s) and the :class:`Plan`;
* :mod:`~fedbound.control.sdgt.limits`     the limits a plan sits on (K = K_cap, every device sampled)
  and what raising each would buy (the GP's dual values);
* :mod:`~fedbound.control.sdgt.estimators` Y-hat (28), Gamma-hat (29), H-hat (30);
* :mod:`~fedbound.control.sdgt.baseline`   the released code's grid search, for comparison.
"""
import importlib

# numpy-only and cheap; imported eagerly because the function ``objective`` shares its name with
# its module (a lazy look-up would find the submodule, which the import system binds here)
from fedbound.control.sdgt.objective import (DEFAULT_K_CAP, DEFAULT_LAMBDAS, METHOD_NAMES, VARIANTS,
                                             ControlProblem, best_u, energy_per_round, k_minimizer,
                                             k_stationary_root, objective, reduced_objective)
from fedbound.control.sdgt.spec import NetSpec, load_spec, spec_from_dict

#: public name -> the submodule that defines it. Everything loads on first use: the GP imports
#: cvxpy (over a second, more where cvxpy finds jax) and the closed loop imports torch, so that
#: importing the package (``fedbound run``'s option parser, ``fedbound control plan --help``) pays
#: for neither.
_WHERE = {
    "GridChoice": "baseline", "official_grid": "baseline",
    "estimate_Gamma": "estimators", "estimate_H": "estimators", "estimate_Y": "estimators",
    "ContinuousSolution": "gp", "compiled_gp": "gp", "solve_gp": "gp",
    "Certificate": "integer", "IntegerOptimum": "integer", "Plan": "integer",
    "integer_optimum": "integer", "plan": "integer", "Limit": "limits", "active_limits": "limits",
    "solve_reduced": "reduced",
    "ClosedLoop": "closed_loop", "ClosedLoopState": "closed_loop",
    "ClosedLoopTrajectory": "closed_loop", "RoundLog": "closed_loop",
    "Theorem5Interval": "closed_loop", "theorem5_interval": "closed_loop",
}

__all__ = [
    "NetSpec", "load_spec", "spec_from_dict",
    "ControlProblem", "DEFAULT_LAMBDAS", "DEFAULT_K_CAP", "VARIANTS", "objective",
    "reduced_objective", "energy_per_round", "best_u", "participation", "k_stationary_root",
    "k_minimizer",
    "ContinuousSolution", "solve_gp", "compiled_gp", "solve_reduced",
    "Certificate", "IntegerOptimum", "Plan", "integer_optimum", "plan", "Limit", "active_limits",
    "estimate_Y", "estimate_Gamma", "estimate_H", "GridChoice", "official_grid",
]
__all__ += ["METHOD_NAMES", "ClosedLoop", "ClosedLoopState", "ClosedLoopTrajectory", "RoundLog",
            "Theorem5Interval", "theorem5_interval"]


def __getattr__(name: str):
    if name == "participation":
        from fedbound.network.sampling import participation
        return participation
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
