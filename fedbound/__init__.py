"""fedbound: convergence theory of federated and semi-decentralized optimization as executable,
verified objects (theory/, control/, algorithms/), fed by network/ and tasks/ and joined by verify/.

One short entry per job (:mod:`fedbound.api`, loaded on first use so that ``import fedbound``
stays fast): :func:`evaluate` a bound, :func:`max_step` the largest step size, :func:`plan` the
controller's plan, :func:`run` an algorithm, :func:`audit` a paper, :func:`verify_theory` against
runs, :func:`certify` a PEP certificate, :func:`sweep_grid` a grid of runs.

>>> import fedbound
>>> fedbound.max_step("sdgt.thm2", K=5, L=1.0, p=0.64, q=0.5).binding
'thm2 (83a)'

See DESIGN.md in the shared folder and README.md for the layout and data flow.
"""
from fedbound import guard
guard.install()  # every fedbound.* module imported from here on checks its public arguments

import importlib  # noqa: E402

from fedbound import deprecation  # noqa: E402
from fedbound.errors import (  # noqa: E402
    FedboundError, ValidationError, DivergenceError, SolverError, UnknownNameError,
)

deprecation.install()

from fedbound.version import __version__  # noqa: E402

#: the job entries, defined in fedbound.api (floor 4) and loaded on first use (PEP 562)
JOBS = ("evaluate", "max_step", "plan", "run", "audit", "verify_theory", "certify", "sweep_grid")

__all__ = [*JOBS, "FedboundError", "ValidationError", "DivergenceError", "SolverError",
           "UnknownNameError", "__version__"]


def __getattr__(name: str):
    if name in JOBS:
        return getattr(importlib.import_module("fedbound.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names: the jobs, the errors, the version and the subpackages."""
    return guard.public_names(__name__, __all__, __path__)
