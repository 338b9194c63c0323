"""The sweep report's intervals respect what they measure: a non-negative metric's interval stays in
[0, inf) (the method named in the table), few seeds are said to be few, and curves spanning decades
get a log axis."""
import json

import numpy as np
from hypothesis import given, settings, strategies as st

from fedbound.stats import CLIPPED, STUDENT_T
from fedbound.sweep import report


def _cells(finals: list[float], metric: str = "dist2", rounds: int = 4) -> list:
    """One configuration, one finished cell per seed, the metric decaying to ``final``."""
    config = json.dumps({"algorithm": "fedavg", "options": {"lr": 0.05}, "sigma": 0.1})
    cells = []
    for final in finals:
        curve = np.geomspace(4.0, final, rounds) if final > 0 else np.linspace(4.0, 0.0, rounds)
        columns = {m: curve.copy() for m in report.REPORT_METRICS}
        columns.update({f: np.arange(rounds, dtype=float) for f in report.FLOATS})
        cells.append((config, "done", columns))
    return cells


def test_two_seeds_of_a_squared_distance_no_longer_reach_below_zero():
    """The issue's case: 0.000209607 [-0.000853593, 0.00127281] over 2 seeds."""
    rows = report.configurations(_cells([2.8e-5, 3.9e-4]), "dist2")
    final = rows[0]["final"]
    assert final["low"] == 0.0 and final["high"] > final["mean"] > 0
    assert final["method"] == CLIPPED and final["few"]
    text = report.table(rows, "dist2")
    assert f"95% CI ({CLIPPED})" in text and "2 (few)" in text and "few: fewer than 10 seeds" in text


def test_a_metric_that_may_be_negative_keeps_the_t_interval():
    rows = report.configurations(_cells([2.8e-5, 3.9e-4]), "loss")
    assert rows[0]["final"]["method"] == STUDENT_T and rows[0]["final"]["low"] < 0
    assert f"95% CI ({STUDENT_T})" in report.table(rows, "loss")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.0, 10.0), min_size=1, max_size=12),
       st.sampled_from(report.NONNEGATIVE_METRICS))
def test_nonnegative_metrics_never_go_below_zero(finals, metric):
    rows = report.configurations(_cells(finals), metric)
    assert np.all(np.asarray(rows[0]["low"]) >= 0) and rows[0]["final"]["low"] >= 0


def test_curves_spanning_decades_are_drawn_on_a_log_axis(tmp_path):
    rows = report.configurations(_cells([2.8e-5, 3.9e-4]), "dist2")
    for axis in report.AXES:
        assert report.figure(rows, "dist2", axis).axes[0].get_yscale() == "log"
    flat = report.configurations(_cells([3.0, 3.5], rounds=4), "dist2")    # 4 .. 3: one decade or less
    assert report.figure(flat, "dist2", "rounds").axes[0].get_yscale() == "linear"
    paths = report.plots(rows, "dist2", tmp_path)
    assert all(p.endswith(".png") and (tmp_path / p.split("/")[-1]).stat().st_size > 1000
               for p in paths.values())
