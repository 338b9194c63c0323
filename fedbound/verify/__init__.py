"""fedbound.verify: measurement against prediction for SD-GT's theory.

* Monte-Carlo expectations with confidence intervals: :func:`mean_ci`, :func:`monte_carlo`
  (:class:`Estimate`).
* Rate fits with intervals: :func:`fit_log_linear`, :func:`fit_log_log`, :func:`asymptotic_factor`.
* The error quantities of the analysis (E_t, Gamma_t, Y_t, Z_t, Delta_t, seed 003 [L335], [L688])
  from recorded runs: :func:`record_sdgt`, :func:`error_quantities`.
* The exact linear iteration operator of SD-GT on quadratics: :func:`sdgt_operator`, the
  contraction measured on SD-GT's own steps by the power method: :func:`renormalized_contraction`,
  and the exact stationary error under noise: :func:`stationary_moments`.
* The exact affine round map of any algorithm on quadratics, from automatic differentiation of
  its round: :func:`exact_round` (:class:`ExactRound`: fixed point, contraction factor, gap to x*;
  Adam-type and random rounds refused with the reason).
* The theorem constants of a run (the per-paper adapters of :mod:`fedbound.theory.adapters`):
  :func:`run_constants`, :func:`cell_constants` (a sweep's cell); ``sdgt_constants`` is deprecated.
* Verdicts: :class:`Check` (holds / violated / inconclusive, measured, predicted, ratio, slope);
  one-step Lemma 1-6 checks :func:`lemma_checks`; named checks in :mod:`fedbound.verify.checks`
  (fixed-point, server-recursion, linear-rate, thm3-bound, Theorems 1-2 running averages, lemmas,
  noise-floor).

>>> from fedbound.network import Network
>>> from fedbound.tasks import Quadratic
>>> from fedbound.verify import SDGTSetting, fixed_point
>>> task = Quadratic.generate(6, 3, kappa=4.0, mu=0.5, seed=0)
>>> setting = SDGTSetting(task, Network.from_topology("ring", 2, 3), K=2, gamma=0.05, h=2)
>>> fixed_point(setting, rounds=400)[0].status
'holds'
"""
from fedbound.verify.check import (Check, bound_check, equality_check, interval_check,
                                   upper_bound_status)
from fedbound.verify.checks import (SDGTSetting, average_bound, fixed_point, lemma_step, lemmas,
                                    linear_rate, noise_floor, server_recursion, step_for,
                                    thm3_bound, thm3_step)
from fedbound.verify.lemmas import LEMMA_LHS, lemma_check, lemma_checks
from fedbound.verify.contraction import renormalized_contraction
from fedbound.verify.exact import ExactRound, StateLayout, exact_round
from fedbound.verify.montecarlo import Estimate, mean_ci, monte_carlo
from fedbound.verify.operator import LinearOperator, analytic_fixed_point, sdgt_operator
from fedbound.verify.quantities import ErrorQuantities, SDGTRecord, error_quantities, record_sdgt
from fedbound.verify.rates import (SlopeFit, asymptotic_factor, fit_log_linear, fit_log_log,
                                   fit_slope)
from fedbound.verify.setting import cell_constants, run_constants, sdgt_constants
from fedbound.verify.stationary import StationaryMoments, stationary_moments

__all__ = [
    "Estimate", "mean_ci", "monte_carlo", "SlopeFit", "fit_slope", "fit_log_linear", "fit_log_log",
    "asymptotic_factor", "SDGTRecord", "record_sdgt", "ErrorQuantities", "error_quantities",
    "ExactRound", "StateLayout", "exact_round", "LinearOperator", "sdgt_operator",
    "renormalized_contraction", "analytic_fixed_point", "StationaryMoments",
    "stationary_moments", "Check", "bound_check", "equality_check", "interval_check",
    "upper_bound_status", "LEMMA_LHS", "lemma_check", "lemma_checks", "run_constants",
    "cell_constants", "sdgt_constants",
    "SDGTSetting", "fixed_point", "server_recursion", "linear_rate", "thm3_bound", "thm3_step",
    "average_bound", "step_for", "lemmas", "lemma_step", "noise_floor",
]
