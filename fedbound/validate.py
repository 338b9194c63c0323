"""The one validation layer: every value a user hands to fedbound passes through here.

Each checker takes the argument's ``name`` and its ``value``, returns the value in canonical form
(a Python ``float``/``int``, a float64 numpy array, a resolved name) and raises a
:class:`~fedbound.errors.FedboundError` whose message names the argument, the value and the valid
range, in one line:

* :class:`~fedbound.errors.InputTypeError` (also a ``TypeError``) when the value has the wrong kind
  (a string or complex number where a real number is needed, a bool where a number is, a float
  where an integer is);
* :class:`~fedbound.errors.ValidationError` (also a ``ValueError``) when it has the right kind but
  lies outside its range (NaN, inf, negative, too large, wrong shape);
* :class:`~fedbound.errors.UnknownNameError` (also a ``KeyError`` and a ``ValueError``) for a name
  that does not exist, with a did-you-mean suggestion.

Rules shared by every checker: ``bool`` is never a number; NaN is never valid; infinities only where
a checker is told ``allow_inf``; integral floats (``3.0``) are accepted as integers, other floats
are not; numpy scalars and 0-d arrays count as scalars.
"""
from __future__ import annotations

import difflib
import json
import math
import numbers
import os
from typing import Iterable, Sequence

import numpy as np

from fedbound.errors import InputTypeError, UnknownNameError, ValidationError

#: seeds are non-negative integers below 2**63 (what numpy and torch generators both accept)
SEED_LIMIT = 2 ** 63


def _show(value) -> str:
    """A short printable form of a value for an error message, on one line (long reprs are cut)."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def show(value: object) -> str:
    """A short printable form of a value for an error message (public alias of the checkers' own)."""
    return _show(value)


def _interval(low: float, high: float, low_open: bool, high_open: bool) -> str:
    """The range as words: ``> 0``, ``>= 1``, ``<= 5`` or ``in [0, 1)``; ``a real number`` if none."""
    def fmt(x: float) -> str:
        return f"{x:g}"
    if math.isinf(low) and math.isinf(high):
        return "a finite real number"
    if math.isinf(high):
        return f"{'>' if low_open else '>='} {fmt(low)}"
    if math.isinf(low):
        return f"{'<' if high_open else '<='} {fmt(high)}"
    return f"in {'(' if low_open else '['}{fmt(low)}, {fmt(high)}{')' if high_open else ']'}"


def _is_bool(value) -> bool:
    return isinstance(value, (bool, np.bool_))


def _scalar(value):
    """A 0-d array or numpy scalar as the Python scalar it holds; anything else unchanged."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    if isinstance(value, np.generic):
        return value.item()
    return value


def number(name: str, value: object, *, low: float = -math.inf, high: float = math.inf,
           low_open: bool = False, high_open: bool = False, allow_inf: bool = False) -> float:
    """A real number in the interval from ``low`` to ``high`` (ends open where told), as ``float``
    (a zero as +0.0).

    Strings, complex numbers, bools and None are :class:`InputTypeError`; NaN, infinities (unless
    ``allow_inf``), values outside the interval and integers too large for a float are
    :class:`ValidationError`.
    """
    value = _scalar(value)
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise InputTypeError(f"{name} must be a real number, got {_show(value)}")
    try:
        x = float(value)
    except OverflowError:
        raise ValidationError(f"{name} must be a real number of float range, got an integer "
                              f"with {len(str(abs(int(value))))} digits") from None
    where = _interval(low, high, low_open, high_open)
    if math.isnan(x):
        raise ValidationError(f"{name} must be {where}, got nan")
    if math.isinf(x) and not allow_inf:
        raise ValidationError(f"{name} must be finite and {where}, got {x}"
                              if where != "a finite real number" else f"{name} must be finite, got {x}")
    ok = (x > low if low_open else x >= low) and (x < high if high_open else x <= high)
    if not ok:
        raise ValidationError(f"{name} must be {where}, got {x:g}")
    return x + 0.0   # -0.0 as 0.0: numpy's samplers refuse a scale of -0.0 ("scale < 0"; found by the fuzz suite)


def integer(name: str, value: object, *, low: int | None = None, high: int | None = None) -> int:
    """An integer in ``[low, high]`` (either end optional), as ``int``; integral floats such as
    ``3.0`` are accepted, ``3.5``, bools, strings and NaN are not."""
    value = _scalar(value)
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise InputTypeError(f"{name} must be an integer, got {_show(value)}")
    if not isinstance(value, numbers.Integral):
        x = float(value)
        if not math.isfinite(x) or x != math.floor(x):
            raise InputTypeError(f"{name} must be an integer, got {_show(value)}")
        value = int(x)
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        if high is None:
            rng = f">= {low}"
        elif low is None:
            rng = f"<= {high}"
        else:
            rng = f"in [{low}, {high}]"
        shown = value if abs(value) < 10 ** 30 else f"an integer with {len(str(abs(value)))} digits"
        raise ValidationError(f"{name} must be an integer {rng}, got {shown}")
    return value


def seed(value: object, name: str = "seed") -> int:
    """A random seed: an integer in [0, 2**63) (accepted by numpy and torch generators alike)."""
    value = integer(name, value)
    if not 0 <= value < SEED_LIMIT:
        shown = value if abs(value) < 10 ** 30 else f"an integer with {len(str(abs(value)))} digits"
        raise ValidationError(f"{name} must be an integer in [0, 2**63), got {shown}")
    return value


def rng(value: object, name: str = "seed") -> np.random.Generator:
    """A numpy Generator from a seed (:func:`seed`), ``None`` (fresh entropy) or a Generator (used as
    is): the one place where fedbound turns a user's seed into a numpy generator."""
    if isinstance(value, np.random.Generator):
        return value
    return np.random.default_rng(None if value is None else seed(value, name))


#: most seeds one Monte-Carlo estimate runs
MAX_SEEDS = 10 ** 7


def seeds(value: object, name: str = "seeds") -> list[int]:
    """Monte-Carlo seeds: an integer R in [1, MAX_SEEDS] (seeds 0..R-1) or a non-empty iterable of
    seeds (:func:`seed`), as a list."""
    value = _scalar(value)
    if isinstance(value, numbers.Number) or _is_bool(value):
        return list(range(integer(name, value, low=1, high=MAX_SEEDS)))
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise InputTypeError(f"{name} must be a number of seeds or a list of seeds, got {_show(value)}")
    out = [seed(s, f"{name}[{i}]") for i, s in enumerate(value)]
    if not out:
        raise ValidationError(f"{name} must name at least one seed, got none")
    return out


def boolean(name: str, value: object) -> bool:
    """A bool (``True``/``False`` or a numpy bool), nothing else (``1`` and ``"yes"`` are errors)."""
    value = _scalar(value)
    if not _is_bool(value):
        raise InputTypeError(f"{name} must be True or False, got {_show(value)}")
    return bool(value)


def real_array(name: str, value: object, *, ndim: int | Sequence[int] | None = None,
               shape: Sequence[int | None] | None = None, finite: bool = True,
               low: float | None = None, high: float | None = None,
               max_abs: float | None = None, allow_bool: bool = False) -> np.ndarray:
    """A real float64 numpy array (torch tensors are accepted and copied to numpy).

    Strings, objects, complex and bool (unless ``allow_bool``, e.g. an adjacency pattern) dtypes are
    :class:`InputTypeError`. ``ndim`` (one or several
    allowed), ``shape`` (``None`` entries are free), finiteness, the bounds ``low <= a <= high`` and
    ``|a| <= max_abs`` (for data whose squares must not overflow) are checked, each failure naming
    the first offending entry.
    """
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor, without importing torch
        if getattr(value, "is_complex", lambda: False)():
            raise InputTypeError(f"{name} must be real, got a complex tensor")
        value = value.detach().cpu().numpy()
    try:
        raw = np.asarray(value)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise InputTypeError(f"{name} must be a real array, got {_show(value)} ({exc})") from None
    if raw.dtype.kind not in ("fiub" if allow_bool else "fiu"):
        kind = {"b": "bool", "c": "complex", "U": "string", "S": "bytes", "O": "object",
                "M": "datetime", "m": "timedelta", "V": "void"}.get(raw.dtype.kind, str(raw.dtype))
        raise InputTypeError(f"{name} must be a real numeric array, got dtype {kind}")
    with np.errstate(over="ignore"):
        arr = raw.astype(np.float64)
    allowed = (ndim,) if isinstance(ndim, int) else ndim
    if allowed is not None and arr.ndim not in allowed:
        want = " or ".join(str(k) for k in allowed)
        unit = "dimension" if allowed == (1,) else "dimensions"
        raise ValidationError(f"{name} must have {want} {unit}, got shape {arr.shape}")
    if shape is not None:
        if len(shape) != arr.ndim or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
            raise ValidationError(f"{name} must have shape {want}, got {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValidationError(f"{name} must be finite, got {arr[tuple(bad)]} at index {tuple(bad.tolist())}")
    for ok, what in ((None if low is None else arr >= low, f">= {low:g}" if low is not None else ""),
                     (None if high is None else arr <= high, f"<= {high:g}" if high is not None else ""),
                     (None if max_abs is None else np.abs(arr) <= max_abs,
                      f"of absolute value <= {max_abs:g}" if max_abs is not None else "")):
        if ok is not None and not np.all(ok):
            bad = np.argwhere(~ok)[0]
            raise ValidationError(
                f"{name} entries must be {what}, got {arr[tuple(bad)]:g} at index {tuple(bad.tolist())}")
    return arr


#: largest JSON spec file read (bytes); a spec is a few subnets, not a data set
JSON_MAX_BYTES = 64 * 2 ** 20
#: integers in a JSON spec have at most this many digits (larger ones are no sizes or seeds)
JSON_MAX_DIGITS = 30


def existing_file(name: str, path: object, *, max_bytes: int | None = None) -> str:
    """``path`` (str or path-like) naming an existing regular file of at most ``max_bytes`` bytes."""
    if not isinstance(path, (str, os.PathLike)):
        raise InputTypeError(f"{name} must be a file path, got {_show(path)}")
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not os.path.exists(path):
        raise ValidationError(f"cannot read {name} {path!r}: no such file")
    if not os.path.isfile(path):
        raise ValidationError(f"cannot read {name} {path!r}: not a regular file")
    if max_bytes is not None and os.path.getsize(path) > max_bytes:
        raise ValidationError(f"{name} {path!r} has {os.path.getsize(path)} bytes, more than the "
                              f"{max_bytes} allowed")
    return path


def _json_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > JSON_MAX_DIGITS:
        raise ValidationError(f"integer with {digits} digits (at most {JSON_MAX_DIGITS} allowed)")
    return int(text)


def _json_float(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise ValidationError(f"number {_show(text)} is outside the float range")
    return x


def _json_constant(text: str):
    raise ValidationError(f"{text} is not a JSON number (strict JSON has no NaN or Infinity)")


def parse_json(name: str, text: str | bytes):
    """Strict JSON from ``text`` (bytes must be UTF-8): no NaN/Infinity, no numbers outside the float
    range, no integers of more than :data:`JSON_MAX_DIGITS` digits, nesting Python can parse; every
    failure is a one-line :class:`ValidationError` naming ``name``."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ValidationError(f"{name} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at "
                                  f"offset {exc.start})") from None
    if not isinstance(text, str):
        raise InputTypeError(f"{name} must be JSON text (str or bytes), got {_show(text)}")
    try:
        return json.loads(text, parse_int=_json_int, parse_float=_json_float,
                          parse_constant=_json_constant)
    except ValidationError as exc:
        raise ValidationError(f"{name}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ValidationError(f"{name} is not valid JSON: {exc.msg} at line {exc.lineno} "
                              f"column {exc.colno}") from None
    except RecursionError:
        raise ValidationError(f"{name} is nested too deeply to be a fedbound spec") from None
    except ValueError as exc:  # e.g. Python's limit on integer string conversion
        raise ValidationError(f"{name} is not valid JSON: {exc}") from None


def json_file(name: str, path: object, *, max_bytes: int = JSON_MAX_BYTES):
    """The strict JSON content (:func:`parse_json`) of the existing file ``path``, read as UTF-8."""
    path = existing_file(name, path, max_bytes=max_bytes)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ValidationError(f"cannot read {name} {path!r}: {exc.strerror or exc}") from None
    return parse_json(f"{name} {path!r}", raw)


def instance(name: str, value: object, cls: type, what: str):
    """``value`` if it is an instance of ``cls``, else :class:`InputTypeError` saying what ``name``
    must be (``what``, e.g. "a fedbound Task")."""
    if not isinstance(value, cls):
        raise InputTypeError(f"{name} must be {what}, got {_show(value)}")
    return value


#: most names an error message lists; longer lists are cut with their count
LISTED = 12


def close_names(name: object, known: Iterable[str], limit: int = 3) -> list[str]:
    """The known names closest to ``name``, best first, at most ``limit``: the same name in other
    case (``FedAvg``: ``fedavg``); the live name of a vocabulary spelling (``learning_rate``,
    ``--learning-rate``: ``lr``, ``--lr``; :func:`fedbound.vocabulary.live_name`); names equal up
    to a ``PAPER.`` prefix (``fednova.thm1-quadratic``: ``thm1-quadratic``); every name that
    ``name`` begins (``thm1``: ``thm1-quadratic``, ``thm1-lsq``, ``thm1-mlp``); else the closest
    by spelling (difflib, ties kept). Empty when none is close."""
    from fedbound import vocabulary

    known = list(dict.fromkeys(str(k) for k in known))
    text = str(name)
    if not text.strip() or not known:
        return []
    folded = {k.lower(): k for k in known}
    if text.lower() in folded:
        return [folded[text.lower()]]
    flag = text.startswith("--")
    bare = text[2:].replace("-", "_") if flag else text
    for space in ("option", "constant"):
        live = vocabulary.live_name(bare, space)
        if live is not None:
            spelled = "--" + live.replace("_", "-") if flag else live
            if spelled in known:
                return [spelled]
    if flag and all(k.startswith("--") for k in known):   # flags: compare the names without dashes
        return ["--" + c for c in close_names(text[2:], [k[2:] for k in known], limit)]
    tail = text.rpartition(".")[2]
    dotted = [k for k in known if k != text and k.rpartition(".")[2] == tail]
    if dotted:
        return dotted[:limit]
    begun = [k for k in known if len(text) >= 2 and k.lower().startswith(text.lower())]
    if begun:
        return begun[:limit]
    scored = sorted(((difflib.SequenceMatcher(None, text.lower(), k.lower()).ratio(), i, k)
                     for i, k in enumerate(known)), key=lambda t: (-t[0], t[1]))
    best = scored[0][0]
    if best < 0.6:
        return []
    return [k for ratio, _, k in scored if ratio >= best - 1e-9][:limit]


def suggest(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` (or ``'x', 'y' or 'z'``) for the closest known names
    (:func:`close_names`), or ``""``: the one did-you-mean of every unknown id, option, flag,
    constant, check and claim."""
    close = close_names(name, known)
    if not close:
        return ""
    quoted = [repr(c) for c in close]
    return "; did you mean " + (quoted[0] if len(quoted) == 1 else
                                ", ".join(quoted[:-1]) + " or " + quoted[-1]) + "?"


def listing(names: Iterable[str], limit: int = LISTED) -> str:
    """``a, b, c`` for a short list; the first ``limit`` names and how many there are in all for
    a long one (an error never dumps a hundred ids)."""
    names = list(names)
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f", ... ({len(names)} in all)"


def unknown(what: str, name: object, known: Iterable[str], hint: str = "") -> UnknownNameError:
    """The error for an unknown ``name`` of kind ``what`` among ``known``: the did-you-mean
    (:func:`suggest`) and the valid names (:func:`listing`), or ``hint`` (where to see them:
    "`fedbound list`") when there are many."""
    known = list(known)
    shown = hint if hint and len(known) > LISTED else f"valid: {listing(known)}"
    return UnknownNameError(f"unknown {what} {_show(name)}{suggest(name, known)} ({shown})")


def one_of(name: str, value: object, choices: Iterable[str]) -> str:
    """``value`` if it is one of ``choices`` (strings), else :class:`UnknownNameError` listing them
    with a did-you-mean."""
    choices = list(choices)
    if not isinstance(value, str):
        raise InputTypeError(f"{name} must be one of {listing(choices)}; got {_show(value)}")
    if value not in choices:
        raise UnknownNameError(f"{name} must be one of {listing(choices)}, got {value!r}"
                               f"{suggest(value, choices)}")
    return value


def known_names(what: str, given: Iterable[str], known: Iterable[str]) -> None:
    """Every name of ``given`` must be in ``known``: a misspelled option or constant is an error
    (never silently ignored), named with a did-you-mean."""
    known = list(known)
    for g in given:
        if g not in known:
            raise UnknownNameError(f"unknown {what} {g!r}{suggest(g, known)} "
                                   f"(valid: {listing(sorted(known))})")


__all__ = ["SEED_LIMIT", "MAX_SEEDS", "instance", "number", "integer", "seed", "seeds", "rng", "boolean", "real_array", "suggest", "close_names", "listing", "unknown", "one_of", "LISTED",
           "existing_file", "parse_json", "json_file",
           "known_names"]
