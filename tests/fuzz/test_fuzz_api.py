"""Fuzz of the Python API, generic over the registries (issue 8): every task generator, topology,
mixing measure, algorithm, registered theory result and PEP method gets bad values in every
parameter. The contract (fuzz_values.outcome): a FedboundError with a one-line message, or a result
without NaN; never another exception, never acceptance of NaN, complex numbers or junk strings."""
from __future__ import annotations

import dataclasses
import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound import network as N
from fedbound.errors import UnknownNameError
from fedbound.pep.rounds import FIELDS, RoundSpec
from fedbound import tasks as T
from fedbound.tasks import TASKS, make_task
from fuzz_values import bad_values, is_always_invalid, outcome

EXAMPLES = 6


# ---- the registries (one function each, so that a new registry is one line to point at) --------
def algorithm_specs() -> dict:
    """The algorithms to fuzz: every entry of the algorithm registry (name -> AlgorithmSpec)."""
    from fedbound.algorithms import registry
    return {spec.name: spec for spec in registry.specs()}


def theory_results() -> list:
    from fedbound.theory.registry import results
    return results()


def pep_methods() -> dict:
    """The certified methods to fuzz: every entry of the PEP method registry (name -> Method)."""
    from fedbound.pep import PEP_METHODS
    return {m.name: m for m in PEP_METHODS}


#: values for parameters that have no default (by name); every other parameter keeps its default
BASE = {"n": 4, "d": 3, "m": 3, "S": 2, "dim": 3, "gamma": 0.01, "K": 2}


def _params(fn, skip=()):
    """(name, has_default) of the keyword-passable parameters of fn."""
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in ("self", "cls") or p.name in skip:
            continue
        out.append(p.name)
    return out


def _base_kwargs(fn, extra: dict) -> dict:
    kw = {}
    for p in inspect.signature(fn).parameters.values():
        if p.name in extra:
            kw[p.name] = extra[p.name]
        elif p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            assert p.name in BASE, f"{fn.__qualname__}: give the fuzz suite a BASE value for {p.name!r}"
            kw[p.name] = BASE[p.name]
    return kw


# ---- tasks ------------------------------------------------------------------------------------
#: the seeded generators of the task classes (their own keywords)
GENERATORS = {cls.__name__: cls.generate for cls in (T.Quadratic, T.LeastSquares, T.LogisticRegression,
                                                      T.RobustRegression, T.HeavyTailedQuadratic,
                                                      T.MLPClassifier)}
TASK_SMALL = {"MLPClassifier": {"num_samples": 60, "dim": 3, "num_classes": 3, "hidden": (4,)},
              "LogisticRegression": {"dim": 3, "num_classes": 3, "max_size": 20},
              "LeastSquares": {"m": 3, "d": 3}}
GENERATOR_CASES = [(name, p) for name, gen in GENERATORS.items() for p in _params(gen)]
#: every option of every registered task preset (registry-driven: a new preset is covered)
PRESET_CASES = [(spec.name, o.name) for spec in TASKS.entries() for o in spec.options]


@pytest.mark.parametrize("name,param", GENERATOR_CASES)
@settings(max_examples=EXAMPLES)
@given(value=bad_values())
def test_task_generators(name, param, value):
    gen = GENERATORS[name]
    kwargs = {**_base_kwargs(gen, TASK_SMALL.get(name, {})), param: value}
    outcome("tasks", gen, invalid=is_always_invalid(value), **kwargs)


@pytest.mark.parametrize("name,option", PRESET_CASES)
@settings(max_examples=EXAMPLES)
@given(value=bad_values())
def test_task_presets(name, option, value):
    outcome("tasks", make_task, name, invalid=is_always_invalid(value), **{"n": 4, option: value})


def test_unknown_task_name_suggests():
    kind, exc = outcome("tasks", make_task, "quadratc", n=2, d=2)
    assert kind == "error" and isinstance(exc, UnknownNameError)


@pytest.mark.parametrize("array", ["A", "y"])
@settings(max_examples=EXAMPLES * 2)
@given(value=st.one_of(bad_values(), st.sampled_from([
    np.full((2, 3, 2), 1e200), np.full((2, 3, 2), "x"), np.ones((2, 3, 2)) * 1j,
    np.ones((2, 3)), np.ones((0, 3, 2)), np.ones((2, 3, 2), dtype=object)])))
def test_least_squares_arrays(array, value):
    from fedbound.tasks import LeastSquares

    arrays = {"A": np.ones((2, 3, 2)), "y": np.ones((2, 3))}
    arrays[array] = value
    outcome("tasks", LeastSquares, arrays["A"], arrays["y"])


# ---- network ----------------------------------------------------------------------------------
TOPOLOGY_BASE = {"erdos_renyi": {"prob": 0.9}}
TOPOLOGY_CASES = [(t, p) for t in N.TOPOLOGIES for p in ("m", "seed", *N.topology_options(t))]


@pytest.mark.parametrize("name,param", TOPOLOGY_CASES)
@settings(max_examples=EXAMPLES)
@given(value=bad_values())
def test_topologies(name, param, value):
    kwargs = {"m": 4, **TOPOLOGY_BASE.get(name, {}), param: value}
    m = kwargs.pop("m")
    outcome("network", N.topology_weights, name, m, invalid=is_always_invalid(value), **kwargs)
    outcome("network", N.Network.from_topology, name, 2, m, invalid=is_always_invalid(value),
            **kwargs)


@pytest.mark.parametrize("param", _params(N.Network.random_geometric))
@settings(max_examples=EXAMPLES)
@given(value=bad_values())
def test_random_geometric(param, value):
    kwargs = {"S": 2, "m": 4, "max_tries": 50, param: value}
    outcome("network", N.Network.random_geometric, invalid=is_always_invalid(value), **kwargs)


BAD_MATRICES = [np.array([[2.0, -1.0], [-1.0, 2.0]]), np.array([[0.5, 0.5], [0.5, 0.5]]) * -1,
                np.array([[1.0, np.nan], [0.0, 1.0]]), np.array([[np.inf, 0.0], [0.0, 1.0]]),
                np.ones((2, 3)) / 3, np.ones(3), np.zeros((0, 0)), np.array([["a", "b"], ["c", "d"]]),
                np.eye(2) * (1 + 1j), np.array([[0.6, 0.6], [0.4, 0.4]]), 3.0, "W", None,
                [[1.0], [0.5, 0.5]], np.full((2, 2), 1e300)]
MEASURES = [N.spectral_norm, N.rho_tight, N.spectral_gap, N.mixing_summary]


@pytest.mark.parametrize("fn", MEASURES + [N.validate_mixing_matrix, N.metropolis_weights,
                                           N.is_connected, N.is_doubly_stochastic, N.is_symmetric,
                                           N.Network.from_blocks],
                         ids=lambda f: f.__qualname__)
@settings(max_examples=EXAMPLES * 2)
@given(W=st.one_of(st.sampled_from(BAD_MATRICES), bad_values()))
def test_matrices(fn, W, ):
    arg = [W] if fn is N.Network.from_blocks else W
    kind, result = outcome("network", fn, arg)
    if kind == "ok" and fn in MEASURES:   # a measure of a matrix that is no mixing matrix is an error
        A = np.asarray(W, dtype=float)
        assert np.all(A >= 0) and np.allclose(A.sum(0), 1) and np.allclose(A.sum(1), 1), \
            f"{fn.__name__} measured a matrix that is not doubly stochastic: {result}"


@pytest.mark.parametrize("fn", [N.beta_from_h, N.p_from_h], ids=lambda f: f.__name__)
@settings(max_examples=EXAMPLES * 2)
@given(h=bad_values(), m=st.one_of(st.just([3, 4]), bad_values()))
def test_sampling(fn, h, m):
    outcome("network", fn, h, m)


def test_huge_network_refused_up_front():
    kind, exc = outcome("network", N.Network.from_topology, "ring", 3000, 30000)
    assert kind == "error" and "memory" in str(exc)


# ---- algorithms -------------------------------------------------------------------------------
def _algorithm_base():
    from fedbound.tasks import Quadratic
    task = Quadratic.generate(4, 3, seed=0)
    return {"task": task, "network": N.Network.from_topology("ring", 2, 2), "gamma": 0.01, "K": 2}


#: valid values of registered options that have no default
#: what every algorithm takes besides its registered options
ALGORITHM_ARGUMENTS = ("task", "network", "seed")
ALGORITHM_CASES = [(name, p) for name, spec in algorithm_specs().items()
                   for p in ALGORITHM_ARGUMENTS + tuple(o.name for o in spec.options)
                   if not (p == "network" and spec.network == "none")]


@pytest.mark.parametrize("entry", ["registry", "constructor"])
@pytest.mark.parametrize("name,param", ALGORITHM_CASES)
@settings(max_examples=EXAMPLES)
@given(value=bad_values())
def test_algorithms(entry, name, param, value):
    """A bad value for any argument or registered option, through registry.build and through the
    constructor itself (both are public), is a FedboundError; what is accepted runs 2 rounds."""
    from fedbound.algorithms import registry, run

    spec = algorithm_specs()[name]
    base = _algorithm_base()
    network = N.Network.from_topology("ring", 1, 4) if spec.default_subnets == 1 else base["network"]
    args = {"task": base["task"], "network": None if spec.network == "none" else network, "seed": 0}
    # valid values for the other options: the registered default, else the first registered example
    options = {o.name: o.default if o.default is not None else o.examples[0]
               for o in spec.options if o.required or o.default is not None}
    if param in ALGORITHM_ARGUMENTS:
        args[param] = value
    else:
        options[param] = value
    if entry == "registry":
        kind, alg = outcome("algorithms", registry.build, name, args["task"], args["network"],
                            seed=args["seed"], invalid=is_always_invalid(value), **options)
    else:
        positional = (args["task"],) + ((args["network"],) if spec.network == "required" else ())
        keywords = {"network": args["network"]} if spec.network == "optional" else {}
        kind, alg = outcome("algorithms", spec.constructor, *positional, seed=args["seed"],
                            invalid=is_always_invalid(value), **keywords, **options)
    if kind == "ok":
        outcome("algorithms", run, alg, 2)


# ---- theory -----------------------------------------------------------------------------------
def _valid(result, name: str):
    """A value inside the domain of ``name`` as ``result`` sees it (its scope, its assumptions); a
    vector input (one entry per client) gets two equal entries (so p_i = (1/2, 1/2) sums to 1)."""
    from fedbound.theory import symbols as S

    dom, _ = result.domain(name)
    if dom.integer:
        value = float(max(2, math.floor(dom.low) + 1)) if math.isinf(dom.high) else float(
            min(dom.high, math.floor(dom.low) + 1))
    elif math.isfinite(dom.low) and math.isfinite(dom.high):
        value = (dom.low + dom.high) / 2
    else:
        value = dom.low + 0.5 if math.isfinite(dom.low) else 0.5
    return [value, value] if S.resolve(name, result.scope).ndim == 1 else value


def _theory_cases():
    cases = []
    for r in theory_results():
        for v in r.variants:
            for c in r.constants(v) + ["gama"]:
                cases.append((r.id, v, c))
    return cases


@pytest.fixture(scope="module")
def results_by_id():
    return {r.id: r for r in theory_results()}


@pytest.mark.parametrize("rid,variant,name", _theory_cases())
@settings(max_examples=EXAMPLES)
@given(value=bad_values())
def test_theory_constants(results_by_id, rid, variant, name, value):
    r = results_by_id[rid]
    consts = {c: _valid(r, c) for c in r.constants(variant)}
    consts[name] = value
    invalid = is_always_invalid(value) or name == "gama"
    outcome("theory", r.evaluate, variant, invalid=invalid, **consts)
    variables = r.variant(variant).variables()
    if variables:   # max_step over the first variable; the value of that variable is not needed
        outcome("theory", r.max_step, variant, variables[0],
                invalid=invalid and name != variables[0],
                **{k: v for k, v in consts.items() if k != variables[0] or name == variables[0]})


@pytest.mark.parametrize("rid", [r.id for r in theory_results() if r.rounds in r.constants()])
@settings(max_examples=EXAMPLES * 2)
@given(eps=bad_values())
def test_theory_rounds_to_eps(results_by_id, rid, eps):
    r = results_by_id[rid]
    consts = {c: _valid(r, c) for c in r.constants() if c != r.rounds}
    invalid = is_always_invalid(eps) or (isinstance(eps, (int, float)) and not eps > 0)
    outcome("theory", r.rounds_to_eps, eps, invalid=invalid, **consts)


# ---- pep ----------------------------------------------------------------------------------------
PEP_CASES = [(name, o.name) for name, m in pep_methods().items() for o in m.options]


@pytest.mark.parametrize("name,option", PEP_CASES)
@settings(max_examples=EXAMPLES)
@given(value=bad_values())
def test_pep_options(name, option, value):
    """A bad value for any option of any certified method is refused by its validation (nothing
    is solved: Method.config, what certify runs first)."""
    outcome("pep", pep_methods()[name].config, invalid=is_always_invalid(value), **{option: value})


# ---- every option of every entry of every registry (plugins' included) ----------------------------
def registry_options():
    """(kind, entry name, option name) of every registered option: the registries of the package
    (every module imported, so every registry exists) and whatever a plugin loaded in this process
    registered, so a new kind or entry is fuzzed without being named here."""
    import importlib
    import pkgutil

    import fedbound
    from fedbound.registry import REGISTRIES
    for info in pkgutil.walk_packages(fedbound.__path__, "fedbound."):
        if info.name != "fedbound.__main__":
            importlib.import_module(info.name)
    return [(kind, getattr(entry, registry.key), o.name)
            for kind, registry in REGISTRIES.items() if not kind.startswith("test ")
            for entry in registry for o in getattr(entry, "options", ())]


REGISTRY_OPTION_CASES = registry_options()


@pytest.mark.parametrize("kind,entry,option", REGISTRY_OPTION_CASES,
                         ids=lambda v: str(v))
@settings(max_examples=EXAMPLES)
@given(value=bad_values())
def test_every_registered_option(kind, entry, option, value):
    """A bad value for any option of any registered entry is refused by the entry's own validation
    (one-line FedboundError), or canonicalized to a value its check accepts again."""
    from fedbound.registry import REGISTRIES
    spec = REGISTRIES[kind].get(entry)
    status, result = outcome("registry", spec.check, {option: value},
                             invalid=is_always_invalid(value))
    if status == "ok" and option in result:     # the canonical value is valid itself
        declared = spec.option(option)
        outcome("registry", declared.check, declared.name, result[option])


ROUND_FIELDS = [f.name for f in dataclasses.fields(RoundSpec)]


@pytest.mark.parametrize("field", ROUND_FIELDS)
@settings(max_examples=EXAMPLES)
@given(value=bad_values())
def test_pep_round_description(field, value):
    """A bad value for any field of a round description (fedbound.pep.RoundSpec) is refused; a
    string is an option's name for the numeric fields (valid where it is an identifier)."""
    names = field in FIELDS and isinstance(value, str)
    outcome("pep", RoundSpec, invalid=is_always_invalid(value) and not names, **{field: value})
