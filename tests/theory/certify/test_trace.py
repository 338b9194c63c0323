"""The claims' numpy code on exact and symbolic numbers (fedbound/theory/certify/trace.py)."""
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.theory.certify import trace as T


def values(a):
    return list(T.to_expressions(a).reshape(-1))


def test_floats_are_their_exact_binary_rationals():
    (x,) = values(T.array([0.1]))
    assert x == sp.Rational(3602879701896397, 36028797018963968) and float(x) == 0.1
    (y,) = values(T.array([0.1]) * 3 - T.array([0.3]))
    assert y != 0 and y == sp.Rational(0.1) * 3 - sp.Rational(0.3)   # what floats round away


@given(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6))
@settings(max_examples=60, deadline=None)
def test_comparisons_are_exact(a, b):
    x, y = T.array([a]), T.array([b])
    assert bool((x < y)[0]) == (sp.Rational(a) < sp.Rational(b))
    assert bool((x <= y)[0]) == (sp.Rational(a) <= sp.Rational(b))
    assert bool(np.minimum(x, y)[0] == T.array([min(a, b)])[0])


@given(st.integers(-50, 50), st.sampled_from([0, 1, 2, 3]))
@settings(max_examples=60, deadline=None)
def test_rounding_matches_numpy(k, quarters):
    v = k + quarters / 4
    a = T.array([v])
    assert values(np.round(a)) == [int(np.round(v))]        # half to even, like numpy
    assert values(np.floor(a)) == [math.floor(v)] and values(np.ceil(a)) == [math.ceil(v)]


def test_transcendental_numbers_are_compared_exactly():
    a = np.log(T.array([3.0]))
    assert values(a) == [sp.log(3)]
    assert bool((a > T.array([1.0986122886681098]))[0]) == (sp.log(3) > sp.Rational(1.0986122886681098))
    assert values(np.sqrt(T.array([2.0])) ** 2 - 2) == [0]


def test_what_cannot_be_exact_is_refused_loudly():
    a = T.array([1.5])
    with pytest.raises(T.Untraceable):
        np.asarray(a, dtype=float)
    with pytest.raises(T.Untraceable):
        int(a[0])
    with pytest.raises(T.Invalid):
        T.array([math.nan])
    with pytest.raises(T.Untraceable):
        T.exactly(lambda: np.isnan(a))


def test_a_trace_follows_every_branch():
    x = sp.Symbol("x", real=True)

    def f():
        a = T.array([x])
        return np.where(a > 1, a * 2, np.minimum(a, 0))

    paths, fresh = T.trace(f)       # np.where computes both sides: every comparison branches
    assert not fresh and len(paths) == 4
    for v in (-2, -1, 0, sp.Rational(1, 2), 1, 3):
        (path,) = [p for p in paths if all(c.subs(x, v) for c in p.condition)]
        assert values(path.outputs)[0].subs(x, v) == (2 * v if v > 1 else min(v, 0))


def test_a_trace_has_a_path_limit():
    xs = sp.symbols("x:8", real=True)

    def f():
        return [bool((T.array([x]) > 0)[0]) for x in xs]

    with pytest.raises(T.PathLimit):
        T.trace(f, max_paths=16)


def test_rounding_a_transcendental_expression_is_a_fresh_integer():
    z = sp.Symbol("z", real=True)
    paths, fresh = T.trace(lambda: np.round(T.array([10]) ** T.array([z])))
    (symbol,) = fresh
    assert symbol.is_integer and values(paths[0].outputs) == [symbol]


def test_an_exact_twin_dispatches_on_traced_numbers():
    twin = T.exact_twin(lambda x: np.float64(-1), lambda x: x * 2)
    assert twin(np.array([1.0])) == -1
    assert values(twin(T.array([3]))) == [6]


def test_huge_powers_stay_unexpanded():
    r = T.array([0.999])
    big = r ** T.array([10 ** 6])                 # a million-fold power of a 53-bit rational
    assert type(values(big)[0]).__name__ == "_Kept"     # not expanded: 0.999^1e6 = exp(-1000.5...) ~ 10^-434.5
    assert bool((big < T.array([sp.Rational(1, 10 ** 434)]))[0])
    assert bool((big > T.array([sp.Rational(1, 10 ** 435)]))[0])


def test_an_exact_evaluation_has_a_time_limit():
    def slow():
        x = T.array([0.3])
        for _ in range(10 ** 6):
            x = x * T.array([1.0000001]) + 1
        return x

    with pytest.raises(T.Untraceable, match="time"):
        T.exactly(slow, seconds=0.2)


@given(st.floats(-5.0, 40.0), st.integers(0, 3), st.integers(4, 30))
@settings(max_examples=60, deadline=None)
def test_a_clipped_rounding_of_numbers_is_numpys(x, low, high):
    assert T.clipped_round(np.array([x]), low, high)[0] == np.clip(np.round(x), low, high)
    exact = T.clipped_round(T.array([x]), low, high)          # exact numbers: rounded exactly
    assert values(exact) == [int(np.clip(np.round(x), low, high))]


def test_a_clipped_rounding_in_a_trace_is_one_bounded_integer_and_no_branch():
    n = sp.Symbol("n", integer=True, positive=True)
    z = sp.Symbol("z", real=True)

    def f():
        m = T.clipped_round(T.array([n]) ** T.array([z]), 1, T.array([n]))
        return m, T.clipped_round(T.array([sp.Rational(7, 2)]), 1, T.array([n]))

    paths, fresh = T.trace(f)
    (m,) = fresh
    assert m.is_integer and values(paths[0].outputs[0]) == [m]
    assert {sp.Ge(m, 1), sp.Le(m, n)} <= set(paths[0].condition)    # its bounds, on every path
    # round(7/2) = 4 (half to even) clipped to [1, n]: the clip's comparison with n branches
    assert len(paths) == 2 and {values(p.outputs[1])[0] for p in paths} == {4, n}


def test_abs_of_an_expression_is_signed_by_assumptions_or_kept():
    x = sp.Symbol("x", positive=True)
    y = sp.Symbol("y", real=True)
    assert values(np.abs(T.array([x + 1]))) == [x + 1]
    assert values(np.abs(T.array([-x]))) == [x]
    (kept,) = values(np.abs(T.array([y - x])))
    assert isinstance(kept, sp.Abs) and kept.args == (y - x,)
    for xv, yv in ((1, 3), (2, -5), (sp.Rational(1, 3), sp.Rational(1, 3))):
        assert kept.subs({x: xv, y: yv}) == abs(yv - xv)
    assert values(np.abs(T.array([-2.5]))) == [sp.Rational(5, 2)]


def test_a_sum_of_logs_beyond_evalfs_digits_is_signed_by_its_arguments():
    r = sp.Rational(7909605686196133, 9007199254740992)
    far, near = T._power(r, sp.Integer(2 ** 70)), T._power(r, sp.Integer(2 ** 60))   # ~10^-(6.5e16)
    d = -sp.log(32) - sp.log((1 - far) / (32 * (1 - near)))       # = log((1 - near)/(1 - far)) < 0
    assert d.evalf(T.SIGN_DIGITS, maxn=2000)._prec <= 1           # no digit from evalf
    assert T.sign_of(d) == -1 and T.sign_of(-d) == 1
    assert T.sign_of(sp.log(6) - sp.log(2) - sp.log(3)) == 0
    assert T.sign_of(sp.Rational(1, 2) * sp.log(1 + near) - sp.log(1 + near / 2)) == -1


def test_a_huge_power_of_an_expression_of_the_parameters_is_refused():
    b = sp.Symbol("b", positive=True)
    with pytest.raises(T.Untraceable, match="power 1152921504606846976"):
        T.trace(lambda: np.log(1 - T.array([b]) ** T.array([2 ** 60])))
    with pytest.raises(T.Untraceable, match="power"):
        T.trace(lambda: T.substitute(b ** sp.Symbol("t"), {b: T.array([b]), sp.Symbol("t"): T.array([2 ** 60])}))
    paths, _ = T.trace(lambda: T.array([b]) ** T.array([4096]))   # within MAX_SYMBOLIC_POWER
    assert values(paths[0].outputs) == [b ** 4096]


def test_clipped_roundings_of_one_value_with_other_bounds_are_other_integers():
    n = sp.Symbol("n", integer=True, positive=True)
    z = sp.Symbol("z", real=True)

    def f():
        x = T.array([n]) ** T.array([z])
        return T.clipped_round(x, 1, T.array([n])), T.clipped_round(x, 2, T.array([n]))

    paths, fresh = T.trace(f)
    a, b = (values(o)[0] for o in paths[0].outputs)
    assert a != b and {sp.Ge(a, 1), sp.Ge(b, 2)} <= set(paths[0].condition)
    assert sp.Ge(a, 2) not in paths[0].condition
