"""Compiled expressions: :func:`sympy.lambdify` to numpy, with the generated code kept on disk.

``lambdify`` prints an expression to Python source, optionally after common-subexpression
elimination, and compiles it; for the expressions of a theorem that is most of the time of
``fedbound bound`` (125 ms of 270 ms for ``sdgt.thm3``, 19 expressions). :func:`lambdify` stores the
generated source and the names it reads (numpy functions, ``functools.reduce``, numbers) in the
on-disk cache (:mod:`fedbound.cache`, invalidated by fedbound's version and source), keyed by the
expression itself (``sympy.srepr`` of the arguments and the expression, and the versions of sympy
and numpy), and later rebuilds the same function by compiling that source. A function whose names
cannot be rebuilt this way is not stored; a cache entry that fails to rebuild is recomputed. An
expression that is itself costly to build (the derivatives of a bound) may be given as a function
that builds it, with a ``key`` that names it: it is built only when the cache has no code for
that key.

Conditions are read as booleans (:func:`_select`): sympy prints a Piecewise nested in a condition
(the derivative of a Min of three or more arguments) as a ``select`` whose 0/1 float result numpy
refuses as a condition of the outer ``select``.
"""
from __future__ import annotations

import builtins
import importlib
import inspect
import numbers
from typing import Callable

import numpy as np
import sympy as sp

from fedbound import cache, validate
from fedbound.errors import ValidationError

_KIND = "lambdify"


def lambdify(symbols: list, expr: object, *, cse: bool = False, key: str | None = None) -> Callable:
    """``sympy.lambdify(symbols, expr, modules="numpy", cse=cse)`` (conditions read as booleans,
    :func:`_select`), its code read from the cache
    when the same expression was compiled before (module doc). ``expr``: a sympy expression or
    (nested) lists of them, or (with ``key``, a text that names the expression among everything
    compiled) a function without arguments that returns one, called only on a cache miss;
    ``symbols``: the sympy symbols of the arguments, in order."""
    # the messages are formatted only on failure: showing a large expression costs milliseconds
    if not all(isinstance(s, sp.Symbol) for s in symbols):
        raise ValidationError(f"symbols must be sympy Symbols, got {validate.show(symbols)}")
    if key is None and callable(expr):
        raise ValidationError("an expression given as a function that builds it needs a key")
    if key is None:
        _check_leaves(expr)
    named = sp.srepr(expr) if key is None else f"named:{key}"
    key = cache.key_of(sp.srepr(list(symbols)), named, str(cse), sp.__version__, np.__version__)
    entry = cache.read_json(_KIND, key)
    if isinstance(entry, dict):
        try:
            return _rebuild(entry, key)
        except Exception:   # noqa: BLE001 - a damaged entry is recomputed (and overwritten)
            pass
    if callable(expr):
        expr = expr()
        _check_leaves(expr)
    fn = sp.lambdify(symbols, expr, modules=[{"select": _select}, "numpy"], cse=cse)
    entry = _portable(fn)
    if entry is not None:
        cache.store_json(_KIND, key, entry)
    return fn


def _select(condlist, choicelist, default=0):
    """``numpy.select`` with every condition read as a boolean array (module doc); a float condition
    that is NaN (a nested Piecewise undefined there) makes the result NaN."""
    conds, undefined = [], None
    for c in condlist:
        c = np.asarray(c)
        if c.dtype != bool:
            nan = np.isnan(c)
            undefined = nan if undefined is None else undefined | nan
            c = (c != 0) & ~nan
        conds.append(c)
    out = np.select(conds, choicelist, default)
    return out if undefined is None else np.where(undefined, np.nan, out)


def _check_leaves(expr: object) -> None:
    if not all(isinstance(leaf, sp.Basic) for leaf in _leaves(expr)):
        raise ValidationError(f"expr must be a sympy expression or lists of them, got "
                              f"{validate.show(expr)}")


def _leaves(expr: object):
    """The entries of nested lists (``expr`` itself when it is not a list)."""
    if isinstance(expr, (list, tuple)):
        for item in expr:
            yield from _leaves(item)
    else:
        yield expr


def _names(code) -> set[str]:
    """Every name a code object and the code objects inside it read."""
    out = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            out |= _names(const)
    return out


def _portable(fn: Callable) -> dict | None:
    """The source of ``fn`` and, for each global name it reads, how to get the value back (a module,
    an attribute of a module, or a number); None when a value cannot be described so."""
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return None
    names = {}
    for name in sorted(_names(fn.__code__)):
        if name not in fn.__globals__:
            continue
        value = fn.__globals__[name]
        if inspect.ismodule(value):
            names[name] = ["module", value.__name__]
        elif isinstance(value, numbers.Number) and not isinstance(value, bool):
            names[name] = ["number", repr(complex(value)) if isinstance(value, complex)
                           else float(value)]
        else:
            module, attr = getattr(value, "__module__", None), getattr(value, "__name__", None)
            try:
                found = getattr(importlib.import_module(module), attr)
                # the module's attribute may be the guard's wrapper of it (fedbound.guard): the
                # same function with its arguments checked at the boundary
                same = found is value or getattr(found, "__wrapped__", None) is value
            except (ImportError, TypeError, AttributeError, ValueError):
                same = False
            if not same:
                return None
            names[name] = ["attribute", module, attr]
    return {"source": source, "function": fn.__name__, "names": names}


def _rebuild(entry: dict, key: str) -> Callable:
    """The function of a cache entry written by :func:`_portable`."""
    namespace: dict = {"__builtins__": builtins}
    for name, (how, *where) in entry["names"].items():
        if how == "module":
            namespace[name] = importlib.import_module(where[0])
        elif how == "number":
            namespace[name] = complex(where[0]) if isinstance(where[0], str) else where[0]
        elif how == "attribute":
            namespace[name] = getattr(importlib.import_module(where[0]), where[1])
        else:
            raise ValueError(f"unknown kind {how!r}")
    exec(compile(entry["source"], f"<fedbound-lambdify-{key}>", "exec"), namespace)   # noqa: S102
    return namespace[entry["function"]]
