"""Moved to :mod:`fedbound.control.sdgt.gp`; this alias keeps the names that fedbound/cli/control_cmd.py
and benchmarks/ import from the old path (remove it once they import fedbound.control.sdgt.gp)."""
from fedbound.control.sdgt.gp import FORMS  # noqa: F401
