"""The guard: every public function and class of fedbound checks its arguments at the boundary.

Each parameter's annotation is its declaration (:mod:`fedbound.argtypes` adds ranges to plain
types); :func:`guard_module` wraps the public functions of a module, and the ``__init__``,
``__call__`` and public methods of its public classes, so that a call from outside fedbound checks
every argument it passes through :mod:`fedbound.validate` before the body runs. A wrong kind is an
:class:`~fedbound.errors.InputTypeError`, a value out of range a
:class:`~fedbound.errors.ValidationError`, both naming the function, the argument, the value and
what was expected. Calls made from inside a guarded call are not checked again (the boundary is
checked once), so the inner loops pay one attribute read.

:func:`install` makes every ``fedbound.*`` module guarded as it is imported (an import hook set up
by ``fedbound/__init__.py``), so a new module, function or option is covered without being listed;
the fuzz suite (tests/fuzz/test_fuzz_public_api.py) walks the same public listing.

What an annotation means (``typing.Annotated`` metadata with a ``check(name, value)`` runs after the
kind check):

=====================  ==========================================================================
``float``              a finite real number (an infinite one only where the default is infinite)
``int`` / ``bool``     an integer (``3.0`` too) / ``True`` or ``False``
``str`` / ``bytes``    an instance of it
``np.ndarray``         anything numpy turns into a finite real array
``torch.Tensor``       a tensor with finite entries
a class                an instance of it (a ``typing.Protocol`` is not checked)
``X | Y``, ``X | None``  one of them
``list[X]``, ``tuple[X, ...]``, ``Sequence[X]``  a list or tuple (not a string) of X's
``dict[K, V]``, ``Mapping[K, V]``  a mapping of K's to V's
``Iterable[X]``        an iterable (not a string); X checked where it is a list or tuple
``Callable``           a callable
``Literal[...]``       one of the values
``Any``, ``object``, no annotation   anything
=====================  ==========================================================================
"""
from __future__ import annotations

import collections.abc as abc
import dataclasses
import functools
import importlib.abc
import importlib.machinery
import inspect
import math
import numbers
import os
import pkgutil
import sys
import threading
import types
import typing
from typing import Callable

import numpy as np

from fedbound import validate
from fedbound.errors import FedboundError, InputTypeError, UnknownNameError, ValidationError

_state = threading.local()

#: modules never guarded: the guard itself, and the CLI (which checks its command lines through the
#: same validators and calls the guarded API)
UNGUARDED = ("fedbound.guard", "fedbound.cli", "fedbound.__main__")

_SEQUENCES = (list, tuple, abc.Sequence, abc.MutableSequence, abc.Collection)
_MAPPINGS = (dict, abc.Mapping, abc.MutableMapping)
_ITERABLES = (abc.Iterable, abc.Iterator, set, frozenset, abc.Set)


class _KindMessage:
    """``NAME must be WHAT, got VALUE``, with VALUE shown only when the message is read: a Union
    tries its arms in turn and discards the failures of all but the last (showing a large sympy
    matrix costs 16 ms)."""

    def __init__(self, name: str, value, what: str):
        self.parts = (name, value, what)

    def __str__(self) -> str:
        name, value, what = self.parts
        return f"{name} must be {what}, got {validate.show(value)}"


def _kind_error(name: str, value, what: str) -> InputTypeError:
    return InputTypeError(_KindMessage(name, value, what))


def _article(noun: str) -> str:
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def _describe(tp) -> str:
    """The annotation in words, for an error message ("a fedbound Task or None")."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _describe(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(tp))
    if tp is type(None):
        return "None"
    words = {float: "a real number", int: "an integer", bool: "True or False", str: "a string",
             bytes: "bytes", np.ndarray: "a real array"}
    if tp in words:
        return words[tp]
    if origin in _SEQUENCES or tp in (list, tuple):
        return "a list or tuple"
    if origin in _MAPPINGS or tp in (dict, abc.Mapping):
        return "a mapping (dict)"
    if origin is abc.Callable or tp in (abc.Callable, typing.Callable):
        return "a callable (function)"
    if origin in _ITERABLES:
        return "an iterable"
    name = getattr(tp, "__name__", None) or str(tp)
    module = getattr(tp, "__module__", "") or ""
    if module.startswith("fedbound."):
        return f"a fedbound {name}"
    if module == "torch" and name == "Tensor":
        return "a torch tensor"
    return _article(name)


def check_value(name: str, value: object, tp: object, *, allow_inf: bool = False,
                nonfinite: bool = False) -> None:
    """Check ``value`` against the annotation ``tp`` (see the module's table); raise a FedboundError
    naming ``name`` if it does not fit. ``allow_inf`` lets infinities through, ``nonfinite`` NaN too
    (measured data under test, :class:`fedbound.argtypes.NonFinite`)."""
    if not isinstance(name, str):
        raise InputTypeError(f"name must be a string, got {validate.show(name)}")
    if tp is None or tp is typing.Any or tp is object or isinstance(tp, (str, typing.ForwardRef,
                                                                         typing.TypeVar)):
        return
    if isinstance(tp, dataclasses.InitVar):   # a dataclass's init-only argument: its type
        tp = tp.type
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        nonfinite = nonfinite or any(getattr(m, "nonfinite", False) for m in args[1:])
        scalar = None if nonfinite or args[0] not in (float, int) else \
            next((m for m in args[1:] if hasattr(m, "check_scalar")), None)
        if scalar is not None:   # kind and range in one message ("n must be an integer >= 1")
            scalar.check_scalar(name, value, args[0])
        else:
            check_value(name, value, args[0], allow_inf=allow_inf, nonfinite=nonfinite)
        for meta in args[1:]:
            if meta is not scalar and hasattr(meta, "check"):
                meta.check(name, value)
        return
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return
        arms = [a for a in args if a is not type(None)]
        errors = []
        for arm in arms:
            try:
                check_value(name, value, arm, allow_inf=allow_inf, nonfinite=nonfinite)
                return
            except FedboundError as exc:
                errors.append(exc)
        # the value had the right kind for one arm but was out of its range, or an entry was wrong
        deeper = [e for e in errors if not isinstance(e, InputTypeError)
                  or not str(e).startswith(f"{name} must be")]
        if deeper:
            raise deeper[0]
        raise _kind_error(name, value, _describe(tp))
    if origin is typing.Literal:
        plain = isinstance(value, (str, bytes, int, float, type(None)))
        if not (plain and any(type(value) is type(a) and value == a for a in args)):
            error = UnknownNameError if isinstance(value, str) else InputTypeError
            hint = validate.suggest(value, [a for a in args if isinstance(a, str)]) \
                if isinstance(value, str) else ""
            raise error(f"{name} must be one of {', '.join(map(repr, args))}, "
                        f"got {validate.show(value)}{hint}")
        return
    if tp is type(None):
        if value is not None:
            raise _kind_error(name, value, "None")
        return
    if tp is float and nonfinite:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise _kind_error(name, value, "a real number")
    elif tp is float:
        validate.number(name, value, allow_inf=allow_inf)
    elif tp is int:
        validate.integer(name, value)
    elif tp is bool:
        validate.boolean(name, value)
    elif tp is np.ndarray:
        validate.real_array(name, value, allow_bool=True, finite=not (allow_inf or nonfinite))
    elif origin in _SEQUENCES or tp in (list, tuple):
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, np.ndarray)):
            raise _kind_error(name, value, _describe(tp))
        _check_items(name, value, args)
    elif origin in _MAPPINGS or tp in (dict, abc.Mapping):
        if not isinstance(value, abc.Mapping):
            raise _kind_error(name, value, _describe(tp))
        if len(args) == 2:
            for key, item in value.items():
                check_value(f"{name} key", key, args[0])
                check_value(f"{name}[{key!r}]", item, args[1])
    elif origin in _ITERABLES or tp in (abc.Iterable, set, frozenset):
        if isinstance(value, (str, bytes)) or not isinstance(value, abc.Iterable):
            raise _kind_error(name, value, "an iterable (not a string)")
        if isinstance(value, (list, tuple)):
            _check_items(name, value, args[:1])
    elif origin is abc.Callable or tp is abc.Callable or tp is typing.Callable:
        if not callable(value):
            raise _kind_error(name, value, "a callable (function)")
    elif origin is type or tp is type:
        if not isinstance(value, type):
            raise _kind_error(name, value, "a class")
    elif isinstance(tp, type):
        if getattr(tp, "_is_protocol", False):
            return
        if tp.__module__ == "torch" and tp.__name__ == "Tensor":
            if not isinstance(value, tp):
                raise _kind_error(name, value, "a torch tensor")
            finite = allow_inf or nonfinite or not value.is_floating_point()
            if not (finite or bool(value.isfinite().all())):
                raise ValidationError(f"{name} must be finite, got a tensor with non-finite entries")
        elif not isinstance(value, tp):
            raise _kind_error(name, value, _describe(tp))
    elif origin is None:
        raise InputTypeError(f"the annotation of {name} must be a type, got {validate.show(tp)}")


def _check_items(name: str, items, args) -> None:
    if not args:
        return
    if len(args) == 2 and args[1] is Ellipsis:
        args = args[:1]
    if len(args) == 1:
        for i, item in enumerate(items):
            check_value(f"{name}[{i}]", item, args[0])
    elif len(args) == len(items):
        for i, (item, tp) in enumerate(zip(items, args)):
            check_value(f"{name}[{i}]", item, tp)
    else:
        raise ValidationError(f"{name} must have {len(args)} entries, got {len(items)}")


class _Signature:
    """A function's parameters with their resolved annotations (built at its first guarded call)."""

    def __init__(self, fn, fields_of: type | None = None):
        self.signature = inspect.signature(fn)
        self.hints = _hints(fn) if fields_of is None else _field_hints(fields_of)
        self.allow_inf = {p.name for p in self.signature.parameters.values()
                          if isinstance(p.default, float) and math.isinf(p.default)}
        params = list(self.signature.parameters.values())
        plain = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        #: the parameters' names where every one is positional (else None), and how many of them
        #: have no default: positional arguments alone then bind by position, in order
        self.positional = [p.name for p in params] if plain else None
        self.required = sum(p.default is p.empty for p in params)

    def _bound(self, args, kwargs) -> dict:
        """The arguments by parameter name, as ``Signature.bind`` gives them (a TypeError where it
        raises one); positional arguments alone within the parameters' count bind by position
        without it (2.0 -> 0.4 us for a round's ``step(state)``, measured alone)."""
        names = self.positional
        if not kwargs and names is not None and self.required <= len(args) <= len(names):
            return dict(zip(names, args))
        return self.signature.bind(*args, **kwargs).arguments

    def check(self, qualname: str, args, kwargs) -> None:
        try:
            bound = self._bound(args, kwargs)
        except TypeError as exc:
            raise InputTypeError(f"{qualname}: {exc}") from None
        try:
            for name, value in bound.items():
                tp = self.hints.get(name)
                if tp is None:
                    continue
                kind = self.signature.parameters[name].kind
                inf = name in self.allow_inf
                if kind is inspect.Parameter.VAR_POSITIONAL:
                    for i, item in enumerate(value):
                        check_value(f"{name}[{i}]", item, tp, allow_inf=inf)
                elif kind is inspect.Parameter.VAR_KEYWORD:
                    for key, item in value.items():
                        check_value(key, item, tp, allow_inf=inf)
                else:
                    check_value(name, value, tp, allow_inf=inf)
        except FedboundError as exc:
            raise type(exc)(f"{qualname}: {exc}") from None


class _LazyNames(dict):
    """The names an annotation may use: a module's globals, then the names its ``__getattr__``
    loads on first use (PEP 562: :mod:`fedbound.extend` annotates with types it imports lazily)."""

    def __init__(self, namespace: dict):
        super().__init__()
        self.namespace = namespace

    def __missing__(self, key):
        if key in self.namespace:
            return self.namespace[key]
        lazy = self.namespace.get("__getattr__")
        if callable(lazy):
            try:
                return lazy(key)
            except AttributeError:
                pass
        raise KeyError(key)


def _hints(fn) -> dict:
    """The resolved annotations of ``fn``; an annotation that cannot be resolved is left out."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:  # noqa: BLE001 - a name imported only for type checkers: resolve one by one
        out = {}
        namespace = getattr(fn, "__globals__", {})
        names = _LazyNames(namespace)
        for name, ann in getattr(fn, "__annotations__", {}).items():
            try:
                out[name] = eval(ann, namespace, names) if isinstance(ann, str) else ann  # noqa: S307
            except Exception:  # noqa: BLE001
                continue
        return out


def caller_module(depth: int = 1) -> str:
    """The ``__name__`` of the module ``depth`` calls above the function that asks (1: its caller),
    not counting the guard's own wrappers (a registry records the registering module this way)."""
    depth = validate.integer("depth", depth, low=0)
    frame = sys._getframe(1)
    while depth > 0:
        frame = frame.f_back
        while frame is not None and frame.f_globals.get("__name__") == __name__:
            frame = frame.f_back
        depth -= 1
    return frame.f_globals.get("__name__", "?") if frame is not None else "?"


def _field_hints(cls: type) -> dict:
    """The resolved annotations of the fields of a dataclass or NamedTuple ``cls``, each in the
    module of the class that declares it (an inherited field's names need not be imported by the
    subclass's module)."""
    try:
        return typing.get_type_hints(cls, localns={cls.__name__: cls}, include_extras=True)
    except Exception:  # noqa: BLE001 - a name imported for type checkers only: its field unchecked
        return _hints(cls.__init__)


def guarded(fn: Callable, qualname: str | None = None, fields_of: type | None = None):
    """``fn`` wrapped so that a call from outside fedbound checks its arguments first;
    ``fields_of``: the dataclass or NamedTuple whose constructor ``fn`` is (its fields' annotations
    are the declarations)."""
    if not callable(fn):
        raise InputTypeError(f"fn must be a function, got {validate.show(fn)}")
    if getattr(fn, "__fedbound_guarded__", False):
        return fn
    qualname = qualname or f"{fn.__module__}.{fn.__qualname__}"
    holder = []

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if getattr(_state, "inside", False):
            return fn(*args, **kwargs)
        _state.inside = True
        try:
            if not holder:
                holder.append(_Signature(fn, fields_of))
            holder[0].check(qualname, args, kwargs)
            return fn(*args, **kwargs)
        finally:
            _state.inside = False

    wrapper.__fedbound_guarded__ = True
    return wrapper


def _guard_class(cls) -> None:
    """Guard ``__init__``, ``__call__`` and the public methods that ``cls`` itself defines, and the
    ``__new__`` of a NamedTuple (which builds itself there)."""
    named_tuple = issubclass(cls, tuple) and hasattr(cls, "_fields")
    constructor = "__new__" if named_tuple else "__init__"
    for attr, raw in list(vars(cls).items()):
        if attr.startswith("_") and attr not in (constructor, "__call__"):
            continue
        qual = f"{cls.__module__}.{cls.__qualname__}" + ("" if attr == constructor else f".{attr}")
        fields_of = cls if attr == constructor and (named_tuple or dataclasses.is_dataclass(cls)) \
            else None
        if isinstance(raw, staticmethod):
            setattr(cls, attr, staticmethod(guarded(raw.__func__, qual, fields_of)))
        elif isinstance(raw, classmethod):
            setattr(cls, attr, classmethod(guarded(raw.__func__, qual)))
        elif inspect.isfunction(raw):
            setattr(cls, attr, guarded(raw, qual, fields_of))


def public_names(package: str, exported: abc.Iterable, path: abc.Iterable) -> list[str]:
    """What ``dir()`` of the package ``package`` lists: its public names ``exported`` (its
    ``__all__``, names loaded on first use included) and its public subpackages (found on ``path``
    without importing them), sorted."""
    lists = []
    for what, names in (("exported", exported), ("path", path)):
        if isinstance(names, (str, bytes)) or not isinstance(names, abc.Iterable):
            raise InputTypeError(f"{what} must be a list of strings, got {validate.show(names)}")
        names = list(names)
        if not all(isinstance(x, str) for x in names):
            raise InputTypeError(f"{what} must be a list of strings, got {validate.show(names)}")
        lists.append(names)
    exported, path = lists
    subpackages = {info.name for info in pkgutil.iter_modules(path)
                   if info.ispkg and not info.name.startswith("_")}
    return sorted({*exported, *subpackages})


def _package_dir(module: types.ModuleType):
    """A package's ``__dir__``: :func:`public_names` of its ``__all__`` (else of its own public
    globals)."""
    def __dir__() -> list[str]:
        exported = getattr(module, "__all__", None)
        if exported is None:
            exported = [k for k, v in vars(module).items()
                        if not k.startswith("_") and not isinstance(v, types.ModuleType)]
        return public_names(module.__name__, exported, module.__path__)
    return __dir__


def guard_module(module: types.ModuleType) -> None:
    """Guard the public functions and classes that ``module`` defines (not those it imports); a
    package that defines no ``__dir__`` gets one listing its public names (:func:`public_names`:
    ``dir(fedbound.theory)`` shows ``get``, ``Result``, ... and ``sdgt``, also where the names
    load on first use)."""
    if not isinstance(module, types.ModuleType):
        raise InputTypeError(f"module must be a module, got {validate.show(module)}")
    name = module.__name__
    if hasattr(module, "__path__") and "__dir__" not in vars(module):
        module.__dir__ = _package_dir(module)
    for attr, obj in list(vars(module).items()):
        if attr.startswith("_") or getattr(obj, "__module__", None) != name:
            continue
        if inspect.isfunction(obj):
            setattr(module, attr, guarded(obj))
        elif inspect.isclass(obj) and not issubclass(obj, BaseException) \
                and not getattr(obj, "_is_protocol", False):
            _guard_class(obj)


def _guarded_name(fullname: str) -> bool:
    return fullname.startswith("fedbound.") and not any(
        fullname == u or fullname.startswith(u + ".") for u in UNGUARDED)


class _GuardingLoader(importlib.abc.Loader):
    def __init__(self, inner):
        self.inner = inner

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        guard_module(module)

    def __getattr__(self, attr):  # get_source, get_code, ... as the file loader has them
        return getattr(self.inner, attr)


class _GuardingFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if not _guarded_name(fullname):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None and spec.origin \
                and os.path.basename(spec.origin).endswith(".py"):
            spec.loader = _GuardingLoader(spec.loader)
        return spec


def install() -> None:
    """Guard every ``fedbound.*`` module imported from now on (called once by fedbound/__init__)."""
    if not any(isinstance(f, _GuardingFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _GuardingFinder())
        for name, module in list(sys.modules.items()):   # imported before: the validators, errors
            if _guarded_name(name) and module is not None:
                guard_module(module)


__all__ = ["caller_module", "check_value", "guarded", "guard_module", "public_names", "install", "UNGUARDED"]
