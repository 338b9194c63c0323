"""A grid of configurations: named lists of values, crossed, with "zip" groups paired.

A grid is a mapping ``{name: value or list of values, ..., "zip": group or [groups]}``. A list is
an axis (its values are crossed with every other axis), a single value is fixed, and each zip group
``{name: list, ...}`` holds lists of one length that are paired element by element (one axis).
The configurations are the product of the axes in the grid's order (the last axis varies fastest)::

    >>> configurations(normalize({"gamma": [0.1, 0.2], "K": 5, "zip": {"h": [1, 2], "p": [0.5, 1]}}))
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'gamma': 0.1, 'K': 5, 'h': 1, 'p': 0.5}, {'gamma': 0.1, 'K': 5, 'h': 2, 'p': 1},
     {'gamma': 0.2, 'K': 5, 'h': 1, 'p': 0.5}, {'gamma': 0.2, 'K': 5, 'h': 2, 'p': 1}]

The sweep SPEC's ``grid`` (:mod:`fedbound.sweep.spec`) and the Python grids of
:func:`fedbound.sweep.evaluate` are both read here.
"""
from __future__ import annotations

import itertools
from typing import Callable, Iterable

from fedbound.errors import InputTypeError, require
from fedbound.validate import known_names

ZIP = "zip"
#: the most configurations one grid may expand to
MAX_CONFIGURATIONS = 100_000


def _values(name: str, value) -> list:
    """A grid entry: a non-empty list of values, or one value (fixed)."""
    if isinstance(value, (list, tuple)):
        require(len(value) >= 1, f"grid {name} must list at least one value, got []")
        return list(value)
    require(not isinstance(value, dict), f"grid {name} must be a value or a list of values, got an object")
    return [value]


def _group(g: int, group) -> dict:
    if not isinstance(group, dict):
        raise InputTypeError(f"grid zip group {g} must be an object of lists, got {type(group).__name__}")
    require(len(group) >= 1, f"grid zip group {g} is empty")
    return group


def normalize(grid: dict, known: Iterable[str] | None = None,
              value: Callable[[str, object], object] | None = None) -> dict:
    """``grid`` checked and in canonical form ``{name: [values], "zip": [{name: [values]}, ...]}``.

    Names must be strings (``known``, when given, lists the allowed ones: a misspelled name is an
    error with a did-you-mean); a name appears once, in a zip group or outside; the lists of a zip
    group have one length. ``value(name, v)`` checks and converts each value (default: kept)."""
    if grid is None:
        return {}
    if not isinstance(grid, dict):
        raise InputTypeError(f"grid must be a mapping of names to values, got {type(grid).__name__}")
    for name in grid:
        if not isinstance(name, str):
            raise InputTypeError(f"grid names must be strings, got {name!r:.40}")
    known = None if known is None else sorted(set(known) | {ZIP})
    if known is not None:
        known_names("grid key", grid, known)
    convert = value or (lambda name, v: v)
    clean: dict = {}
    for name, entry in grid.items():
        if name != ZIP:
            clean[name] = [convert(name, v) for v in _values(name, entry)]
            continue
        groups = entry if isinstance(entry, (list, tuple)) else [entry]
        require(len(groups) >= 1, "grid zip must hold at least one group, got []")
        clean[ZIP] = []
        for g, group in enumerate(groups):
            group = _group(g, group)
            for key in group:
                if not isinstance(key, str):
                    raise InputTypeError(f"grid names must be strings, got {key!r:.40}")
                require(key != ZIP, f"grid zip group {g} cannot hold another zip")
                require(key not in grid and all(key not in c for c in clean[ZIP]),
                        f"grid key {key!r} appears twice (in a zip group and elsewhere)")
            if known is not None:
                known_names("grid key", group, [k for k in known if k != ZIP])
            lists = {k: _values(k, v) for k, v in group.items()}
            lengths = {len(v) for v in lists.values()}
            require(len(lengths) == 1, f"grid zip group {g} pairs lists of different lengths "
                                       f"{ {k: len(v) for k, v in lists.items()} }")
            clean[ZIP].append({k: [convert(k, x) for x in v] for k, v in lists.items()})
    return clean


def axes(grid: dict) -> list[list[dict]]:
    """The axes of a normalized grid, in order: each a list of ``{name: value}`` assignments."""
    out = []
    for name, values in grid.items():
        if name == ZIP:
            out.extend([dict(zip(group, vs)) for vs in zip(*group.values())] for group in values)
        else:
            out.append([{name: v} for v in values])
    return out


def size(grid: dict) -> int:
    """The number of configurations of a normalized grid."""
    total = 1
    for axis in axes(grid):
        total *= len(axis)
    return total


def configurations(grid: dict, limit: int = MAX_CONFIGURATIONS) -> list[dict]:
    """Every configuration of a normalized grid (module doc), at most ``limit``."""
    total = size(grid)
    require(total <= limit, f"the grid expands to {total} configurations, more than {limit}")
    return [{k: v for part in combo for k, v in part.items()} for combo in itertools.product(*axes(grid))]


__all__ = ["normalize", "axes", "size", "configurations", "ZIP", "MAX_CONFIGURATIONS"]
