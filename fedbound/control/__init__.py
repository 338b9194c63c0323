"""fedbound.control: optimization problems that choose hyperparameters, one subpackage per paper.

* :mod:`fedbound.control.sdgt`: SD-GT's co-optimization controller (seed 003, problem (31),
  Algorithm 2): network spec, objective, geometric program, certified integer plan, estimators,
  closed loop.

The SD-GT controller's names are re-exported here (``from fedbound.control import plan``); the closed
loop (which imports torch) is loaded on first use.
"""
# the old module paths (fedbound.control.objective, ...), loaded before the names below rebind
# ``objective`` etc. to the functions (a later first import of a submodule would overwrite them)
from fedbound.control import baseline, gp, integer, objective, spec  # noqa: F401
from fedbound.control import sdgt
from fedbound.control.sdgt import (DEFAULT_K_CAP, DEFAULT_LAMBDAS, VARIANTS, Certificate,
                                   ContinuousSolution, ControlProblem, GridChoice, IntegerOptimum,
                                   NetSpec, Plan, best_u, compiled_gp, energy_per_round,
                                   estimate_Gamma, estimate_H, estimate_Y, integer_optimum,
                                   k_minimizer, k_stationary_root, load_spec, objective,
                                   official_grid, participation, plan, reduced_objective,
                                   solve_gp, solve_reduced, spec_from_dict)

__all__ = list(sdgt.__all__)


def __getattr__(name: str):
    """The closed-loop names, from :mod:`fedbound.control.sdgt` on first use (imports torch)."""
    if name in sdgt.__all__:
        return getattr(sdgt, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
