"""Exact analysis of any algorithm on quadratics (fedbound.verify.exact): the round map obtained by
autograd of one round against the hand-derived maps (quadratic_rounds: FedAvg, FedProx, FedNova;
the per-mode closed forms of server heavy-ball and Nesterov momentum), SD-GT's operator
(verify.operator), the runs themselves (their fixed point and their measured contraction), and the
refusals."""
import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fedbound.algorithms import SDGT, registry
from fedbound.algorithms.federated.round import Federated
from fedbound.algorithms.optim import client, server
from fedbound.algorithms.optim.base import Transform
from fedbound.errors import ValidationError
from fedbound.local_solver import LocalSolver
from fedbound.network import Network
from fedbound.tasks import LogisticRegression, Quadratic
from fedbound.verify import StateLayout, exact_round, sdgt_operator
from fedbound.verify.operator import FIELDS
from fedbound.verify.quadratic_rounds import QuadraticProblem, fixed_point, round_map


def weighted_quadratic(seed: int, n: int, d: int) -> Quadratic:
    """A heterogeneous quadratic (eigenvalues in [0.2, 1]) with random weights p_i."""
    H, b, _ = Quadratic.generate(n, d, kappa=5.0, mu=0.2, seed=seed).arrays()
    p = np.random.default_rng(seed).uniform(0.5, 1.5, n)
    return Quadratic(H, b, weights=p / p.sum())


def problem_of(task) -> QuadraticProblem:
    return QuadraticProblem.build(*task.arrays())


def fedavg_on_round(task, lr, tau, server_lr, beta, nesterov):
    """FedAvg clients, server heavy-ball or Nesterov momentum, built on the round itself."""
    return Federated(task, client=client.sgd(lr), server=server.momentum(server_lr, beta, nesterov),
                     local_steps=tau)


def server_momentum_method(task, lr, tau, server_lr, beta, nesterov):
    """FedAvg with server Nesterov momentum on the round, or the registered FedAvgM (heavy ball)."""
    if nesterov:
        return fedavg_on_round(task, lr, tau, server_lr, beta, True)
    return registry.build("fedavgm", task, lr=lr, local_steps=tau, server_lr=server_lr,
                          server_momentum=beta, participation="full")


# ---- automatic == hand-derived: FedAvg, FedProx, FedNova ------------------------------------------
SOLVERS = {"sgd": {}, "prox": {"proximal_mu": None}, "momentum": {"momentum": None},
           "decay": {"lr_decay": None}}


def _algorithm(task, lr, tau, solver, value, normalized, tau_eff):
    """The algorithm with the local solver ``solver`` (its parameter ``value``), FedNova's
    normalized averaging or FedAvg's mean, and its options for the hand-derived LocalSolver."""
    options = {name: value for name in SOLVERS[solver]}
    if normalized:
        return registry.build("fednova", task, lr=lr, local_steps=tau, participation="full",
                              tau_eff=tau_eff, **options), options
    if solver == "sgd":
        return registry.build("fedavg", task, lr=lr, local_steps=tau, participation="full"), options
    if solver == "prox":
        return registry.build("fedprox", task, lr=lr, local_steps=tau, proximal_mu=value,
                              participation="full"), options
    transform = client.momentum(lr, value) if solver == "momentum" else client.sgd(lr, value)
    return Federated(task, client=transform, server=server.sgd(), local_steps=tau), options


@settings(max_examples=60)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 4), d=st.integers(1, 3), data=st.data(),
       lr=st.floats(0.01, 0.3), solver=st.sampled_from(sorted(SOLVERS)), value=st.floats(0.05, 0.9),
       normalized=st.booleans(), tau_eff=st.sampled_from(["accumulation", "steps", 2.5]))
def test_automatic_equals_hand_derived(seed, n, d, data, lr, solver, value, normalized, tau_eff):
    """Fixed point and spectral radius of FedAvg/FedProx/FedNova (and FedAvg with a momentum or
    decayed local solver) obtained by autograd of the round equal quadratic_rounds' to 1e-10."""
    tau = data.draw(st.lists(st.integers(1, 6), min_size=n, max_size=n))
    task = weighted_quadratic(seed, n, d)
    algorithm, options = _algorithm(task, lr, tau, solver, value, normalized, tau_eff)
    exact = exact_round(algorithm)
    aggregation = "normalized" if normalized else "mean"
    solver_ = LocalSolver.from_options({"lr": lr, **options})
    hand = fixed_point(problem_of(task), tau, solver_, aggregation, tau_eff)
    assert exact.fields == ("x_g",) and exact.conserved.shape[1] == 0
    np.testing.assert_allclose(exact.M, round_map(problem_of(task), tau, solver_, aggregation,
                                                  tau_eff).M, rtol=0, atol=1e-12)
    scale = max(1.0, float(np.max(np.abs(hand["fixed_point"]))))
    np.testing.assert_allclose(exact.fixed_point, hand["fixed_point"], rtol=0, atol=1e-10 * scale)
    assert abs(exact.spectral_radius - hand["spectral_radius"]) <= 1e-10
    assert exact.converges == bool(hand["converges"])
    np.testing.assert_allclose(exact.x_star, hand["x_star"], rtol=0, atol=1e-10 * scale)
    assert exact.distance_to_x_star == pytest.approx(hand["distance_to_x_star"], abs=1e-10 * scale)


# ---- server momentum: the per-mode closed forms, and the contraction measured on runs --------------
def per_mode_radius(task, lr, tau, server_lr, beta, nesterov) -> float:
    """rho of server momentum over FedAvg clients, by hand: with A = I - M_FedAvg (symmetric for
    SGD clients) and the error e = x - x~, the pseudo-gradient is A e and each eigenvalue a of A
    gives the 2x2 block of (e, v): heavy ball [[1 - eta a, -eta beta], [a, beta]] (trace
    1 + beta - eta a, determinant beta), Nesterov [[1 - eta (1 + beta) a, -eta beta^2], [a, beta]]
    (trace 1 + beta - eta (1 + beta) a, determinant beta (1 - eta a))."""
    A = np.eye(task.d) - round_map(problem_of(task), tau, LocalSolver(lr)).M
    a = np.linalg.eigvalsh((A + A.T) / 2)
    trace = 1 + beta - server_lr * ((1 + beta) if nesterov else 1.0) * a
    det = beta * (1 - server_lr * a) if nesterov else np.full_like(a, beta)
    root = np.sqrt((trace ** 2 - 4 * det).astype(complex))
    return float(np.max(np.abs(np.concatenate([(trace + root) / 2, (trace - root) / 2]))))


def run_states(algorithm, exact, rounds: int) -> np.ndarray:
    """The augmented states z_1 .. z_rounds of the algorithm's own run from init (rows)."""
    state, out = algorithm.init(), []
    for _ in range(rounds):
        state = algorithm.step(state)
        out.append(exact.layout.flatten(state).numpy()[exact.read])
    return np.stack(out)


def along_dominant_mode(algorithm, exact, rounds: int = 30) -> np.ndarray:
    """The measured contraction along the dominant mode: |c_{t+1}| / |c_t| over the rounds t of the
    algorithm's own run from init where c_t is far above roundoff (at least two), c_t = l^H (z_t -
    z*), z_t the augmented state after t rounds and l the left eigenvector of M of its dominant
    eigenvalue (the run's coordinate along the dominant mode in the eigenbasis, whatever the other
    modes do: complex pairs included)."""
    lam, left = np.linalg.eig(exact.M.T)
    mode = left[:, int(np.argmax(np.abs(lam)))]
    c = np.abs((run_states(algorithm, exact, rounds) - exact.state[exact.read]) @ mode.conj())
    c = c[c > 1e-6 * max(1.0, float(np.max(np.abs(exact.state))))]
    assert c.size >= 3
    return c[1:] / c[:-1]


def power_iteration(algorithm, exact, rounds: int, scale: float = 1e-3) -> np.ndarray:
    """The measured contraction of a long run: ||e_{k+1}|| / ||e_k|| for the deviation e_k of the
    augmented state from the fixed point along the algorithm's own steps, rescaled to norm
    ``scale`` after every round (a rescaling commutes with the affine map's linear part, so the run
    lasts as long as needed without reaching roundoff; no eigenvector is used)."""
    template = algorithm.step(algorithm.init())
    layout, read, star = exact.layout, exact.read, exact.state
    e = layout.flatten(template).numpy()[read] - star[read]
    ratios = []
    for _ in range(rounds):
        z = star.copy()
        z[read] += e * (scale / np.linalg.norm(e))
        e = layout.flatten(algorithm.step(layout.rebuild(template, torch.as_tensor(z)))).numpy()[read] - star[read]
        ratios.append(np.linalg.norm(e) / scale)
    return np.array(ratios)


MOMENTUM = dict(seed=st.integers(0, 10**6), n=st.integers(2, 4), d=st.integers(1, 3),
                data=st.data(), server_lr=st.floats(0.3, 1.5), beta=st.floats(0.1, 0.9),
                nesterov=st.booleans())


@settings(max_examples=30)
@given(lr=st.floats(0.005, 0.2), **MOMENTUM)
def test_server_momentum_radius_is_the_per_mode_one_and_the_measured_one(
        seed, n, d, data, server_lr, beta, nesterov, lr):
    """FedAvgM (server heavy ball) and FedAvg with server Nesterov momentum: the automatic radius
    equals the per-mode closed form to 1e-10 and the contraction of the run's deviation along the
    dominant mode, every round, to 1e-8."""
    tau = data.draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    task = weighted_quadratic(seed, n, d)
    algorithm = server_momentum_method(task, lr, tau, server_lr, beta, nesterov)
    exact = exact_round(algorithm)
    assert exact.fields == ("x_g", "server.velocity")
    assert abs(exact.spectral_radius - per_mode_radius(task, lr, tau, server_lr, beta, nesterov)) <= 1e-10
    np.testing.assert_allclose(along_dominant_mode(algorithm, exact), exact.spectral_radius,
                               rtol=0, atol=1e-8)


@pytest.fixture(scope="module")
def plugin_algorithm(tmp_path_factory):
    """The class of the algorithm that ``fedbound new plugin`` writes (FedAvg with server Nesterov
    momentum), executed from the generated file; what it registers is removed again."""
    import importlib.util

    from fedbound.algorithms.registry import ALGORITHMS
    from fedbound.extend import new_plugin

    root = tmp_path_factory.mktemp("exact-plugin") / "plugin"
    new_plugin(root, "exactnesterov")
    ALGORITHMS.load()
    saved = dict(ALGORITHMS._entries), dict(ALGORITHMS._origins)
    spec = importlib.util.spec_from_file_location(
        "generated_algorithm", root / "fedbound_exactnesterov" / "algorithm.py")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    finally:
        ALGORITHMS._entries, ALGORITHMS._origins = saved
        ALGORITHMS._order = None
    return module.NesterovFedAvg


@settings(max_examples=20)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 4), d=st.integers(1, 3), data=st.data(),
       lr=st.floats(0.005, 0.2), beta=st.floats(0.0, 0.9))
def test_the_generated_plugin_algorithm_radius_is_its_measured_contraction(
        plugin_algorithm, seed, n, d, data, lr, beta):
    """The generated plugin's algorithm, as the user's file defines it: the automatic radius equals
    the per-mode closed form of server Nesterov momentum (server step 1) to 1e-10 and the measured
    contraction along the dominant mode of its own run, every round, to 1e-8."""
    tau = data.draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    task = weighted_quadratic(seed, n, d)
    algorithm = plugin_algorithm(task, lr=lr, local_steps=tau, server_momentum=beta)
    exact = exact_round(algorithm)
    assert abs(exact.spectral_radius - per_mode_radius(task, lr, tau, 1.0, beta, True)) <= 1e-10
    np.testing.assert_allclose(along_dominant_mode(algorithm, exact), exact.spectral_radius,
                               rtol=0, atol=1e-8)


@settings(max_examples=20)
@given(lr=st.floats(0.002, 0.03), **MOMENTUM)
def test_server_momentum_radius_is_the_contraction_of_a_long_run(
        seed, n, d, data, server_lr, beta, nesterov, lr):
    """Where the dominant eigenvalue is real and simple, the per-round contraction of the distance
    of the augmented state to its fixed point along a long run (power iteration on the run's own
    steps) settles at the automatic radius to 1e-8."""
    tau = data.draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    task = weighted_quadratic(seed, n, d)
    algorithm = server_momentum_method(task, lr, tau, server_lr, beta, nesterov)
    exact = exact_round(algorithm)
    lam = exact.eigenvalues
    assume(abs(lam[0].imag) < 1e-12 and abs(lam[1]) <= 0.98 * abs(lam[0]))   # real, simple, a gap
    rounds = int(np.ceil(np.log(1e-11) / np.log(abs(lam[1]) / abs(lam[0])))) + 20
    ratios = power_iteration(algorithm, exact, rounds)
    assert abs(ratios[-1] - exact.spectral_radius) <= 1e-8


def test_the_issue_example_fedavgm_contraction():
    """fedavgm --server-lr 1 --server-momentum 0.6: the slowest mode is a complex pair, so the
    radius is sqrt(0.6) (heavy ball: determinant beta per mode), as measured along the mode."""
    task = Quadratic.generate(5, 3, seed=0)
    algorithm = registry.build("fedavgm", task, lr=0.05, local_steps=5, server_lr=1.0,
                               server_momentum=0.6, participation="full")
    exact = exact_round(algorithm)
    assert exact.spectral_radius == pytest.approx(np.sqrt(0.6), abs=1e-12)
    np.testing.assert_allclose(along_dominant_mode(algorithm, exact), np.sqrt(0.6), rtol=0, atol=1e-8)


# ---- SD-GT: the same operator as verify.operator ---------------------------------------------------
@pytest.mark.parametrize("K, gamma, topology, S, m", [(3, 0.05, "ring", 3, 4), (1, 0.1, "complete", 2, 3),
                                                      (5, 0.02, "ring", 2, 5)])
def test_sdgt_equals_its_operator(K, gamma, topology, S, m):
    task = Quadratic.generate(S * m, 3, kappa=4.0, mu=0.5, seed=K)
    algorithm = SDGT(task, Network.from_topology(topology, S, m), lr=gamma, local_steps=K)
    exact, op = exact_round(algorithm), sdgt_operator(algorithm)
    assert abs(exact.spectral_radius - op.spectral_radius) <= 1e-10
    for name in FIELDS:       # psi is written, not read: its fixed value follows from z*
        np.testing.assert_allclose(exact.value(name), op.field(op.fixed_point, name), rtol=0, atol=1e-10)
    assert exact.conserved.shape[1] == S * task.d    # the subnet sums of z, (39)
    assert exact.distance_to_x_star <= 1e-10


# ---- every affine algorithm: its run reaches the exact fixed point -------------------------------
AFFINE = [
    ("fedavg", {"lr": 0.1, "local_steps": [1, 3, 2, 4]}, 0, False),
    ("fedprox", {"lr": 0.1, "local_steps": [1, 3, 2, 4], "proximal_mu": 0.5, "server_lr": 0.8}, 0, False),
    ("fedavgm", {"lr": 0.1, "local_steps": 3, "server_momentum": 0.5}, 0, False),
    ("fednova", {"lr": 0.1, "local_steps": [1, 3, 2, 4], "momentum": 0.3, "server_momentum": 0.2}, 0, False),
    # cross-client VR updates c by the participants' changes: c - sum_j p_j C_j is conserved
    ("fednova", {"lr": 0.1, "local_steps": [1, 3, 2, 4], "vr": "corrected"}, "d", True),
    ("fedavg-vr", {"lr": 0.1, "local_steps": [1, 3, 2, 4]}, "d", True),
    ("scaffold-fl", {"lr": 0.1, "local_steps": 3}, "d", True),
    ("scaffold", {"lr": 0.1, "local_steps": 3}, "d", True),
    ("feddyn", {"lr": 0.1, "local_steps": 3, "alpha": 0.5}, "d", True),
    ("afga", {"lr": 0.1, "local_steps": 3, "server_optimizer": "sgd", "server_lr": 1.0}, 0, False),
    ("dsgd", {"lr": 0.1}, 0, False),
    ("gt", {"lr": 0.1}, "d", True),
    ("scaffnew", {"lr": 0.1, "local_steps": 3}, 0, True),
    ("sd-fedavg", {"lr": 0.1, "local_steps": 3}, 0, False),
    ("sdgt", {"lr": 0.1, "local_steps": 3}, "Sd", True),
]


@pytest.mark.parametrize("name, options, conserved, consistent", AFFINE,
                         ids=[f"{a[0]}-{i}" for i, a in enumerate(AFFINE)])
def test_runs_reach_the_exact_fixed_point(name, options, conserved, consistent):
    """Control variates (SCAFFOLD, FedDyn, VR), gradient tracking and SD-GT included: the run from
    init reaches z* (M z* + v = z*), at x* exactly for the consistent methods."""
    task = Quadratic.generate(4, 2, kappa=3.0, mu=0.5, seed=3)
    spec = registry.get(name)
    network = Network.from_topology("ring", 1 if spec.family == "decentralized" else 2,
                                    4 if spec.family == "decentralized" else 2)
    if "participation" in {o.name for o in spec.options}:
        options = {**options, "participation": "full"}
    algorithm = registry.build(name, task, network if spec.network != "none" else None, **options)
    exact = exact_round(algorithm)
    z = exact.state[exact.read]
    np.testing.assert_allclose(exact.M @ z + exact.v, z, rtol=0, atol=1e-12)
    assert exact.conserved.shape[1] == {0: 0, "d": task.d, "Sd": 2 * task.d}[conserved]
    assert exact.converges
    if consistent:
        assert exact.distance_to_x_star <= 1e-10
    rounds = int(np.ceil(np.log(1e-13) / np.log(exact.spectral_radius))) + 20
    state = algorithm.init()
    for _ in range(rounds):
        state = algorithm.step(state)
    np.testing.assert_allclose(exact.layout.flatten(state).numpy(), exact.state, rtol=0, atol=1e-10)


# ---- the augmented state ---------------------------------------------------------------------------
def test_state_layout_round_trip():
    """NamedTuple server states, nested NamedTuples and None fields: flatten and rebuild are
    inverse, and only floating tensors are taken (not t, rng, K, the counters, integer tensors)."""
    task = Quadratic.generate(4, 2, seed=0)
    fedavgm = registry.build("fedavgm", task, lr=0.05, server_momentum=0.5)
    dadam = registry.build("dadam", task, Network.from_topology("ring", 1, 4), lr=0.05)
    for algorithm, field in ((fedavgm, "server"), (dadam, "moments")):
        state = algorithm.step(algorithm.init())
        layout = StateLayout(state)
        z = torch.randn(layout.size, dtype=torch.float64)
        rebuilt = layout.rebuild(state, z)
        assert torch.equal(layout.flatten(rebuilt), z)
        assert type(getattr(rebuilt, field)) is type(getattr(state, field))
        assert torch.equal(rebuilt.rng, state.rng) and (rebuilt.t, rebuilt.K) == (state.t, state.K)
    assert [f.name for f in StateLayout(fedavgm.step(fedavgm.init())).fields] == \
        ["x_g", "server.velocity", "weights"]


def test_fields_written_but_not_read_follow_from_the_fixed_point():
    task = weighted_quadratic(0, 3, 2)
    exact = exact_round(registry.build("fedavg", task, lr=0.1, local_steps=2))
    assert exact.fields == ("x_g",)
    np.testing.assert_allclose(exact.value("weights"), task.weights.numpy(), rtol=0, atol=1e-15)


# ---- refusals ----------------------------------------------------------------------------------------
ROUND = {"lr": 0.05, "local_steps": 2}


@pytest.mark.parametrize("name, options", [
    ("fedadam", {**ROUND, "participation": "full"}), ("fedadagrad", {**ROUND, "participation": "full"}),
    ("fedyogi", {**ROUND, "participation": "full"}), ("fedamsgrad", ROUND), ("afga", ROUND),
    ("fedada2", ROUND), ("dadam", {"lr": 0.05})])
def test_adam_type_is_refused_with_the_reason(name, options):
    task = Quadratic.generate(4, 2, seed=0)
    network = Network.from_topology("ring", 1, 4) if registry.get(name).network == "required" else None
    with pytest.raises(ValidationError, match="not affine") as info:
        exact_round(registry.build(name, task, network, **options))
    assert "second_moment" in str(info.value) and "square root of a second moment" in str(info.value)


def test_random_participation_and_noise_are_refused():
    task = Quadratic.generate(6, 2, seed=0)
    with pytest.raises(ValidationError, match=r"random draws.*--participation full"):
        exact_round(registry.build("fedavg", task, lr=0.05, clients_per_round=3))
    with pytest.raises(ValidationError, match=r"random draws"):
        exact_round(SDGT(task, Network.from_topology("ring", 2, 3), lr=0.05, local_steps=2,
                         clients_per_subnet=2))
    with pytest.raises(ValidationError, match=r"gradient noise \(sigma = 0.1\)"):
        exact_round(registry.build("fedavg", task.with_noise(0.1), lr=0.05))


def test_other_tasks_and_round_varying_maps_are_refused():
    with pytest.raises(ValidationError, match="quadratic task"):
        exact_round(registry.build("fedavg", LogisticRegression.generate(4, dim=3, num_classes=2, max_size=20), lr=0.05))
    with pytest.raises(ValidationError, match="float64"):
        exact_round(registry.build("fedavg", Quadratic.generate(4, 2, dtype=torch.float32), lr=0.05))
    task = Quadratic.generate(4, 2, seed=0)
    with pytest.raises(ValidationError, match="changes from round to round"):   # averages every 2nd
        exact_round(registry.build("pga", task, Network.from_topology("ring", 1, 4), lr=0.05, period=2))


def _server(update):
    """A server transform with one floating state tensor s and the update (g, s) -> (u, s+)."""
    def step(grads, state, params):
        updates, new = update(grads, state[0])
        return updates, (new,)
    return Transform(lambda params: (torch.zeros((), dtype=params.dtype),), step)


def test_a_drifting_conserved_quantity_and_a_detached_state_are_refused():
    task = Quadratic.generate(4, 2, seed=0)
    counter = Federated(task, client=client.sgd(0.05), server=_server(lambda g, s: (-g, s + 1.0)))
    with pytest.raises(ValidationError, match="no fixed point"):
        exact_round(counter)
    detached = Federated(task, client=client.sgd(0.05), server=_server(lambda g, s: (-g.detach(), s)))
    with pytest.raises(ValidationError, match="detached"):
        exact_round(detached)
