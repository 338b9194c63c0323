"""Moved to :mod:`fedbound.control.sdgt.baseline`; this alias keeps the names that fedbound/cli/control_cmd.py
and benchmarks/ import from the old path (remove it once they import fedbound.control.sdgt.baseline)."""
from fedbound.control.sdgt.baseline import official_grid  # noqa: F401
