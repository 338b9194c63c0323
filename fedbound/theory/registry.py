"""The catalogue of results: ``get("sdgt.thm3")``, ``results()``.

Paper modules register their results at import; :data:`PAPER_MODULES` lists them and is imported
lazily on first look-up so that ``import fedbound`` stays fast.
"""
from __future__ import annotations

import importlib

from fedbound.errors import UnknownNameError
from fedbound.theory.result import Result

#: modules that define and register results, one per paper
PAPER_MODULES = ["fedbound.theory.sdgt.results", "fedbound.theory.fednova.results",
                 "fedbound.theory.fedada2", "fedbound.theory.afga"]

_RESULTS: dict[str, Result] = {}
_loaded = False


def register(result: Result) -> Result:
    if result.id in _RESULTS and _RESULTS[result.id] is not result:
        raise ValueError(f"result {result.id} registered twice")
    _RESULTS[result.id] = result
    return result


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for name in PAPER_MODULES:
            importlib.import_module(name)


def get(result_id: str) -> Result:
    _load()
    try:
        return _RESULTS[result_id]
    except KeyError:
        raise UnknownNameError(
            f"unknown result {result_id!r}; run `fedbound list` (known: {', '.join(sorted(_RESULTS))})"
        ) from None


def results() -> list[Result]:
    _load()
    return [_RESULTS[k] for k in sorted(_RESULTS)]
