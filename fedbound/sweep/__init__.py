"""fedbound.sweep: grids of runs (algorithms x options x seeds) from one SPEC, embedded or on Ray,
into a resumable SQLite results store, with seeds batched where the algorithm allows, and a report
(mean and 95% CI over seeds per configuration, plots against rounds and communicated floats); and
the same grids from Python (:func:`evaluate`, :func:`runs`) for notebooks and Monte-Carlo checks.

Modules: :mod:`~fedbound.sweep.grid` (crossed and zipped grids), :mod:`~fedbound.sweep.spec` (the
SPEC and its cells), :mod:`~fedbound.sweep.store` (the database), :mod:`~fedbound.sweep.batch`
(seeds stacked like clients), :mod:`~fedbound.sweep.executor` (embedded or Ray, chosen with
:func:`using`), :mod:`~fedbound.sweep.runner` (a SPEC into the store),
:mod:`~fedbound.sweep.evaluation` (Python grids), :mod:`~fedbound.sweep.report` (table and plots).
"""
from fedbound.deprecation import renamed_attributes
from fedbound.sweep.evaluation import Measurements, evaluate, runs
from fedbound.sweep.executor import Executor, using
from fedbound.sweep.runner import Summary, collect, run_sweep
from fedbound.sweep.spec import Cell, Spec, load, loads, parse

#: the one name before issue 20, when theory's evaluations had the same name
__getattr__ = renamed_attributes(__name__, {"Evaluation": "fedbound.sweep.evaluation:Measurements"})

__all__ = ["Spec", "Cell", "parse", "load", "loads", "run_sweep", "collect", "Summary", "evaluate",
           "runs", "Measurements", "Executor", "using"]
