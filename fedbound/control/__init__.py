"""fedbound.control: optimization problems that choose hyperparameters, one subpackage per paper.

* :mod:`fedbound.control.sdgt`: SD-GT's co-optimization controller (seed 003, problem (31),
  Algorithm 2): network spec, objective, geometric program, certified integer plan, estimators,
  closed loop.

The SD-GT controller's names are re-exported here (``from fedbound.control import plan``), each
loaded on first use (the GP imports cvxpy, the closed loop torch).
"""
from fedbound.control import sdgt

__all__ = list(sdgt.__all__)


def __getattr__(name: str):
    """The SD-GT controller's names, from :mod:`fedbound.control.sdgt` on first use."""
    if name in sdgt.__all__:
        return getattr(sdgt, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
