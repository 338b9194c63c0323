"""Fuzz of every public function and class of fedbound (issue 23), generated from the public listing:
everything a user can import without a leading underscore, found by walking the package, so that a
new module, function, class or parameter is covered without being listed here.

Two contracts:

* every parameter of every public function, class and public method is declared (annotated): the
  annotations are what :mod:`fedbound.guard` checks at the boundary;
* a call with a bad value (NaN, infinity, a complex number, an object of no known type, None, a
  junk string, -1) in any parameter raises a one-line FedboundError or returns a result without NaN
  (fuzz_values.outcome); NaN, complex numbers and unknown objects must be refused wherever the
  parameter is declared with a type that excludes them.
"""
from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
import typing

import pytest

import fedbound
from fuzz_values import Opaque, outcome

#: modules that are no API: the command line (fuzzed by test_fuzz_cli.py through its parser), the
#: entry point, and the plugin template (text that `fedbound new plugin` writes out)
NOT_API = ("fedbound.cli", "fedbound.__main__", "fedbound.extend.plugin_template")


def _is_api_module(name: str) -> bool:
    return not any(name == x or name.startswith(x + ".") for x in NOT_API)


def public_api() -> dict:
    """Every public function and class of fedbound, by qualified name."""
    out = {}
    for info in pkgutil.walk_packages(fedbound.__path__, "fedbound."):
        if not _is_api_module(info.name):
            continue
        module = importlib.import_module(info.name)
        for attr, obj in vars(module).items():
            if attr.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(obj) or (inspect.isclass(obj) and not issubclass(obj, BaseException)):
                out[f"{module.__name__}.{attr}"] = obj
    return out


API = public_api()


def _methods(cls):
    """The public methods (and ``__init__``/``__call__``) that ``cls`` itself defines."""
    for attr, raw in vars(cls).items():
        if attr.startswith("_") and attr not in ("__init__", "__call__"):
            continue
        fn = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
        if inspect.isfunction(fn):
            yield attr, fn


def _declared_functions():
    for qual, obj in API.items():
        if inspect.isfunction(obj):
            yield qual, obj
        elif not getattr(obj, "_is_protocol", False):
            for attr, fn in _methods(obj):
                yield f"{qual}.{attr}", fn


def _undeclared(fn) -> list[str]:
    sig = inspect.signature(inspect.unwrap(fn))
    return [p.name for p in sig.parameters.values()
            if p.annotation is inspect.Parameter.empty and p.name not in ("self", "cls")
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def test_the_listing_is_the_public_api():
    assert len(API) > 400
    assert "fedbound.theory.evaluation.evaluate" in API and "fedbound.sweep.store.Store" in API


def test_every_public_parameter_is_declared():
    missing = {qual: names for qual, fn in _declared_functions() if (names := _undeclared(fn))}
    assert not missing, f"{len(missing)} public callables with parameters without annotation: " + \
        "; ".join(f"{q}({', '.join(n)})" for q, n in sorted(missing.items())[:40])


def test_every_public_callable_is_guarded():
    unguarded = [qual for qual, fn in _declared_functions()
                 if qual.rpartition(".")[0] not in ("fedbound.validate", "fedbound.guard",
                                                     "fedbound.argtypes", "fedbound.errors")
                 and not getattr(fn, "__fedbound_guarded__", False)]
    assert not unguarded, f"not guarded: {unguarded[:20]}"


#: bad values given to every parameter in turn
BAD = (None, math.nan, math.inf, -1, "junk", 1 + 1j, Opaque())


def _hints(fn) -> dict:
    try:
        return typing.get_type_hints(inspect.unwrap(fn), include_extras=True)
    except Exception:  # noqa: BLE001 - a name imported for type checkers only
        return {}


def _excludes(tp, value) -> bool:
    """Whether the declared type ``tp`` certainly excludes ``value`` (NaN, complex, Opaque)."""
    if tp is None or tp is typing.Any or tp is object:
        return False
    if isinstance(value, Opaque):
        return True
    return isinstance(value, complex) or (isinstance(value, float) and math.isnan(value))


def _required(fn) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(fn).parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _keyword_only_required(fn) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(fn).parameters.values()
            if p.default is p.empty and p.kind is p.KEYWORD_ONLY]


def _call(fn, params, bad_index, bad):
    pos = [p for p in params if p.kind is not p.KEYWORD_ONLY]
    kws = [p for p in params if p.kind is p.KEYWORD_ONLY]
    args = [bad if i == bad_index else None for i, _ in enumerate(pos)]
    kwargs = {p.name: (bad if len(pos) + j == bad_index else None) for j, p in enumerate(kws)}
    return args, kwargs


CASES = [(qual, i, j) for qual, obj in sorted(API.items())
         for i in range(max(1, len(_required(obj)) + len(_keyword_only_required(obj))))
         for j in range(len(BAD))]


@pytest.mark.parametrize("qual,index,which", CASES)
def test_bad_value_in_each_parameter(qual, index, which):
    fn = API[qual]
    params = _required(fn) + _keyword_only_required(fn)
    bad = BAD[which]
    if not params:
        return  # nothing required: the optional parameters are covered below
    args, kwargs = _call(fn, params, index, bad)
    tp = _hints(fn.__init__ if inspect.isclass(fn) else fn).get(params[index].name)
    outcome("api-public", fn, *args, invalid=_excludes(tp, bad), **kwargs)


def _optional(fn) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(fn).parameters.values()
            if p.default is not p.empty and p.kind is not p.VAR_KEYWORD]


OPTIONAL_CASES = [(qual, p.name, j) for qual, obj in sorted(API.items()) if not _required(obj)
                  and not _keyword_only_required(obj) for p in _optional(obj) for j in (1, 5, 6)]


@pytest.mark.parametrize("qual,name,which", OPTIONAL_CASES)
def test_bad_value_in_each_option_of_a_callable_without_required_parameters(qual, name, which):
    fn = API[qual]
    bad = BAD[which]
    tp = _hints(fn.__init__ if inspect.isclass(fn) else fn).get(name)
    outcome("api-public", fn, **{name: bad}, invalid=_excludes(tp, bad))


def test_enough_cases():
    assert len(CASES) + len(OPTIONAL_CASES) >= 1000
