"""Moved to :mod:`fedbound.control.sdgt.spec`; this alias keeps the names that fedbound/cli/control_cmd.py
and benchmarks/ import from the old path (remove it once they import fedbound.control.sdgt.spec)."""
from fedbound.control.sdgt.spec import load_spec  # noqa: F401
