"""Moved to :mod:`fedbound.control.sdgt.objective`; this alias keeps the names that fedbound/cli/control_cmd.py
and benchmarks/ import from the old path (remove it once they import fedbound.control.sdgt.objective)."""
from fedbound.control.sdgt.objective import DEFAULT_K_CAP, DEFAULT_LAMBDAS, VARIANTS, ControlProblem  # noqa: F401
