"""Client and server optimizers by name, as entries of the one registry (:mod:`fedbound.registry`):
each transform of :mod:`fedbound.algorithms.optim.client` and :mod:`~fedbound.algorithms.optim.server`
registers itself beside its definition with its options (the factory's own keywords, optax-style:
``b1``, ``b2``, ``eps``; the algorithms' options map onto them), their validation and examples.

    >>> from fedbound.algorithms.optim.registry import SERVER_OPTIMIZERS
    >>> t = SERVER_OPTIMIZERS.get("adam").build(lr=0.1)
    >>> t.state_floats(10)
    21
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Callable, Sequence

import numpy as np

from fedbound.algorithms.optim.base import Transform
from fedbound.argtypes import Count, Positive
from fedbound.errors import InputTypeError, require
from fedbound.registry import Entry, Option, Registry, choice_option, integer_option, number_option
from fedbound.validate import boolean, one_of, show


@dataclass(frozen=True, repr=False)
class OptimizerSpec(Entry):
    """An optimizer: ``name``, ``factory(**options) -> Transform``, one-line ``summary``,
    ``options``; ``needs_shapes``: the factory also takes the model's parameter shapes (SM3's
    covers, :attr:`fedbound.tasks.Task.parameter_shapes`)."""

    name: str
    factory: Callable[..., Transform]
    summary: str
    options: tuple[Option, ...] = ()
    needs_shapes: bool = False

    def build(self, shapes: Sequence[Count | Sequence[Count]] | None = None, **options) -> Transform:
        """The transform with ``options`` (validated) (and ``shapes`` where it needs them)."""
        checked = self.check(options)
        if self.needs_shapes:
            require(shapes is not None, f"the {self.name} optimizer needs the parameter shapes")
            return self.factory(shapes=shapes, **checked)
        require(shapes is None, f"the {self.name} optimizer takes no parameter shapes")
        return self.factory(**checked)


CLIENT_OPTIMIZERS: Registry[OptimizerSpec] = Registry(
    "client optimizer", OptimizerSpec, packages=("fedbound.algorithms.optim",), namespace="transform")
SERVER_OPTIMIZERS: Registry[OptimizerSpec] = Registry(
    "server optimizer", OptimizerSpec, packages=("fedbound.algorithms.optim",), namespace="transform")


# ---- the transforms' options, declared once ------------------------------------------------------
def lr_option(default: Positive | None = None) -> Option:
    return number_option("lr", "step size > 0", low=0.0, low_open=True, default=default,
                         required=default is None, examples=(0.05, 0.1))


B1 = number_option("b1", "first-moment decay in [0, 1)", low=0.0, high=1.0, high_open=True,
                   examples=(0.0, 0.9))
B2 = number_option("b2", "second-moment decay in [0, 1)", low=0.0, high=1.0, high_open=True,
                   examples=(0.99, 0.999))
EPS = number_option("eps", "adaptivity epsilon > 0", low=0.0, low_open=True, examples=(1e-8, 1e-3))
BETA = number_option("beta", "momentum factor in [0, 1)", low=0.0, high=1.0, high_open=True,
                     examples=(0.0, 0.9))
DELAY = integer_option("delay", "preconditioner delay z >= 1", low=1, examples=(1, 2))
VARIANT = choice_option("variant", "SM3 variant I or II", ("I", "II"), examples=("I", "II"))

# ---- the switches: declared once here, options of the optimizers AND of the algorithms that use
# them (fedbound.algorithms.options re-exports them; the algorithms' vocabulary calls eps "tau") ----
#: the bias corrections of the adaptive server optimizers, by name (formulas and sources:
#: :func:`fedbound.algorithms.optim.server.uncorrected_step`, ``adam_corrected_step``,
#: ``flower_corrected_step``)
BIAS_CORRECTIONS = ("none", "adam", "flower")


def bias_correction_mode(name: str, value: object) -> str:
    """``value`` as one of :data:`BIAS_CORRECTIONS`: "none" (Reddi et al. 2021, Alg. 2), "adam"
    (Kingma & Ba 2015, Alg. 1), "flower" (Flower's FedAdam). The boolean switch of the server
    optimizers before issue 25 still works: True is "adam", False is "none"."""
    if isinstance(value, (bool, np.bool_)):
        return "adam" if value else "none"
    if not isinstance(value, str):
        raise InputTypeError(f"{name} must be one of {', '.join(BIAS_CORRECTIONS)} (or True / False, "
                             f"meaning adam / none), got {show(value)}")
    return one_of(name, value, BIAS_CORRECTIONS)


@dataclass(frozen=True)
class BiasCorrectionChoice:
    """The declared type of a ``bias_correction`` argument (:mod:`fedbound.argtypes`' constraints):
    one of :data:`BIAS_CORRECTIONS`, or True / False (:func:`bias_correction_mode`)."""

    def check(self, name: str, value: object) -> None:
        bias_correction_mode(name, value)


#: a bias correction of the adaptive server optimizers: "none", "adam" or "flower" (True / False,
#: the switch before issue 25: "adam" / "none")
BiasCorrection = Annotated[object, BiasCorrectionChoice()]

BIAS_CORRECTION = Option(
    "bias_correction", "server bias correction: none (default, Reddi et al.'s FedOpt), adam "
    "(Kingma-Ba, both moments, tau rescaled) or flower (Flower's FedAdam: lr times "
    "sqrt(1 - beta2^(t+1)) / (1 - beta1^(t+1)))", bias_correction_mode, str,
    examples=BIAS_CORRECTIONS, choices=BIAS_CORRECTIONS)
#: the client optimizers' Adam bias correction (Kingma-Ba, on or off; FedAda2's ADMU)
CLIENT_BIAS_CORRECTION = Option("bias_correction", "Kingma-Ba bias correction of both moments",
                                boolean, bool, examples=(True, False))
V0 = number_option("v0", "initial second moment v_0 >= 0 of the adaptive optimizer (default 0; "
                   "Reddi et al. ask v_0 >= tau^2)", low=0.0, examples=(0.0, 1e-6))
EPS_INSIDE_SQRT = Option("eps_inside_sqrt", "adaptivity epsilon (the algorithms' tau) inside the "
                         "square root, sqrt(v + tau) (default outside: sqrt(v) + tau, as Flower)",
                         boolean, bool, examples=(True, False))
NESTEROV = Option("nesterov", "Nesterov momentum (default off: heavy ball, as Flower's FedAvgM)",
                  boolean, bool, examples=(True, False))


__all__ = ["OptimizerSpec", "CLIENT_OPTIMIZERS", "SERVER_OPTIMIZERS", "lr_option", "B1", "B2", "EPS",
           "V0", "BETA", "DELAY", "BIAS_CORRECTIONS", "bias_correction_mode", "BiasCorrectionChoice",
           "BiasCorrection", "BIAS_CORRECTION",
           "CLIENT_BIAS_CORRECTION", "EPS_INSIDE_SQRT", "NESTEROV", "VARIANT"]
