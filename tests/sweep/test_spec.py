"""The sweep SPEC: crossing, zipping, dedup, and every bad input refused with one clear line."""
import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.errors import FedboundError, InputTypeError, UnknownNameError, ValidationError
from fedbound.sweep import spec as S

TASK = {"name": "lsq", "n": 6, "d": 3, "rows": 5}


def spec(**changes):
    raw = {"algorithm": "fedavg", "task": TASK, "rounds": 3, "grid": {"lr": 0.1}}
    raw.update(changes)
    return S.parse(raw)


def test_lists_cross_and_zip_groups_pair():
    s = spec(algorithm=["fedavg", "fedprox"],
             grid={"lr": [0.1, 0.2], "proximal_mu": 0.5, "seed": [0, 1, 2],
                   "zip": {"local_steps": [1, 4], "clients_per_round": [6, 3]}})
    assert len(s.cells) == 2 * 2 * 3 * 2
    pairs = {(c.options["local_steps"], c.options["clients_per_round"]) for c in s.cells}
    assert pairs == {(1, 6), (4, 3)}
    assert all("proximal_mu" not in c.options for c in s.cells if c.algorithm == "fedavg")
    assert all(c.options["proximal_mu"] == 0.5 for c in s.cells if c.algorithm == "fedprox")
    # SPEC order: algorithm outermost, then the grid keys in order, the last varying fastest
    assert [c.seed for c in s.cells[:6:2]] == [0, 1, 2]
    assert [c.options["local_steps"] for c in s.cells[:2]] == [1, 4]


def test_an_option_of_another_algorithm_only_goes_where_it_applies_and_cells_dedupe():
    s = spec(algorithm=["fedavg", "fedprox"], grid={"lr": 0.1, "proximal_mu": [0.1, 0.2]})
    assert [c.algorithm for c in s.cells] == ["fedavg", "fedprox", "fedprox"]


@settings(max_examples=30)
@given(lrs=st.lists(st.floats(1e-3, 1.0), min_size=1, max_size=4, unique=True),
       seeds=st.lists(st.integers(0, 1000), min_size=1, max_size=4, unique=True),
       steps=st.lists(st.integers(1, 5), min_size=1, max_size=3, unique=True))
def test_cells_are_the_product(lrs, seeds, steps):
    s = spec(grid={"lr": lrs, "seed": seeds, "local_steps": steps})
    got = {(c.options["lr"], c.seed, c.options["local_steps"]) for c in s.cells}
    assert got == set(itertools.product(lrs, seeds, steps))
    assert len(s.cells) == len(got)


def test_canonical_form_ignores_key_order_and_text_round_trips():
    a = spec(grid={"lr": [0.1, 0.2], "seed": [1]})
    b = S.loads(json.dumps({"grid": {"lr": [0.1, 0.2], "seed": [1]}, "rounds": 3, "task": TASK,
                            "algorithm": "fedavg"}))
    assert a.canonical == b.canonical and a.cells == b.cells


@pytest.mark.parametrize("changes, error, words", [
    ({"algoritm": "fedavg"}, UnknownNameError, "did you mean 'algorithm'"),
    ({"algorithm": "fedavgg"}, UnknownNameError, "did you mean 'fedavg'"),
    ({"algorithm": []}, ValidationError, "at least one"),
    ({"grid": {"lrr": [0.1]}}, UnknownNameError, "did you mean 'lr'"),
    ({"grid": {"lr": [0.1, -1.0]}}, ValidationError, "lr must be > 0"),
    ({"grid": {"lr": ["0.1"]}}, InputTypeError, "lr"),
    ({"grid": {"lr": []}}, ValidationError, "at least one value"),
    ({"grid": {"lr": 0.1, "seed": [-1]}}, ValidationError, "seed"),
    ({"grid": {"lr": 0.1, "sigma": [float("nan")]}}, FedboundError, "sigma"),
    ({"grid": {"lr": 0.1, "zip": {"seed": [1, 2], "local_steps": [1]}}}, ValidationError, "lengths"),
    ({"grid": {"lr": 0.1, "seed": [1], "zip": {"seed": [2]}}}, ValidationError, "twice"),
    ({"grid": {"lr": {"a": 1}}}, ValidationError, "object"),
    ({"rounds": -1}, ValidationError, "rounds"),
    ({"rounds": 2.5}, InputTypeError, "rounds"),
    ({"task": {"name": "lsqq"}}, UnknownNameError, "did you mean 'lsq'"),
    ({"task": {"name": "lsq", "n": 0}}, ValidationError, "task n"),
    ({"task": {"name": "lsq", "dd": 3}}, UnknownNameError, "did you mean 'd'"),
    ({"task": []}, InputTypeError, "task must be a JSON object"),
    ({"network": {"subnets": 2}}, ValidationError, "takes a network"),
    ({"batch": 1}, InputTypeError, "batch"),
    ({"grid": {}}, ValidationError, "fedavg needs lr"),
])
def test_bad_specs_are_one_line_errors(changes, error, words):
    with pytest.raises(error) as info:
        spec(**changes)
    message = str(info.value)
    assert words in message and "\n" not in message


def test_too_many_cells_refused_before_expansion():
    with pytest.raises(ValidationError, match="cells"):
        spec(grid={"lr": 0.1, "seed": list(range(1000)), "local_steps": list(range(1, 201))})


def test_a_file_that_is_not_json_is_refused(tmp_path):
    bad = tmp_path / "spec.json"
    bad.write_text('{"algorithm": NaN}')
    with pytest.raises(ValidationError, match="NaN"):
        S.load(bad)


def test_participants_beyond_the_tasks_clients_are_refused_when_parsed():
    """clients_per_round above the task's n (known once the task is built) is refused by parse,
    naming the option and the range, before anything runs (issue 31)."""
    with pytest.raises(ValidationError, match=r"grid for fedavg: clients_per_round must be an integer in "
                                              r"\[1, 6\] \(the task's n clients\), got 10"):
        spec(grid={"lr": 0.1, "clients_per_round": 10})
    with pytest.raises(ValidationError, match=r"grid for sdgt: clients_per_subnet must be in \[1, min_s m_s = 3\]"):
        spec(algorithm="sdgt", network={"subnets": 2}, grid={"lr": 0.1, "clients_per_subnet": 4})
    assert len(spec(grid={"lr": 0.1, "clients_per_round": 6}).cells) == 1


@pytest.mark.parametrize("key", [
    '{"algorithm": "fedavg", "options": {}, "seed": 0, "sigma": 0.0, "foreign": 1}',
    '{"algorithm": "nope", "options": {}, "seed": 0, "sigma": 0.0}',
    '{"algorithm": "fedavg", "options": {"bogus": 1}, "seed": 0, "sigma": 0.0}',
    '{"algorithm": "fedavg", "options": {}, "seed": -1, "sigma": 0.0}',
    'not json'])
def test_a_cell_key_fedbound_does_not_write_is_refused(key):
    with pytest.raises(FedboundError):
        S.Cell.from_key(key)


def test_cell_keys_round_trip():
    for cell in spec(grid={"lr": [0.1, 0.2], "seed": [0, 3], "sigma": 0.5}).cells:
        assert S.Cell.from_key(cell.key) == cell
