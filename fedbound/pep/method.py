"""A certified method: its options, its algorithm and its theory (issue 13), an entry of the one
registry (:mod:`fedbound.registry`).

A :class:`Method` names an algorithm, declares its options (:class:`fedbound.registry.Option`,
validated through :mod:`fedbound.validate`; ``fedbound pep METHOD`` builds its flags from them), the
function class (``setting``: n, L, mu, weights, nonconvex), the conditions between options
(``conditions``: mu < L, gamma L <= 4, ...), the algorithm ``build(env, cfg)`` written once for all
backends (:mod:`fedbound.pep.env`), the family of explicit quadratic instances its lower bound is
searched over (``family``) and the papers' bound where one exists (``theory`` -> :class:`Theory`).
Each module of :mod:`fedbound.pep.methods` registers its methods in :data:`PEP_METHODS` where they
are defined.

Options are made by :func:`option` from the registry's constructors (numbers, integers, choices)
and two of this module: :func:`integers_option` (a list of integers, comma-separated on the command
line) and :func:`matrix_option` (a matrix, JSON rows on the command line). Their flags are ``--``
+ the name with dashes (``--lam-lo``); the spellings of before the one vocabulary, the name as
written (``--lam_lo``), still work and warn.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from fedbound import validate
from fedbound.errors import InputTypeError, ValidationError
from fedbound.registry import Entry, Option, Registry


def option(make: Callable[..., Option], name: str, help: str, default, **fields) -> Option:
    """The option ``name`` made by ``make`` (:func:`fedbound.registry.number_option`,
    :func:`~fedbound.registry.integer_option`, :func:`~fedbound.registry.choice_option`,
    :func:`integers_option`, :func:`matrix_option`) with ``default`` (shown in the help where there
    is one) and, for a name with underscores, its flag of before (``--lam_lo``) as a deprecated
    spelling."""
    return make(name, help if default is None else f"{help} (default {default})", default=default,
                alias_flags=(f"--{name}",) if "_" in name else (), **fields)


def integers_option(name: str, help: str, *, low: int, high: int, **fields) -> Option:
    """A non-empty list of integers in [low, high]: a sequence, or comma-separated text."""
    def check(label, value):
        items = value.split(",") if isinstance(value, str) else \
            value.tolist() if isinstance(value, np.ndarray) else value
        if not isinstance(items, Sequence) or isinstance(items, (bytes, bytearray)) or not len(items):
            raise InputTypeError(f"{label} must be a comma-separated list of integers, got {validate.show(value)}")
        return [validate.integer(f"{label}[{i}]", _int_text(v, label), low=low, high=high)
                for i, v in enumerate(items)]
    return Option(name, help, check, str, **fields)


def _int_text(v, name: str):
    if isinstance(v, str):
        try:
            return int(v.strip())
        except ValueError:
            raise InputTypeError(f"{name} must be a comma-separated list of integers, got {validate.show(v)}") from None
    return v


def matrix_option(name: str, help: str, **fields) -> Option:
    """A real matrix: an array or nested lists, or JSON rows as text (``[[0.5, 0.5], [0.5, 0.5]]``)."""
    def check(label, value):
        data = validate.parse_json(label, value) if isinstance(value, (str, bytes)) else value
        return validate.real_array(label, data, ndim=2)
    return Option(name, help, check, str, **fields)


@dataclass(frozen=True)
class Theory:
    """A paper's bound on the certified metric: ``value``, where it comes from, whether its
    conditions hold at these options (``applies``) and a note (the condition that fails)."""

    value: float
    source: str
    applies: bool
    note: str = ""


@dataclass(frozen=True)
class Method(Entry):
    """See the module doc. ``setting(cfg)`` -> dict(n, L, mu, weights, nonconvex);
    ``family(cfg)`` -> dict of the lower-bound family (zero_g, shared_h, h_low, lam);
    ``conditions(cfg)`` raises a ValidationError where the options do not fit together (and may
    put an option in canonical form, e.g. a mixing matrix)."""

    name: str
    summary: str
    options: tuple[Option, ...] = field()   # required (field(): not Entry's default ())
    setting: Callable[[dict], dict]
    build: Callable
    family: Callable[[dict], dict]
    theory: Callable[[dict], Theory | None] = lambda cfg: None
    conditions: Callable[[dict], None] = lambda cfg: None
    doc: str = field(default="", repr=False)

    def config(self, **given) -> dict:
        """Validated options by name: unknown names refused, defaults filled in (None for an option
        without one), then the conditions between them."""
        validate.known_names(f"option of pep {self.name}", given, [o.name for o in self.options])
        cfg = {**dict.fromkeys(o.name for o in self.options), **self.check(given)}
        self.conditions(cfg)
        return cfg


#: the certified methods, by name
PEP_METHODS: Registry[Method] = Registry("pep method", Method, packages=("fedbound.pep",))
register = PEP_METHODS.register


def stochastic_matrix(name: str, W: np.ndarray, n: int) -> np.ndarray:
    """A doubly stochastic n x n matrix (rows and columns sum to 1), else a ValidationError."""
    if W.shape != (n, n):
        raise ValidationError(f"{name} must be {n} x {n}, got shape {W.shape}")
    if not (np.allclose(W.sum(0), 1, atol=1e-9) and np.allclose(W.sum(1), 1, atol=1e-9)):
        raise ValidationError(f"{name} must be doubly stochastic (rows and columns summing to 1)")
    return W


__all__ = ["Method", "Theory", "PEP_METHODS", "register", "option", "integers_option",
           "matrix_option", "stochastic_matrix"]
