"""fedbound: convergence theory of federated and semi-decentralized optimization as executable,
verified objects (theory/, control/, algorithms/), fed by network/ and tasks/ and joined by verify/.

See DESIGN.md in the shared folder and README.md for the layout and data flow.
"""
from fedbound import guard
guard.install()  # every fedbound.* module imported from here on checks its public arguments

from fedbound import deprecation  # noqa: E402
from fedbound.errors import (  # noqa: E402
    FedboundError, ValidationError, DivergenceError, SolverError, UnknownNameError,
)

deprecation.install()

__version__ = "0.1.0"
__all__ = ["FedboundError", "ValidationError", "DivergenceError", "SolverError",
           "UnknownNameError", "__version__"]
