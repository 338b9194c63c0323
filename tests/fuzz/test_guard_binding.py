"""The guard binds positional arguments by position (fedbound.guard._Signature._bound) where that is
what ``inspect.Signature.bind`` does, and otherwise asks it: the same arguments by name, the same
TypeError, for every way of calling a function."""
import inspect

from hypothesis import given, strategies as st
import pytest

from fedbound.guard import _Signature


def f_plain(a, b, c=1, d=2):
    return a


def f_only(a, /, b, c=3):
    return a


def f_star(a, *rest, b=1):
    return a


def f_kw(a, *, b, c=2):
    return a


def f_var_kw(a, b=1, **more):
    return a


def f_none():
    return 0


FUNCTIONS = [f_plain, f_only, f_star, f_kw, f_var_kw, f_none]


def _bind(fn, args, kwargs):
    try:
        return dict(inspect.signature(fn).bind(*args, **kwargs).arguments)
    except TypeError as exc:
        return ("TypeError", str(exc))


def _fast(fn, args, kwargs):
    try:
        return dict(_Signature(fn)._bound(args, kwargs))
    except TypeError as exc:
        return ("TypeError", str(exc))


@given(st.sampled_from(FUNCTIONS), st.integers(0, 6),
       st.dictionaries(st.sampled_from(["a", "b", "c", "d", "e"]), st.integers(), max_size=3))
def test_the_guard_binds_as_the_signature_does(fn, count, kwargs):
    args = tuple(range(100, 100 + count))
    assert _fast(fn, args, kwargs) == _bind(fn, args, kwargs)


@pytest.mark.parametrize("fn, args", [(f_plain, (1,)), (f_plain, (1, 2, 3, 4, 5)), (f_only, ()),
                                       (f_none, (1,))])
def test_a_wrong_count_of_positional_arguments_is_the_signatures_type_error(fn, args):
    with pytest.raises(TypeError):
        _Signature(fn)._bound(args, {})
