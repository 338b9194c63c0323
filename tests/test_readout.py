"""Numbers as a reader needs them (fedbound.readout): the digits that matter near 1, a ratio's size
in words and powers of ten, tables sorted by size, log axes for values spanning decades."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from fedbound.errors import FedboundError
from fedbound.readout import ROUNDING_GAP, by_size, log_axis, magnitude, number, ratio_words


def test_a_contraction_of_0_99999995_is_not_a_rate_of_1():
    assert number(0.99999995) == "1 - 5.0e-08"
    assert number(1.0000000002) == "1 + 2.0e-10"
    assert number(-0.99999995) == "-1 + 5.0e-08"
    assert number(1.0) == "1" and number(1 + 2.2e-16) == "1"     # float rounding, not a digit
    assert number(0.5) == "0.5" and number(3.14159265) == "3.14159"
    assert (number(float("inf")), number(-float("inf"))) == ("inf", "-inf")


@given(st.floats(min_value=1e-12, max_value=1e-4), st.sampled_from([-1.0, 1.0]),
       st.integers(min_value=2, max_value=6))
def test_the_distance_to_1_survives_formatting(gap, side, digits):
    """Whatever the digits, a value within 1e-4 of 1 (but not rounding noise) keeps its distance:
    "1 - g" or "1 + g" with g its distance to 2 significant digits."""
    x = 1.0 + side * gap
    text = number(x, digits)
    if f"{x:.{digits}g}" != "1":
        assert text == f"{x:.{digits}g}"
        return
    one, sign, shown = text.split(" ")
    assert one == "1" and sign == ("+" if side > 0 else "-")
    assert float(shown) == pytest.approx(abs(x - 1.0), rel=0.06)


def test_ratio_words_say_the_size():
    assert ratio_words(2.5) == "a factor of 2.5"
    assert ratio_words(2.335e43) == "a factor of 10^43"
    assert ratio_words(3.03e5) == "a factor of 10^5.5"
    assert ratio_words(979.9) == "a factor of 980"
    assert ratio_words(1.926e-15) == "a factor of 10^-15"
    assert ratio_words(float("inf"), 400.2) == "a factor of 10^400"       # overflow read from log10
    assert ratio_words(1.0, -1e-20 / math.log(10)) == "a factor of 1 - 1.0e-20"
    assert ratio_words(0.0, lhs_name="the measured value") == "0: the measured value is 0"


@pytest.mark.parametrize("call", [lambda: number(float("nan")), lambda: ratio_words(float("nan")),
                                  lambda: magnitude(float("nan")), lambda: log_axis(np.array([1.0, np.nan]))])
def test_nan_is_refused_at_the_boundary(call):
    """A NaN given from outside is an error (fedbound.guard); one computed inside (a 0/0 ratio in a
    table sorted by size) is read as undefined and sorted last (below)."""
    with pytest.raises(FedboundError):
        call()


def test_an_infinite_ratio_says_which_side_is_zero():
    assert ratio_words(float("inf"), rhs=0.0, rhs_name="the bound") == "infinite: the bound is 0"
    assert ratio_words(float("inf"), rhs=-2.0) == "infinite: the right side is negative (-2)"
    assert "0 or negative" in ratio_words(float("inf"))


def test_tables_sort_by_size_infinite_first_undefined_last():
    rows = [("a", 1.375), ("b", float("inf")), ("c", float("nan")), ("d", 2.335e43), ("e", 2.466)]
    assert [r[0] for r in by_size(rows, key=lambda r: r[1])] == ["b", "d", "e", "a", "c"]
    # an overflowing ratio sorts by its log10
    pairs = [("x", (float("inf"), 400.0)), ("y", (float("inf"), float("inf"))), ("z", (1e300, None))]
    assert [p[0] for p in by_size(pairs, key=lambda p: p[1])] == ["y", "x", "z"]
    assert magnitude(0.0) == -math.inf and magnitude(float("inf")) == math.inf


def test_log_axis_for_positive_values_spanning_a_decade():
    assert log_axis(np.array([2e-4, 4.3, 0.27]))        # the demo's sweep: 1e-4 next to 4
    assert not log_axis(np.array([1.0, 2.0, 5.0]))
    assert not log_axis(np.array([0.0, 1e-3, 10.0]))     # a value at 0 has no place on a log axis
    assert log_axis(np.array([1e-3, np.inf, 10.0]))      # non-finite entries ignored
    assert not log_axis(np.array([np.inf]))


def test_rounding_gap_is_a_few_ulps():
    assert 1e-15 < ROUNDING_GAP < 1e-13
