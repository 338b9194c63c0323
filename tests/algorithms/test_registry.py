"""Every registered algorithm (hypothesis over options and seeds): init and step are pure, the same
seed gives a bitwise-identical run, and the communication counters match the participation."""
import dataclasses

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings, strategies as st

from fedbound.algorithms import registry
from fedbound.algorithms.client_rows import ClientRows
from fedbound.errors import FedboundError, UnknownNameError
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
    """Options drawn from each option's registered examples (or left unset), on the network the
    algorithm takes; combinations the algorithm refuses (e.g. FedNova's proximal and momentum
    solvers together) are redrawn."""
    spec = registry.get(name)
    options = {}
    for o in spec.options:
        values = list(o.examples)
        if o.name == "clients_per_round" and name in CLUSTERED:   # CAFGA: m per cluster of EQUAL_RINGS
            values = [2, 4, 6]
        if o.name == "clusters" and name in CLUSTERED:             # the clusters are EQUAL_RINGS
            values = []
        if o.required:
            assert values, f"{name}: required option {o.name} declares no examples"
            options[o.name] = draw(st.sampled_from(values))
        elif values:
            value = draw(st.sampled_from([None] + values))
            if value is not None:
                options[o.name] = value
    network = {"required": ONE_RING if spec.default_subnets == 1 else RINGS,
               "optional": EQUAL_RINGS if name in CLUSTERED else RINGS, "none": None}[spec.network]
    if name == "scaffold" and draw(st.booleans()):
        network = None
    seed = draw(st.integers(0, 2**31))
    try:
        registry.build(name, TASK, network, seed=seed, **options)
    except FedboundError:
        assume(False)
    return options, network, seed


def snapshot(state):
    return {f.name: (getattr(state, f.name).clone() if isinstance(getattr(state, f.name), torch.Tensor)
                     else getattr(state, f.name).dense() if isinstance(getattr(state, f.name), ClientRows)
                     else getattr(state, f.name)) for f in dataclasses.fields(state)}


def same(a, b) -> bool:
    if isinstance(a, ClientRows) or isinstance(b, ClientRows):   # per-client rows: by value
        a, b = (v.dense() if isinstance(v, ClientRows) else v for v in (a, b))
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
        every = getattr(alg, "all_clients_compute", False) and alg.gossip is None   # SD-GT's SCAFFOLD
        if every or registry.get(name).family != "federated":
            assert last.gradient_evaluations == a.K * N
        elif getattr(alg, "comm_adapted", False):   # (a): adapted_compute of each ring's clients per step
            assert last.gradient_evaluations == alg.adapted_compute * alg.ring.S * a.K
        else:
            assert last.downloads == k and last.gradient_evaluations == int(a.tau.sum())

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


def test_build_takes_a_participation_object_as_well_as_a_name():
    """issue 35: a scheme built with its own constructor (or a user's object with a draw method)
    goes through registry.build as its name does."""
    from fedbound.network.sampling import UniformParticipation
    from fedbound.tasks import LeastSquares

    task = LeastSquares.generate(12, 6, 3, seed=0)
    by_object = registry.build("fedavg", task, lr=0.01, participation=UniformParticipation(12, 4))
    by_name = registry.build("fedavg", task, lr=0.01, participation="uniform", clients_per_round=4)
    first, second = (alg.step(alg.init()) for alg in (by_object, by_name))
    assert torch.equal(first.clients, second.clients) and torch.equal(first.x_g, second.x_g)

    class EveryOther:
        def draw(self, p, generator):
            from fedbound.network.sampling import Participation
            clients = torch.arange(0, 12, 2)
            return Participation(clients, p[clients] / p[clients].sum(), full=False)
    state = registry.build("fedavg", task, lr=0.01, participation=EveryOther()).step(
        registry.build("fedavg", task, lr=0.01, participation=EveryOther()).init())
    assert state.clients.tolist() == [0, 2, 4, 6, 8, 10]
    with pytest.raises(FedboundError, match="participation"):
        registry.build("fedavg", task, lr=0.01, participation=object())


def test_build_takes_a_task_presets_name_and_keeps_its_settings():
    """registry.build("fedavg", "quadratic", ...) builds the preset with its defaults, as make_task
    does; the algorithm keeps its settings (the options given, then the defaults it takes) in a
    read-only ``options``, which its repr shows; one built by its class has none recorded."""
    from fedbound.algorithms.federated.fedopt import FedAvg
    from fedbound.tasks import make_task

    by_name = registry.build("fedavg", "quadratic", lr=0.1, local_steps=2)
    by_task = registry.build("fedavg", make_task("quadratic"), lr=0.1, local_steps=2)
    a, b = by_name.init(), by_task.init()
    for _ in range(3):
        a, b = by_name.step(a), by_task.step(b)
    assert float((a.x_g - b.x_g).abs().max()) <= 1e-12 * float(b.x_g.abs().max())
    assert dict(by_name.options) == {"lr": 0.1, "local_steps": 2, "server_lr": 1.0}
    assert repr(by_name) == "FedAvg(task=Quadratic(n=12, d=10), seed=0, lr=0.1, local_steps=2, server_lr=1)"
    with pytest.raises(TypeError):
        by_name.options["lr"] = 1.0
    import copy
    assert dict(copy.deepcopy(by_name).options) == dict(by_name.options)   # a copy keeps them
    adam = registry.build("fedadam", TASK, lr=0.1, bias_correction="adam")
    assert adam.options["bias_correction"] == "adam" and adam.options["beta2"] == 0.99
    assert "bias_correction='adam'" in repr(adam) and "eps_inside_sqrt=False" in repr(adam)
    plain = FedAvg(TASK, lr=0.1)
    assert dict(plain.options) == {} and repr(plain) == "FedAvg(task=Quadratic(n=6, d=3), seed=0)"
    with pytest.raises(UnknownNameError, match="did you mean 'quadratic'"):
        registry.build("fedavg", "quadratc", lr=0.1)
