"""The numbers fedbound gave before the architecture refactor (issue 20) still come out: every
section of cases.py recomputed and compared with golden.json.gz (recorded at the commit it names).

Comparison: strings, booleans and integers exactly; floats to 1e-9 relative, elementwise,
|new - old| <= 1e-9 max(|new|, |old|) + 1e-12 s, where s is the largest magnitude of the array the
value belongs to (so that a value that is rounding noise around 0 in a column of O(1) values,
such as f - f* at the optimum, may move by rounding, and nothing else may). Keys of the golden
must all be present; new keys are allowed (outputs may gain fields). Timing fields are skipped.
A golden theory point that a result's relations (declared since issue 22) exclude must be refused
with a ValidationError naming the relation. A section re-recorded later on purpose (``record.py --section``) names its commit and reason in
the file (``rerecorded``), and the test of that section says so when it fails.
"""
from __future__ import annotations

import gzip
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import cases  # noqa: E402

GOLDEN = json.load(gzip.open(HERE / "golden.json.gz", "rt"))
RTOL, ATOL_SCALE = 1e-9, 1e-12
SKIP = {"seconds"}


def _number(x):
    if isinstance(x, str) and x in ("nan", "inf", "-inf"):
        return float(x)
    return x


def _scale(values) -> float:
    flat = []

    def walk(v):
        if isinstance(v, list):
            for w in v:
                walk(w)
        else:
            v = _number(v)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                flat.append(abs(v))
    walk(values)
    return max(flat, default=0.0)


def compare(new, old, path: str = "", scale: float | None = None) -> list[str]:
    """The differences between ``new`` and ``old`` (empty when they agree, module doc)."""
    new, old = _number(new), _number(old)
    if isinstance(old, dict):
        if not isinstance(new, dict):
            return [f"{path}: a {type(new).__name__} where the golden has an object"]
        out = []
        for key, value in old.items():
            if key in SKIP:
                continue
            if key not in new:
                out.append(f"{path}/{key}: missing")
                continue
            out += compare(new[key], value, f"{path}/{key}")
        return out
    if isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            return [f"{path}: length {len(new) if isinstance(new, list) else type(new).__name__} "
                    f"!= {len(old)}"]
        s = _scale(old) if scale is None else scale
        out = []
        for i, (a, b) in enumerate(zip(new, old)):
            out += compare(a, b, f"{path}[{i}]", s)
            if len(out) > 5:
                break
        return out
    if isinstance(old, bool) or isinstance(old, str) or old is None:
        return [] if new == old else [f"{path}: {new!r} != {old!r}"]
    if isinstance(old, (int, float)):
        if isinstance(new, bool) or not isinstance(new, (int, float)):
            return [f"{path}: {new!r} != {old!r}"]
        if math.isnan(old) or math.isnan(new):
            return [] if math.isnan(old) and math.isnan(new) else [f"{path}: {new!r} != {old!r}"]
        if math.isinf(old) or math.isinf(new):
            return [] if new == old else [f"{path}: {new!r} != {old!r}"]
        s = abs(old) if scale is None else scale
        if abs(new - old) <= RTOL * max(abs(new), abs(old)) + ATOL_SCALE * s:
            return []
        return [f"{path}: {new!r} != {old!r} (relative {abs(new - old) / max(abs(old), 1e-300):.2e})"]
    return [] if new == old else [f"{path}: {new!r} != {old!r}"]


@pytest.mark.parametrize("section", list(cases.SECTIONS))
def test_section_gives_the_golden_numbers(section):
    new = cases.encode(cases.SECTIONS[section]())
    diffs = compare(new, GOLDEN["sections"][section], section)
    assert not diffs, _since(section) + "\n".join(diffs[:20])


def _since(section: str) -> str:
    again = GOLDEN.get("rerecorded", {}).get(section)
    return f"(recorded again at {again['commit']}: {again['reason']})\n" if again else ""


CHUNKS = 6


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_theory_gives_the_golden_numbers(chunk):
    from fedbound.errors import ValidationError
    from fedbound.theory import get

    entries = GOLDEN["theory"][chunk::CHUNKS]
    diffs = []
    for entry in entries:
        p = entry["point"]
        if not np.all(get(p["result"]).admissible(p["constants"])[0]):
            # a point the result's relations (declared since issue 22) exclude: refused now
            with pytest.raises(ValidationError, match="requires"):
                cases.theory_values(p)
            continue
        new = cases.encode(cases.theory_values(p))
        diffs += compare(new, entry["values"], f"{p['result']}[{p['variant']}]")
    assert not diffs, _since("theory") + "\n".join(diffs[:20])


def test_the_comparison_catches_a_change():
    """The comparison itself: a relative change of 1e-7 in one entry is caught, rounding is not."""
    old = cases.encode({"x": np.array([1.0, 2.0, 1e-17]), "s": "a"})
    assert not compare(cases.encode({"x": np.array([1.0 + 1e-15, 2.0, -3e-17]), "s": "a"}), old)
    assert compare(cases.encode({"x": np.array([1.0 + 1e-7, 2.0, 1e-17]), "s": "a"}), old)
    assert compare({"x": old["x"], "s": "b"}, old)
    assert compare({"s": "a"}, old)
