"""The catalogue of results: ``get("sdgt.thm3")``, ``results()``, an entry of the one registry
(:mod:`fedbound.registry`) keyed by result id.

Each result module registers its results where they are defined (``THM3 = register(Result(...))``);
the first look-up imports every module of :mod:`fedbound.theory`, so a module is found by being
there (no list of modules), and ``import fedbound`` stays fast.
"""
from __future__ import annotations

from fedbound.validate import unknown
from fedbound.registry import Registry
from fedbound.theory.result import Result

RESULTS: Registry[Result] = Registry("result", Result, packages=("fedbound.theory",), key="id")
register = RESULTS.register


def get(result_id: str) -> Result:
    """The result ``result_id`` (UnknownNameError with the closest ids, :func:`fedbound.validate.unknown`)."""
    if isinstance(result_id, str) and result_id in RESULTS:
        return RESULTS.get(result_id)
    raise unknown("result", result_id, sorted(RESULTS.known_names()),
                  hint="`fedbound list` lists every result")


def results() -> list[Result]:
    """Every registered result, sorted by id."""
    return sorted(RESULTS.entries(), key=lambda r: r.id)


__all__ = ["RESULTS", "register", "get", "results"]
