"""Moved to :mod:`fedbound.control.sdgt.integer`; this alias keeps the names that fedbound/cli/control_cmd.py
and benchmarks/ import from the old path (remove it once they import fedbound.control.sdgt.integer)."""
from fedbound.control.sdgt.integer import METHODS, plan  # noqa: F401
