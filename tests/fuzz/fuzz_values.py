"""Bad values and the contract every public call must keep when given one (issue 8).

:func:`bad_values` draws wrong types, NaN, infinities, negatives, zero, huge floats and integers,
empty and ragged containers and misspellable strings. :func:`outcome` calls the API and enforces the
contract: the call raises a :class:`~fedbound.errors.FedboundError` (any other exception fails the
test, with its traceback) or returns a result without NaN; :data:`ALWAYS_INVALID` values (NaN,
complex, strings where no name is expected, ...) must raise.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import signal
import threading
from collections import Counter

import numpy as np
import pytest
import torch
from hypothesis import strategies as st

from fedbound.errors import FedboundError

#: how many fuzz cases ran in this session, per area (printed at the end of the session)
CASES: Counter = Counter()


class Opaque:
    """An object of no type fedbound knows."""

    def __repr__(self) -> str:
        return "Opaque()"


#: values that are valid for no numeric, array or name parameter of fedbound
ALWAYS_INVALID = (math.nan, np.float64("nan"), 1 + 1j, complex(math.nan, 0), "abc", "", "1.0",
                  b"\xff", Opaque(), [[1.0], [1.0, 2.0]], {"a": 1})

FIXED_BAD = ALWAYS_INVALID + (
    math.inf, -math.inf, -1, -1.5, 0, 0.0, -0.0, 2 ** 70, -(2 ** 70), 10 ** 400, 1e308, -1e308,
    5e-324, True, False, None, [], (), [1.0, 2.0], np.array([]), np.zeros((2, 0)),
    np.array([[1.0, math.nan]]), np.array(["a", "b"]), np.array([1 + 1j]), torch.tensor([math.inf]),
    np.int64(-3), np.float32(math.inf), 2 ** 63, 2 ** 63 - 1, -(2 ** 63),
)


def bad_values():
    """Hypothesis strategy of bad values (see the module doc)."""
    return st.one_of(
        st.sampled_from(FIXED_BAD),
        st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not math.isfinite(x)),
        st.floats(max_value=-1e-300, allow_infinity=False),
        st.floats(min_value=1e150, allow_infinity=False),
        st.integers(max_value=-1),
        st.integers(min_value=2 ** 62),
        st.complex_numbers(allow_nan=True),
        st.text(max_size=6),
        st.lists(st.floats(allow_nan=True), max_size=3),
    )


def is_always_invalid(value) -> bool:
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, complex) or isinstance(value, Opaque):
        return True
    return any(value is v for v in ALWAYS_INVALID)


def nan_in(value, depth: int = 0) -> str | None:
    """A description of the first NaN inside ``value`` (numbers, arrays, tensors, containers,
    dataclasses and objects with ``constants()``), or None."""
    if depth > 4:
        return None
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        return None
    if isinstance(value, (float, np.floating)):
        return "nan" if math.isnan(value) else None
    if isinstance(value, complex):
        return "nan" if math.isnan(value.real) or math.isnan(value.imag) else None
    if isinstance(value, torch.Tensor):
        if value.is_floating_point() or value.is_complex():
            return "nan in a tensor" if bool(torch.isnan(value).any()) else None
        return None
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            return "nan in an array" if bool(np.isnan(value).any()) else None
        if value.dtype.kind == "O":
            return next((r for v in value.ravel()[:1000] if (r := nan_in(v, depth + 1))), None)
        return None
    if isinstance(value, dict):
        return next((f"{k}: {r}" for k, v in value.items() if (r := nan_in(v, depth + 1))), None)
    if isinstance(value, (list, tuple)):
        return next((r for v in value[:1000] if (r := nan_in(v, depth + 1))), None)
    if dataclasses.is_dataclass(value):
        return next((f"{f.name}: {r}" for f in dataclasses.fields(value)
                     if (r := nan_in(getattr(value, f.name, None), depth + 1))), None)
    if callable(getattr(value, "constants", None)):
        try:
            consts = value.constants()
        except TypeError:
            return None
        return nan_in(consts, depth + 1)
    return None


#: seconds one fuzz case may take: more is a hang (bad input must be refused up front)
CASE_SECONDS = 20


class Hang(BaseException):
    """Raised in a fuzz case that runs longer than CASE_SECONDS (a BaseException, so that no
    ``except Exception`` in fedbound swallows it)."""


@contextlib.contextmanager
def time_limit(seconds: float = CASE_SECONDS):
    """Raise :class:`Hang` in the block after ``seconds`` (SIGALRM; no limit off the main thread)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        yield
        return

    def handler(signum, frame):
        raise Hang(f"no answer within {seconds} s")
    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def outcome(area: str, fn, *args, invalid: bool = False, **kwargs):
    """Call ``fn`` and enforce the contract (module doc); returns ("error", exc) or ("ok", result).
    ``invalid``: the input is invalid for sure, so the call must raise. In the area "testing" (the
    assertions of fedbound.testing) an AssertionError is the contract too and propagates."""
    CASES[area] += 1
    try:
        with time_limit():
            result = fn(*args, **kwargs)
    except Hang as exc:
        pytest.fail(f"{getattr(fn, '__qualname__', fn)} hung: {exc}")
    except AssertionError:
        if area == "testing":
            raise
        pytest.fail(f"{getattr(fn, '__qualname__', fn)} raised AssertionError (not a FedboundError)")
    except FedboundError as exc:
        message = str(exc)
        assert message and "\n" not in message.strip(), f"error message is not one line: {message!r}"
        return "error", exc
    except Exception as exc:  # noqa: BLE001 - the contract under test
        pytest.fail(f"{getattr(fn, '__qualname__', fn)} raised {type(exc).__name__} (not a "
                    f"FedboundError): {exc}", pytrace=True)
    where = nan_in(result)
    assert where is None, f"{getattr(fn, '__qualname__', fn)} returned NaN for bad input: {where}"
    assert not invalid, f"{getattr(fn, '__qualname__', fn)} accepted an invalid value and returned {result!r:.200}"
    return "ok", result
