"""A certified method: its options, its algorithm and its theory (issue 13), an entry of the one
registry (:mod:`fedbound.registry`).

A :class:`Method` names an algorithm, declares its options (:class:`fedbound.registry.Option`,
validated through :mod:`fedbound.validate`; ``fedbound pep METHOD`` builds its flags from them), the
function class (``setting``: n, L, mu, weights, nonconvex), the conditions between options
(``conditions``: mu < L, gamma L <= 4, ...), the algorithm ``build(env, cfg)`` written once for all
backends (:mod:`fedbound.pep.env`), the family of explicit quadratic instances its lower bound is
searched over (``family``) and the papers' bound where one exists (``theory`` -> :class:`Theory`;
:class:`ResultTheory` reads it off a registered result of :mod:`fedbound.theory`). Each module of
:mod:`fedbound.pep.methods` registers its methods in :data:`PEP_METHODS` where they are defined; a
method of a federated round is built from its description (:mod:`fedbound.pep.rounds`).

Options are made by :func:`option` from the registry's constructors (numbers, integers, choices)
and two of this module: :func:`integers_option` (a list of integers, comma-separated on the command
line) and :func:`matrix_option` (a matrix, JSON rows on the command line). Their flags are ``--``
+ the name with dashes (``--lam-lo``); the spellings of before the one vocabulary, the name as
written (``--lam_lo``), still work and warn.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from fedbound import validate
from fedbound.argtypes import Count
from fedbound.errors import InputTypeError, ValidationError, require
from fedbound.registry import Entry, Option, Registry


def option(make: Callable[..., Option], name: str, help: str, default: object, **fields) -> Option:
    """The option ``name`` made by ``make`` (:func:`fedbound.registry.number_option`,
    :func:`~fedbound.registry.integer_option`, :func:`~fedbound.registry.choice_option`,
    :func:`integers_option`, :func:`matrix_option`) with ``default`` (shown in the help where there
    is one) and, for a name or an old name (``aliases``) with underscores, its flag as written
    (``--lam_lo``, ``--mu_prox``), the spelling of before the one vocabulary, as deprecated."""
    spellings = (name, *fields.get("aliases", ()))
    return make(name, help if default is None else f"{help} (default {default})", default=default,
                alias_flags=tuple(f"--{s}" for s in spellings if "_" in s), **fields)


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
    conditions hold at these options (``applies``) and a note (the condition that fails). At
    traced options (:mod:`fedbound.theory.certify.trace`) ``value`` is the exact bound (a traced
    number) and ``applies`` is decided exactly."""

    value: float
    source: str
    applies: bool
    note: str = ""


@dataclass(frozen=True)
class ResultTheory:
    """The theory side from a registered result (:func:`fedbound.theory.get`, a
    :class:`~fedbound.theory.result.Result` with a bound): called with a method's validated options
    ``cfg`` (as ``Method.theory``), it evaluates the bound of ``result`` (variant ``variant``, the
    result's default where None) at the constants read from the options and returns a
    :class:`Theory`: ``value`` the bound, ``applies`` whether every step-size condition
    (``variable <= cap``) and predicate of the variant holds there, ``note`` the failing ones
    ("conditions fail: <names>", their names in the result).

    ``constants`` maps the options to the result's constants: a dict option name -> constant name
    (``{"lr": "gamma", "local_steps": "K", "rounds": "T"}``), or a callable cfg -> {constant: value} for
    constants computed from several options; ``fixed`` gives further constants fixed values
    (``{"sigma": 0.0}``). The result must bound the method's metric (for a round method
    ||x_R - x*||^2 with ||x0 - x*||^2 <= 1, :mod:`fedbound.pep.rounds`); every variable of its step
    conditions must be given (else the conditions could not be checked: an error). ``source`` is
    the Theory's source text (default: id, variant and provenance of the result).
    """

    result: str
    constants: Mapping | Callable[[dict], Mapping[str, float]]   # names checked by __post_init__
    variant: str | None = None
    fixed: Mapping = field(default_factory=dict)                # values checked by __post_init__
    source: str = ""

    def __post_init__(self):
        require(isinstance(self.result, str) and self.result.strip() != "",
                f"ResultTheory.result must be a result id (fedbound.theory.get), got {validate.show(self.result)}")
        if not callable(self.constants):
            require(isinstance(self.constants, Mapping) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in self.constants.items()),
                f"ResultTheory.constants must map option names to constant names (a dict of str), or be "
                f"a callable cfg -> constants, got {validate.show(self.constants)}")
        require(isinstance(self.fixed, Mapping) and all(isinstance(k, str) for k in self.fixed),
                f"ResultTheory.fixed must map constant names to values, got {validate.show(self.fixed)}")
        for name, value in self.fixed.items():
            validate.number(f"ResultTheory.fixed[{name!r}]", value)

    def options(self) -> tuple[str, ...]:
        """The options a dict mapping reads (none for a callable)."""
        return () if callable(self.constants) else tuple(self.constants)

    def __call__(self, cfg: dict) -> Theory:
        # imported here: fedbound.theory needs sympy, which `import fedbound.pep` does not load
        from fedbound.theory.certify.trace import is_traced
        from fedbound.theory.registry import get

        result = get(self.result)
        given = dict(self.constants(cfg)) if callable(self.constants) else \
            {constant: cfg[option] for option, constant in self.constants.items()}
        ev = result.evaluate(self.variant, **{**self.fixed, **given})
        variant = result.variant(self.variant)
        if is_traced(*given.values()):
            return self._exact(result, variant, ev)
        unchecked = [str(c) for c in variant.conditions if c.name not in ev.conditions_hold]
        require(not unchecked and ev.bound is not None,
                f"{result.id} ({variant.name}): " + (f"its step conditions {', '.join(unchecked)} need "
                f"their variables among the constants" if unchecked else "it states no bound"))
        failing = [name for held in (ev.conditions_hold, ev.predicates) for name, ok in held.items()
                   if not bool(ok)]
        return Theory(float(ev.bound), self.source or f"{result.id} ({variant.name}), {result.provenance}",
                      not failing, "conditions fail: " + ", ".join(failing) if failing else "")

    def _exact(self, result, variant, ev) -> Theory:
        """The Theory at traced options (the certifier's exact numbers): the exact bound, each step
        condition decided exactly on the exact caps; predicates are not evaluated exactly
        (:func:`fedbound.theory.evaluation.traced`), so a variant with predicates is Untraceable."""
        from fedbound.theory.certify.trace import Untraceable
        from fedbound.theory.variant import RELATIONS

        unchecked = [str(c) for c in variant.conditions if c.name not in ev.caps or c.variable_name not in ev.values]
        if variant.predicates or ev.bound is None or unchecked:
            raise Untraceable(f"{result.id} ({variant.name}): " + (
                "its predicates are not decided exactly" if variant.predicates else "it states no bound"
                if ev.bound is None else f"its step conditions {', '.join(unchecked)} need their variables"))
        failing = [c.name for c in variant.conditions
                   if not np.all(RELATIONS[c.relation](ev.values[c.variable_name], ev.caps[c.name]))]
        return Theory(np.asarray(ev.bound, dtype=object).item(),
                      self.source or f"{result.id} ({variant.name}), {result.provenance}", not failing,
                      "conditions fail: " + ", ".join(failing) if failing else "")


def no_theory(cfg: dict) -> None:
    """The theory of a method without one: none at any options."""
    return None


def no_conditions(cfg: dict) -> None:
    """The conditions of a method whose options are independent: none."""
    return None


@dataclass(frozen=True, repr=False)
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
    theory: Callable[[dict], Theory | None] = no_theory
    conditions: Callable[[dict], None] = no_conditions
    doc: str = field(default="", repr=False)

    def config(self, **given) -> dict:
        """Validated options by name (an old name warns and is renamed): unknown names refused,
        defaults filled in (None for an option without one), then the conditions between them."""
        old = {alias for o in self.options for alias in o.aliases}
        validate.known_names(f"option of pep {self.name}", [g for g in given if g not in old],
                             [o.name for o in self.options])
        cfg = {**dict.fromkeys(o.name for o in self.options), **self.check(given)}
        self.conditions(cfg)
        return cfg


#: the certified methods, by name
PEP_METHODS: Registry[Method] = Registry("pep method", Method, packages=("fedbound.pep",))
register = PEP_METHODS.register


def stochastic_matrix(name: str, W: np.ndarray, n: Count) -> np.ndarray:
    """A doubly stochastic n x n matrix (rows and columns sum to 1), else a ValidationError."""
    if W.shape != (n, n):
        raise ValidationError(f"{name} must be {n} x {n}, got shape {W.shape}")
    if not (np.allclose(W.sum(0), 1, atol=1e-9) and np.allclose(W.sum(1), 1, atol=1e-9)):
        raise ValidationError(f"{name} must be doubly stochastic (rows and columns summing to 1)")
    return W


__all__ = ["Method", "Theory", "ResultTheory", "PEP_METHODS", "register", "option", "integers_option",
           "matrix_option", "stochastic_matrix"]
