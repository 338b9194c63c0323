"""A certified method: its options, its algorithm and its theory (issue 13).

A :class:`Method` names an algorithm, declares its :class:`Option` s (validated through
:mod:`fedbound.validate`; the CLI ``fedbound pep`` builds its flags from them), the function class
(``setting``: n, L, mu, weights, nonconvex), the algorithm ``build(env, cfg)`` written once for all
backends (:mod:`fedbound.pep.env`), the family of explicit quadratic instances its lower bound is
searched over (``family``) and the papers' bound where one exists (``theory`` -> :class:`Theory`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from fedbound import validate
from fedbound.errors import InputTypeError, ValidationError


@dataclass(frozen=True)
class Option:
    """One option: ``kind`` is int, float, ints (comma-separated integers), matrix (JSON rows) or
    choice; ``low``/``high`` bound numbers (``low_open``: strictly above ``low``)."""

    name: str
    kind: str
    default: object
    help: str
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    choices: tuple[str, ...] = ()

    def check(self, value):
        """The validated value (``None`` stays ``None`` for options without a default)."""
        if value is None:
            return None
        if self.kind == "int":
            return validate.integer(self.name, value, low=None if math.isinf(self.low) else int(self.low),
                                    high=None if math.isinf(self.high) else int(self.high))
        if self.kind == "float":
            return validate.number(self.name, value, low=self.low, high=self.high, low_open=self.low_open)
        if self.kind == "choice":
            return validate.one_of(self.name, value, self.choices)
        if self.kind == "ints":
            items = value.split(",") if isinstance(value, str) else value
            if isinstance(items, (int, float)) or not len(items):
                raise InputTypeError(f"{self.name} must be a comma-separated list of integers, got {validate.show(value)}")
            return [validate.integer(f"{self.name}[{i}]", _int_text(v, self.name), low=int(self.low),
                                     high=None if math.isinf(self.high) else int(self.high))
                    for i, v in enumerate(items)]
        if self.kind == "matrix":
            data = validate.parse_json(self.name, value) if isinstance(value, (str, bytes)) else value
            return validate.real_array(self.name, data, ndim=2)
        raise ValueError(f"unknown option kind {self.kind}")


def _int_text(v, name: str):
    if isinstance(v, str):
        try:
            return int(v.strip())
        except ValueError:
            raise InputTypeError(f"{name} must be a comma-separated list of integers, got {validate.show(v)}") from None
    return v


@dataclass(frozen=True)
class Theory:
    """A paper's bound on the certified metric: ``value``, where it comes from, whether its
    conditions hold at these options (``applies``) and a note (the condition that fails)."""

    value: float
    source: str
    applies: bool
    note: str = ""


@dataclass(frozen=True)
class Method:
    """See the module doc. ``setting(cfg)`` -> dict(n, L, mu, weights, nonconvex);
    ``family(cfg)`` -> dict of the lower-bound family (zero_g, shared_h, h_low, lam)."""

    name: str
    summary: str
    options: tuple[Option, ...]
    setting: Callable[[dict], dict]
    build: Callable
    family: Callable[[dict], dict]
    theory: Callable[[dict], Theory | None] = lambda cfg: None
    check: Callable[[dict], None] = lambda cfg: None
    doc: str = field(default="", repr=False)

    def config(self, **given) -> dict:
        """Validated options: defaults filled in, unknown names refused."""
        validate.known_names(f"option of pep {self.name}", given, [o.name for o in self.options])
        cfg = {o.name: o.check(given.get(o.name, o.default)) for o in self.options}
        self.check(cfg)
        return cfg


def stochastic_matrix(name: str, W: np.ndarray, n: int) -> np.ndarray:
    """A doubly stochastic n x n matrix (rows and columns sum to 1), else a ValidationError."""
    if W.shape != (n, n):
        raise ValidationError(f"{name} must be {n} x {n}, got shape {W.shape}")
    if not (np.allclose(W.sum(0), 1, atol=1e-9) and np.allclose(W.sum(1), 1, atol=1e-9)):
        raise ValidationError(f"{name} must be doubly stochastic (rows and columns summing to 1)")
    return W

