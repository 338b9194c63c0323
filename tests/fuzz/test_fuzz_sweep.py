"""Fuzz of the sweep SPEC (issue 14): every field of a valid SPEC, and whole SPECs from JSON-like
values, get bad values. The contract (fuzz_values.outcome): a FedboundError with a one-line message
or a valid Spec; an accepted SPEC then builds its task, networks and every cell's algorithm or
refuses with a FedboundError (never another exception)."""
from __future__ import annotations

import copy
import json

import numpy as np

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.sweep import spec as S
from fedbound.sweep.runner import Problem
from fuzz_values import bad_values, is_always_invalid, outcome

EXAMPLES = 6
BASE = {"algorithm": ["fedavg", "sdgt"], "task": {"name": "lsq", "n": 4, "d": 3, "rows": 3, "seed": 0},
        "network": {"subnets": 2, "topology": "ring"}, "rounds": 2,
        "grid": {"lr": [0.1, 0.2], "clients_per_subnet": 1, "seed": [0, 1], "sigma": 0.1,
                 "zip": {"local_steps": [1, 2], "clients_per_round": [4, 2]}}, "batch": True}
#: paths into BASE (keys and list indices) that the fuzz replaces
PATHS = [("algorithm",), ("algorithm", 0), ("task",), ("task", "name"), ("task", "n"), ("task", "d"),
         ("task", "rows"), ("task", "seed"), ("task", "float64"), ("task", "weights"), ("task", "data"),
         ("network",), ("network", "subnets"), ("network", "topology"), ("network", "rgg"),
         ("network", "file"), ("rounds",), ("grid",), ("grid", "lr"), ("grid", "lr", 1), ("grid", "clients_per_subnet"),
         ("grid", "seed"), ("grid", "seed", 0), ("grid", "sigma"), ("grid", "zip"),
         ("grid", "zip", "local_steps"), ("grid", "zip", "local_steps", 0), ("batch",)]


def replaced(path, value):
    raw = copy.deepcopy(BASE)
    where = raw
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = value
    return raw


def parse_and_build(raw):
    spec = S.parse(raw)
    problem = Problem(spec)
    return [type(problem.algorithm(c)).__name__ for c in spec.cells]


def test_the_base_spec_is_valid():
    kind, algorithms = outcome("sweep", parse_and_build, copy.deepcopy(BASE))
    # lr, local_steps (and seed) name the same options of FedAvg and SD-GT: 2 x 2 x 2 cells each
    assert kind == "ok" and len(algorithms) == 2 * (2 * 2 * 2)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: ".".join(map(str, p)))
@settings(max_examples=EXAMPLES)
@given(value=bad_values())
def test_spec_fields(path, value):
    outcome("sweep", parse_and_build, replaced(path, value))


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=5), lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)


@settings(max_examples=EXAMPLES * 10)
@given(extra=st.dictionaries(st.sampled_from(S.TOP_KEYS + ("grid_", "Task")), JSON, max_size=3))
def test_whole_specs(extra):
    outcome("sweep", parse_and_build, {**BASE, **extra})


@settings(max_examples=EXAMPLES * 5)
@given(text=st.text(max_size=40) | st.builds(json.dumps, JSON))
def test_spec_text(text):
    outcome("sweep", S.loads, text)


# ---- the Python grids (fedbound.sweep.evaluate, runs, Executor) ------------------------------------
def constant_output(seed, **configuration):
    return np.array([1.0, float(seed)])


@pytest.mark.parametrize("param", ["grid", "seeds", "progress"])
@settings(max_examples=EXAMPLES * 2)
@given(value=bad_values())
def test_evaluate_arguments(param, value):
    from fedbound.sweep import evaluate

    kwargs = {"grid": {"a": [1, 2], "zip": {"b": [1, 2], "c": [3, 4]}}, "seeds": 2, param: value}
    outcome("sweep", evaluate, constant_output, invalid=param != "grid" and is_always_invalid(value),
            **kwargs)


@pytest.fixture(scope="module")
def small_task():
    from fedbound.tasks import LeastSquares
    return LeastSquares.generate(4, 3, 2, seed=0)


@pytest.mark.parametrize("param", ["rounds", "grid", "seeds", "batch"])
@settings(max_examples=EXAMPLES, deadline=None)
@given(value=bad_values())
def test_runs_arguments(small_task, param, value):
    from fedbound.algorithms import registry
    from fedbound.sweep import runs

    def make(seed, lr=0.1):
        return registry.build("fedavg", small_task, seed=seed, lr=lr, local_steps=2)

    kwargs = {"rounds": 3, "grid": {"lr": [0.1, 0.2]}, "seeds": 2, param: value}
    outcome("sweep", runs, make, invalid=param != "grid" and is_always_invalid(value), **kwargs)


@pytest.mark.parametrize("param", ["ray", "address"])
@settings(max_examples=EXAMPLES * 2)
@given(value=bad_values())
def test_executor_fields(param, value):
    from fedbound.sweep import Executor

    outcome("sweep", Executor, **{param: value})
