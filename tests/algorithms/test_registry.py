"""Every registered algorithm (hypothesis over options and seeds): init and step are pure, the same
seed gives a bitwise-identical run, and the communication counters match the participation."""
import dataclasses

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from fedbound.algorithms import registry
from fedbound.errors import UnknownNameError
from fedbound.network import Network
from fedbound.tasks import Quadratic

N, D, SIZES = 6, 3, (2, 4)
TASK = Quadratic.generate(N, D, kappa=4.0, mu=0.5, seed=0).with_noise(0.2)
RINGS = Network.from_topology("ring", 2, list(SIZES))
ONE_RING = Network.from_topology("ring", 1, N)
EQUAL_RINGS = Network.from_topology("ring", 2, N // 2)
CLUSTERED = ("cafga", "cafga-a")     # equal clusters (N = K n), M = K m
GOSSIP = ("afga", "afga-a", *CLUSTERED)
ONE_SUBNET = ("gt", "dsgd", "pga", "dadam")   # decentralized over one connected subnet


@st.composite
def configurations(draw, name):
    spec = registry.get(name)
    options = {}
    for o in spec.options:
        if o.name == "lr":
            options["lr"] = draw(st.sampled_from([0.02, 0.05]))
        elif o.name == "mu":
            options["mu"] = draw(st.sampled_from([0.0, 0.3]))
        elif o.name == "alpha":
            options["alpha"] = draw(st.sampled_from([0.1, 1.0]))
        elif o.name == "K":
            options[o.name] = draw(st.integers(1, 3))
        elif o.name == "local_steps" and name in GOSSIP:   # AFGA's I: one count for all
            options[o.name] = draw(st.integers(1, 3))
        elif o.name == "local_steps":   # one count, or one per client
            options[o.name] = draw(st.one_of(st.integers(1, 3),
                                             st.lists(st.integers(1, 3), min_size=N, max_size=N)))
        elif o.name in ("momentum", "server_momentum"):
            options[o.name] = draw(st.sampled_from([None, 0.5]))
        elif o.name == "tau_eff":
            options[o.name] = draw(st.sampled_from(["accumulation", "steps", 2.5]))
        elif o.name == "vr":
            options[o.name] = draw(st.sampled_from(["corrected", "literal"]))
        elif o.name == "clients_per_round":   # CAFGA: m per cluster of EQUAL_RINGS
            options[o.name] = draw(st.sampled_from([2, 4, 6]) if name in CLUSTERED else st.integers(1, N))
        elif o.name == "h":
            options["h"] = draw(st.integers(1, min(SIZES)))
        elif o.name == "period":
            options["period"] = draw(st.integers(1, 3))
    if options.get("momentum") is not None:   # FedNova's solvers: one of prox, momentum
        options.pop("mu", None)
    network = {"required": ONE_RING if name in ONE_SUBNET else RINGS,
               "optional": EQUAL_RINGS if name in CLUSTERED else RINGS, "none": None}[spec.network]
    if name == "scaffold" and draw(st.booleans()):
        network = None
    return options, network, draw(st.integers(0, 2**31))


def snapshot(state):
    return {f.name: (getattr(state, f.name).clone() if isinstance(getattr(state, f.name), torch.Tensor)
                     else getattr(state, f.name)) for f in dataclasses.fields(state)}


def same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def states_equal(a, b) -> bool:
    return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))


def expected_participants(name, alg, state) -> int:
    spec = registry.get(name)
    if spec.family == "federated":
        return int(state.clients.numel())
    if name == "pga":   # every client uploads in the rounds that end with the global average
        return N if alg.averages(state.t - 1) else 0
    if name in ONE_SUBNET:
        return 0
    if name == "scaffnew":
        return N
    return int(state.h.sum())


@pytest.mark.parametrize("name", registry.names())
def test_registered_algorithm_is_pure_reproducible_and_counts_its_participants(name):
    @settings(max_examples=8, deadline=None)
    @given(configurations(name))
    def check(config):
        options, network, seed = config
        alg = registry.build(name, TASK, network, seed=seed, **options)
        state = alg.init()
        before = snapshot(state)
        one, two = alg.step(state), alg.step(state)
        assert states_equal(one, two)                                  # pure step
        assert all(same(v, getattr(state, k)) for k, v in before.items())   # input untouched
        again = registry.build(name, TASK, network, seed=seed, **options)
        assert states_equal(again.init(), state)                       # pure init
        a, b = one, again.step(again.init())
        for _ in range(2):
            a, b = alg.step(a), again.step(b)
        assert states_equal(a, b)                                      # same seed, same run
        k = expected_participants(name, alg, a)
        last = a.last_comm
        assert last.uploads == k and last.downloads <= N
        # SCAFFOLD sends (Delta y_i, Delta c_i): 2d floats; everything else one model (FedDyn's
        # g_i stays on the client, its h on the server)
        two = name == "scaffold" or (getattr(alg, "control_variates", None) is not None
                                     and name != "feddyn")
        floats_each = 2 * D if two else D
        assert last.upload_floats == k * floats_each
        if registry.get(name).family == "federated":
            assert last.downloads == k and last.gradient_evaluations == int(a.tau.sum())
        else:
            assert last.gradient_evaluations == a.K * N

    check()


def test_cumulative_counters_are_the_sum_of_the_rounds():
    alg = registry.build("fedadam", TASK, lr=0.05, local_steps=2, clients_per_round=3, seed=1)
    state, total = alg.init(), None
    for _ in range(4):
        state = alg.step(state)
        total = state.last_comm if total is None else total + state.last_comm
    assert state.comm == total


def test_registry_names_and_errors():
    assert {"sdgt", "sd-fedavg", "scaffold", "gt", "dsgd", "pga", "dadam", "scaffnew", "fedavg",
            "fedprox", "fedavgm", "fedadagrad", "fedadam", "fedyogi", "scaffold-fl", "fednova",
            "fedavg-vr", "fedamsgrad", "afga", "cafga", "afga-a", "cafga-a", "fedada2", "jointzero", "dja",
            "feddyn"} == set(registry.names())
    with pytest.raises(UnknownNameError, match="did you mean 'fedavg'"):
        registry.get("fedavgg")
    with pytest.raises(UnknownNameError, match="did you mean 'local_steps'"):
        registry.build("fedavg", TASK, lr=0.1, local_step=2)
    with pytest.raises(ValueError, match="fedavg needs lr"):
        registry.build("fedavg", TASK)
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.get("fedavg"))
