"""The numbers fedbound gave before the architecture refactor (issue 20) still come out: every
section of cases.py recomputed and compared with golden.json.gz (recorded at the commit it names).

Comparison (issue 31): every number with the tolerance of its class (tests/golden/tolerances.py:
closed forms, float64 and float32 runs, solver outputs, quantities that are zero up to rounding,
search results, ...), the class written once beside the rule that assigns it, with its reason;
strings, booleans and None exactly. A golden number that no rule classifies is refused
(``test_every_golden_number_has_a_class``). Keys of the golden must all be present; new keys are
allowed (outputs may gain fields). Timing fields are skipped. A golden theory point that a result's
relations (declared since issue 22) exclude must be refused with a ValidationError naming the
relation. A section re-recorded later on purpose (``record.py --section``) names its commit and
reason in the file (``rerecorded``), and the test of that section says so when it fails.
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
import tolerances  # noqa: E402

GOLDEN = json.load(gzip.open(HERE / "golden.json.gz", "rt"))
SKIP = {"seconds"}


def _number(x):
    if isinstance(x, str) and x in ("nan", "inf", "-inf"):
        return float(x)
    return x


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _magnitude(values) -> float:
    """The largest finite magnitude in a number or (nested) list of numbers (0 when none)."""
    flat = []

    def walk(v):
        if isinstance(v, list):
            for w in v:
                walk(w)
        else:
            v = _number(v)
            if _is_number(v) and math.isfinite(v):
                flat.append(abs(v))
    walk(values)
    return max(flat, default=0.0)


def _reference(tolerance, path: str, old: float, list_scale: float | None, siblings: dict | None) -> float:
    """The magnitude ``s`` a value of class ``tolerance`` is measured against (tolerances.py doc)."""
    if tolerance.scale == "list":
        return abs(old) if list_scale is None else list_scale
    named = [siblings[k] for k in tolerance.scale if siblings and k in siblings]
    if not named:
        raise AssertionError(f"{path}: class {tolerance.name} measures against "
                             f"{'/'.join(tolerance.scale)}, which the object does not have")
    return _magnitude(named)


def compare(new, old, path: str = "", scale: float | None = None, siblings: dict | None = None,
            validating: bool = False) -> list[str]:
    """The differences between ``new`` and ``old`` (empty when they agree, module doc). Numbers of a
    validated class are left to the section's validation (:data:`VALIDATIONS`) -- for the location
    of an audit's worst point, only where the new report gives it as unit-cube coordinates
    (``validating``); elsewhere they are compared with the class's tolerance."""
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
            located = validating or (key == "worst" and new.get("worst_unit") is not None)
            out += compare(new[key], value, f"{path}/{key}", siblings=old, validating=located)
        return out
    if isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            return [f"{path}: length {len(new) if isinstance(new, list) else type(new).__name__} "
                    f"!= {len(old)}"]
        s = _magnitude(old) if scale is None else scale
        out = []
        for i, (a, b) in enumerate(zip(new, old)):
            out += compare(a, b, f"{path}[{i}]", s, siblings, validating)
            if len(out) > 5:
                break
        return out
    if not _is_number(old):
        return [] if new == old else [f"{path}: {new!r} != {old!r}"]
    tolerance = tolerances.classify(path)
    if tolerance is None:
        return [f"{path}: no tolerance class (add a rule to tests/golden/tolerances.py)"]
    if not _is_number(new):
        return [f"{path}: {new!r} != {old!r}"]
    if tolerance.validated and (validating or tolerance.name != "location"):
        return []
    if math.isnan(old) or math.isnan(new) or math.isinf(old) or math.isinf(new):
        same = (math.isnan(old) and math.isnan(new)) or new == old
        return [] if same else [f"{path}: {new!r} != {old!r}"]
    s = _reference(tolerance, path, old, scale, siblings)
    if tolerance.agree(new, old, s):
        return []
    return [f"{path}: {new!r} != {old!r} (|difference| {abs(new - old):.3g} > {tolerance.name}'s "
            f"{tolerance.allowed(new, old, s):.3g})"]


def validate_audits(new: dict, old: dict) -> list[str]:
    """The worst point of each sampled claim (class location), re-evaluated from its unit-cube
    coordinates, gives the largest ratio the audit reports, and so the recorded one (class
    search_maximum): a point where the claim attains it, wherever rounding stopped the search."""
    from fedbound.theory.audit import claims_of, evaluate_claim

    ratio = tolerances.CLASSES["search_maximum"]
    claims = {f"{paper}/{c.id}/{c.variant}": c for paper in {k.split("/")[0] for k in new}
              for c in claims_of(paper)}
    out = []
    for key, report in new.items():
        if report.get("worst_unit") is None or key not in old:
            continue
        score = evaluate_claim(claims[key], np.array([report["worst_unit"]])).score[0]
        at_point = float(np.exp(score)) if np.isfinite(score) else _number(report["violation_ratio"])
        recorded = _number(old[key]["violation_ratio"])
        same = ratio.agree(at_point, recorded, abs(recorded)) if math.isfinite(recorded) else at_point == recorded
        if not same:
            out.append(f"audits/{key}/worst: the ratio at the reported point is {at_point!r}, the recorded "
                       f"largest ratio {recorded!r}")
    return out


def validate_pep(new: dict, old: dict) -> list[str]:
    """Each PEP certificate (class solver: the certificate, not the digits) is solved to optimality
    with a small duality gap and replays to its worst case; each lower bound (class
    lower_bound_search) is a valid instance: re-evaluated, every condition holds and its metric is
    the reported value, it does not exceed the worst case, and it has not collapsed."""
    from fedbound.pep.certificate import RTOL, method
    from fedbound.pep.lower_bound import check_instance

    out = []
    for key, cert in new.items():
        name, options = key.split(" ", 1)
        worst, lower = cert["worst_case"], cert["lower_bound"]
        if cert["status"] not in ("optimal", "optimal_inaccurate") or abs(cert["duality_gap"]) > RTOL * max(abs(worst), 1):
            out.append(f"pep/{key}: solver status {cert['status']}, duality gap {cert['duality_gap']}")
        if abs(cert["replay_value"] - worst) > RTOL * max(abs(worst), 1e-12) + 1e-9:
            out.append(f"pep/{key}: the worst case replays to {cert['replay_value']}, not {worst}")
        check = check_instance(method(name), json.loads(options), cert["lower_bound_instance"])
        if check["worst_condition"] > 1 + 1e-9 or abs(check["value"] - lower) > 1e-9 * max(abs(lower), 1e-300):
            out.append(f"pep/{key}: the lower bound's instance gives {check['value']} with a condition at "
                       f"{check['worst_condition']} of its bound, not a valid instance of value {lower}")
        if lower > worst * (1 + RTOL) + 1e-9:
            out.append(f"pep/{key}: lower bound {lower} above the worst case {worst}")
        if key in old and lower < 0.9 * _number(old[key]["lower_bound"]):
            out.append(f"pep/{key}: lower bound {lower} collapsed below 0.9 x the recorded {old[key]['lower_bound']}")
    return out


#: the validations of sections with validated classes (tolerances.py), run after the comparison
VALIDATIONS = {"audits": validate_audits, "pep": validate_pep}


@pytest.mark.parametrize("section", list(cases.SECTIONS))
def test_section_gives_the_golden_numbers(section):
    new = cases.encode(cases.SECTIONS[section]())
    old = GOLDEN["sections"][section]
    diffs = compare(new, old, section)
    if section in VALIDATIONS:
        diffs += VALIDATIONS[section](new, old)
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
        diffs += compare(new, entry["values"], f"theory/{p['result']}[{p['variant']}]")
    assert not diffs, _since("theory") + "\n".join(diffs[:20])


def _leaves(tree, path: str):
    """(path, container, key) of every number of a golden tree (container[key] is the number)."""
    if isinstance(tree, dict):
        items = ((k, v, f"{path}/{k}") for k, v in tree.items() if k not in SKIP)
    elif isinstance(tree, list):
        items = ((i, v, f"{path}[{i}]") for i, v in enumerate(tree))
    else:
        return
    for key, value, where in items:
        if isinstance(value, (dict, list)):
            yield from _leaves(value, where)
        elif _is_number(_number(value)):
            yield where, tree, key


def _golden_leaves():
    for section, tree in GOLDEN["sections"].items():
        yield from _leaves(tree, section)
    for entry in GOLDEN["theory"]:
        p = entry["point"]
        yield from _leaves(entry["values"], f"theory/{p['result']}[{p['variant']}]")


def test_every_golden_number_has_a_class():
    """A golden number that no rule of tolerances.RULES classifies is refused: each says what it is."""
    unclassified = [path for path, _, _ in _golden_leaves() if tolerances.classify(path) is None]
    assert not unclassified, "golden numbers without a tolerance class:\n" + "\n".join(unclassified[:20])


def _pristine(prefix: str):
    """A fresh copy of the golden tree compared at ``prefix`` (a section, or one theory point)."""
    fresh = json.load(gzip.open(HERE / "golden.json.gz", "rt"))
    if prefix.startswith("theory/"):
        return next(entry["values"] for entry in fresh["theory"]
                    if prefix == f"theory/{entry['point']['result']}[{entry['point']['variant']}]")
    return fresh["sections"][prefix]


def _example(tolerance) -> tuple[str, str] | None:
    """(prefix, path) of the first finite, nonzero golden number of class ``tolerance``."""
    trees = [(section, tree) for section, tree in GOLDEN["sections"].items()] + [
        (f"theory/{e['point']['result']}[{e['point']['variant']}]", e["values"]) for e in GOLDEN["theory"]]
    for prefix, tree in trees:
        for path, container, key in _leaves(tree, prefix):
            value = _number(container[key])
            if tolerances.classify(path) is tolerance and math.isfinite(value) and value != 0:
                return prefix, path
    return None


@pytest.mark.parametrize("name", sorted(tolerances.CLASSES))
def test_each_class_catches_a_change_and_not_its_noise(name):
    """Every class still catches a real change: a golden number of the class moved by ten times the
    difference its comparison accepts fails the comparison of its section, and moved by a tenth of it
    passes (the noise the class is there for). The accepted difference is found by bisection on
    compare() itself. Exact classes: a change of 1 is caught."""
    import copy

    tolerance = tolerances.CLASSES[name]
    if tolerance.validated:
        pytest.skip(f"class {name} is validated, not compared: test_pep_lower_bounds_are_valid_instances")
    found = _example(tolerance)
    if found is None:
        pytest.skip(f"no golden number of class {name}")
    prefix, path = found
    old = _pristine(prefix)

    def moved(delta: float) -> list[str]:
        probe = copy.deepcopy(old)
        for where, container, key in _leaves(probe, prefix):
            if where == path:
                container[key] = _number(container[key]) + delta
        return compare(probe, old, prefix)

    if tolerance.exact:
        assert moved(1), (name, path)
        return
    low, high = 0.0, 1.0
    while not moved(high):
        high *= 2.0
    for _ in range(80):
        mid = (low + high) / 2
        low, high = (mid, high) if not moved(mid) else (low, mid)
    assert low > 0, (name, path)
    assert moved(10 * low), (name, path, low)
    assert not moved(0.1 * low), (name, path, low)


def test_the_comparison_catches_a_change():
    """The comparison itself on made-up values: a float64 run's change of 1e-7 relative is caught,
    rounding is not; strings and missing keys are caught."""
    old = cases.encode({"x": np.array([1.0, 2.0, 1e-17]), "s": "a"})
    assert not compare(cases.encode({"x": np.array([1.0 + 1e-15, 2.0, -3e-17]), "s": "a"}), old, "runs/c")
    assert compare(cases.encode({"x": np.array([1.0 + 1e-7, 2.0, 1e-17]), "s": "a"}), old, "runs/c")
    assert compare({"x": old["x"], "s": "b"}, old, "runs/c")
    assert compare({"s": "a"}, old, "runs/c")
    assert compare({"x": old["x"], "s": "a"}, old, "nowhere/c"), "an unclassified number is refused"


def test_the_validations_catch_a_change():
    """The validated classes still catch a real change. location: a worst point moved to where the
    claim's ratio is another is refused. lower_bound_search: an instance scaled beyond its
    conditions, a value that is not the instance's, one above the worst case, one collapsed."""
    import copy

    from fedbound.pep import certify
    from fedbound.theory.audit import audit_claim, claims_of

    claim = next(c for c in claims_of("fednova") if c.id == "fedprox.limits_132")
    key = f"fednova/{claim.id}/{claim.variant}"
    report = audit_claim(claim, samples=400, iterations=2)
    new = {key: cases.encode({"violation_ratio": report.violation_ratio, "worst_unit": report.worst_unit})}
    old = {key: GOLDEN["sections"]["audits"][key]}
    assert not validate_audits(new, old)
    moved = copy.deepcopy(new)
    moved[key]["worst_unit"] = [1.0 - z for z in report.worst_unit]
    assert validate_audits(moved, old)

    cert = certify("fedavg", K=2, R=1, zeta=0.0).to_dict()
    pkey = 'fedavg {"K": 2, "R": 1, "zeta": 0.0}'
    new = {pkey: cases.encode({k: cert[k] for k in ("worst_case", "lower_bound", "status", "duality_gap",
                                                   "replay_value", "lower_bound_instance")})}
    old = {pkey: GOLDEN["sections"]["pep"][pkey]}
    assert not validate_pep(new, old)
    for change in ("scale", "value", "above", "collapse"):
        bad = copy.deepcopy(new)
        entry = bad[pkey]
        if change == "scale":
            entry["lower_bound_instance"]["x0"] = [1.5 * x for x in entry["lower_bound_instance"]["x0"]]
        elif change == "value":
            entry["lower_bound"] *= 0.95
        elif change == "above":
            entry["lower_bound"] = entry["worst_case"] * 1.01
        else:
            entry["lower_bound"] *= 0.5
        assert validate_pep(bad, old), change
