"""DAdam (DADAM, Nazari et al. 2019, Alg. 1 with beta3 = 0): equal to a plain numpy loop with noise,
identical clients give centralized AMSGrad whatever W, W = J leaves only the last adaptive step as
disagreement, W = I is independent AMSGrad per client, and the counters."""
import json
import math

import numpy as np
import pytest
import torch

from fedbound.algorithms import DSGD, DAdam, StackedNetwork, registry, run
from fedbound.algorithms.optim import server
from fedbound.algorithms.optim.registry import SERVER_OPTIMIZERS
from fedbound.cli.main import main
from fedbound.errors import FedboundError
from fedbound.network import Network
from fedbound.tasks import Quadratic

N, D, SIGMA = 8, 4, 0.3


@pytest.fixture(scope="module")
def quad():
    return Quadratic.generate(N, D, kappa=5.0, mu=0.2, heterogeneity=1.0, seed=3)


def amsgrad(gamma, b1, b2, tau, bias="none", inside=False):
    """One AMSGrad step per call on arrays of any shape (rows = clients), zero initial moments;
    returns the additive step and the moments. ``bias``: "none" (Alg. 1 of DAdam), "adam" (m/(1 -
    b1^t) over vhat/(1 - b2^t), the max taken first) or "flower" (gamma sqrt(1 - b2^(t+1))/(1 -
    b1^(t+1)) on m, vhat); ``inside``: tau inside the root (sqrt(vhat + tau)), else outside."""
    s = {"m": 0.0, "v": 0.0, "vhat": 0.0, "t": 0}

    def step(g):
        s["t"] += 1
        t = s["t"]
        s["m"] = b1 * s["m"] + (1 - b1) * g
        s["v"] = b2 * s["v"] + (1 - b2) * g * g
        s["vhat"] = np.maximum(s["vhat"], s["v"])
        m, v, lr = s["m"], s["vhat"], gamma
        if bias == "adam":
            m, v = m / (1 - b1 ** t), v / (1 - b2 ** t)
        elif bias == "flower":
            lr = gamma * math.sqrt(1 - b2 ** (t + 1)) / (1 - b1 ** (t + 1))
        return -lr * m / (np.sqrt(v + tau) if inside else np.sqrt(v) + tau)
    return step, s


def numpy_dadam(quad, net, step, seed, rounds):
    """The plain numpy DAdam loop with AMSGrad ``step``: the models X after each of ``rounds``
    rounds, X <- W X + step(grad + noise), the noise drawn as the task draws it from ``seed``."""
    gen = torch.Generator().manual_seed(seed)
    X = np.tile(quad.x0.numpy(), (N, 1))
    for _ in range(rounds):
        noise = torch.randn(N, D, generator=gen, dtype=torch.float64).numpy() * (SIGMA / math.sqrt(D))
        X = net.W @ X + step(gradients(quad, X) + noise)
        yield X


def gradients(task, X):
    return np.einsum("nij,nj->ni", task.hessians.numpy(), X) - task.linear_terms.numpy()


def local_minimizers(task):
    """x_i* = H_i^{-1} e_i, the minimizer of f_i (rows)."""
    return np.linalg.solve(task.hessians.numpy(), task.linear_terms.numpy()[..., None])[..., 0]


def test_dadam_equals_a_plain_numpy_loop_with_noise(quad):
    net = Network.from_topology("ring", 1, [N])
    gamma, b1, b2, tau, seed = 0.02, 0.8, 0.95, 1e-3, 7
    alg = DAdam(quad.with_noise(SIGMA), net, lr=gamma, beta1=b1, beta2=b2, tau=tau, seed=seed)
    state = alg.init()
    step, moments = amsgrad(gamma, b1, b2, tau)
    for X in numpy_dadam(quad, net, step, seed, 15):
        state = alg.step(state)
        np.testing.assert_allclose(state.X.numpy(), X, rtol=0, atol=1e-12)
        np.testing.assert_allclose(state.x_g.numpy(), X.mean(axis=0), rtol=0, atol=1e-12)
        ours = state.moments
        for got, want in ((ours.first_moment, moments["m"]), (ours.second_moment, moments["v"]),
                          (ours.max_second_moment, moments["vhat"])):
            np.testing.assert_allclose(got.numpy(), want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("topology", ["ring", "star", "complete"])
def test_identical_clients_run_centralized_amsgrad_whatever_w(topology):
    """f_i = f for all i and no noise: the clients never disagree, mixing is the identity on them,
    and DAdam is one AMSGrad run on f (the adaptive method it decentralizes)."""
    base = Quadratic.generate(1, D, kappa=5.0, mu=0.2, seed=1)
    same = Quadratic(np.repeat(base.hessians.numpy(), N, axis=0),
                     np.repeat(local_minimizers(base), N, axis=0), x0=base.x0.numpy())
    traj = run(DAdam(same, Network.from_topology(topology, 1, [N]), lr=0.05, tau=1e-6), 40)
    step, _ = amsgrad(0.05, 0.9, 0.999, 1e-6)
    x = base.x0.numpy()
    for r in range(40):
        x = x + step(gradients(base, x[None])[0])
        np.testing.assert_allclose(traj.x_g[r + 1].numpy(), x, rtol=0, atol=1e-12)
    X = traj.final_state.X
    np.testing.assert_allclose(X.numpy(), X[:1].expand_as(X).numpy(), rtol=0, atol=1e-12)


def test_complete_graph_leaves_only_the_last_adaptive_step_as_disagreement(quad):
    """W = J: every client starts each iteration from the previous average, so
    x_i^{t+1} = x_bar^t + u_i^t with u_i^t its own AMSGrad step from the gradient at x_i^t: the
    consensus error is exactly the spread of the last steps, and x_bar moves by mean_i u_i^t."""
    traj = run(DAdam(quad, Network.from_topology("complete", 1, [N]), lr=0.05), 12)
    step, _ = amsgrad(0.05, 0.9, 0.999, 1e-8)
    X = np.tile(quad.x0.numpy(), (N, 1))
    for r in range(12):
        U = step(gradients(quad, X))
        X = X.mean(axis=0) + U
        np.testing.assert_allclose(traj.x_g[r + 1].numpy(), X.mean(axis=0), rtol=0, atol=1e-12)
    final = traj.final_state.X.numpy()
    np.testing.assert_allclose(final - final.mean(axis=0), U - U.mean(axis=0), rtol=0, atol=1e-12)
    assert np.sum((U - U.mean(axis=0)) ** 2) > 1e-4        # heterogeneous f_i: the steps differ


def test_identity_gossip_is_independent_amsgrad_per_client(quad):
    """W = I (no links; not a mixing Network, so set on the algorithm): each client runs AMSGrad on
    its own f_i and approaches its own minimizer x_i* = H_i^{-1} b_i, not the global x*."""
    alg = DAdam(quad, Network.from_topology("ring", 1, [N]), lr=0.01, tau=1e-8)
    alg.net = StackedNetwork([np.eye(N)])
    state = alg.init()
    step, _ = amsgrad(0.01, 0.9, 0.999, 1e-8)
    X = np.tile(quad.x0.numpy(), (N, 1))
    for _ in range(30):
        X = X + step(gradients(quad, X))
        state = alg.step(state)
    np.testing.assert_allclose(state.X.numpy(), X, rtol=0, atol=1e-12)
    local_opt = local_minimizers(quad)
    far = run(alg, 4000).final_state.X.numpy()
    assert np.max(np.abs(far - local_opt)) < 0.05 * np.max(np.abs(local_opt - quad.x_star.numpy()))


def test_counters_of_a_run(quad):
    """One model exchange per iteration over the links of W; moments stay local: no uploads, and
    3d floats of optimizer state per client per iteration; one gradient per client."""
    net = Network.from_topology("ring", 1, [N])
    T = 9
    comm = {k: v[-1] for k, v in run(DAdam(quad, net, lr=0.01), T).comm.items()}
    assert comm["d2d_exchanges"] == T and comm["d2d_messages"] == T * 2 * N
    assert comm["d2d_floats"] == T * 2 * N * D and comm["energy_d2d"] == T
    assert comm["uploads"] == comm["downloads"] == comm["upload_floats"] == comm["energy_ds"] == 0
    assert comm["gradient_evaluations"] == T * N and comm["client_state_floats"] == T * 3 * D * N


def test_registry_cli_and_validation(tmp_path, capsys, quad):
    ring = Network.from_topology("ring", 1, [N])
    alg = registry.build("dadam", quad, ring, lr=0.01, beta1=0.5)
    assert (alg.beta1, alg.beta2, alg.tau) == (0.5, 0.999, 1e-8)
    for bad, match in [({"beta1": 1.0}, "beta1"), ({"beta2": -0.1}, "beta2"), ({"tau": 0.0}, "tau")]:
        with pytest.raises(ValueError, match=match):
            DAdam(quad, ring, lr=0.01, **bad)
    assert main(["run", "dadam", "--n", "6", "--d", "3", "--rounds", "6", "--beta2", "0.99",
                 "--tau", "1e-6", "--out", str(tmp_path), "--json"]) == 0
    capsys.readouterr()
    assert main(["list", "algorithms"]) == 0
    assert "dadam" in capsys.readouterr().out


def test_constant_step_stalls_at_a_preconditioner_weighted_point_not_at_x_star(quad):
    """Heterogeneous f_i, no noise, constant step: DAdam settles where the clients' preconditioned
    gradients balance, sum_i grad f_i(x_i) / (sqrt(vhat_i) + tau) = 0, with each client's own
    frozen vhat_i, which is not a stationary point of f; the gap does not shrink with the step
    (DSGD's O(gamma^2) bias does): the non-convergence of DADAM pointed out by Chen et al. 2021a.
    Measured (ring, n = 8): ||x_g - x*||^2 = 0.314 at gamma = 0.04, 0.33 at 0.02 (0.35 at 0.01 and
    0.005), ||grad f(x_g)||^2 = 0.07; DSGD's 1.1e-4 -> 2.8e-5."""
    ring = Network.from_topology("ring", 1, [N])
    gaps, dsgd_gaps = [], []
    for gamma in (0.04, 0.02):
        rounds = int(150 / gamma)
        traj = run(DAdam(quad, ring, lr=gamma), rounds)
        final = traj.final_state
        balance = (quad.grad(final.X) / (final.moments.max_second_moment.sqrt() + 1e-8)).sum(dim=0)
        assert float(torch.sum(balance ** 2)) < 1e-6                        # a fixed point ...
        assert float(torch.sum((traj.x_g[-1] - traj.x_g[-100]) ** 2)) < 1e-6
        assert traj.grad_norm2[-1] > 1e-2                                   # ... not stationary
        gaps.append(traj.dist2[-1])
        dsgd_gaps.append(run(DSGD(quad, ring, lr=gamma), rounds).dist2[-1])
    assert gaps[1] > 0.5 * gaps[0]                          # no shrinking with gamma
    assert dsgd_gaps[1] < dsgd_gaps[0] / 3                  # DSGD's bias ~ gamma^2


# ---- the AMSGrad transform's switches are options (issue 25) ---------------------------------------
@pytest.mark.parametrize("switches", [{}, {"bias_correction": "adam"}, {"eps_inside_sqrt": True},
                                      {"bias_correction": "flower", "eps_inside_sqrt": True}])
def test_the_switches_reach_every_clients_amsgrad(quad, switches):
    """With ``bias_correction`` and ``eps_inside_sqrt`` DAdam is the numpy loop with that step; the
    defaults (none, tau outside) are Alg. 1's form, bitwise the run without the switches."""
    net = Network.from_topology("ring", 1, [N])
    gamma, b1, b2, tau, seed = 0.02, 0.8, 0.95, 1e-3, 7
    alg = registry.build("dadam", quad.with_noise(SIGMA), net, lr=gamma, beta1=b1, beta2=b2, tau=tau,
                         seed=seed, **switches)
    state = alg.init()
    step, _ = amsgrad(gamma, b1, b2, tau, switches.get("bias_correction", "none"),
                      switches.get("eps_inside_sqrt", False))
    for X in numpy_dadam(quad, net, step, seed, 10):
        state = alg.step(state)
        np.testing.assert_allclose(state.X.numpy(), X, rtol=0, atol=1e-12)
    default = run(DAdam(quad.with_noise(SIGMA), net, lr=gamma, beta1=b1, beta2=b2, tau=tau, seed=seed), 10)
    ours = run(alg, 10)
    assert torch.equal(default.x_g, ours.x_g) == (not switches)
    paper = DAdam(quad.with_noise(SIGMA), net, lr=gamma, beta1=b1, beta2=b2, tau=tau, seed=seed,
                  bias_correction="none", eps_inside_sqrt=False)
    assert torch.equal(run(paper, 10).x_g, default.x_g)


def test_first_iteration_is_the_hand_computed_step(quad):
    """From x_0 on every client (W x_0 = x_0): x_1 = x_0 - gamma g / (|g| + tau) with the Kingma-Ba
    correction (m^ = g, vhat^ = g^2), x_0 - gamma (1 - b1) g / sqrt((1 - b2) g^2 + tau) with tau
    inside the root."""
    net = Network.from_topology("ring", 1, [N])
    X0 = np.tile(quad.x0.numpy(), (N, 1))
    g = gradients(quad, X0)
    for switches, X1 in (({"bias_correction": "adam"}, X0 - 0.02 * g / (np.abs(g) + 1e-3)),
                         ({"eps_inside_sqrt": True}, X0 - 0.02 * 0.1 * g / np.sqrt(0.001 * g ** 2 + 1e-3))):
        alg = registry.build("dadam", quad, net, lr=0.02, beta1=0.9, beta2=0.999, tau=1e-3, **switches)
        np.testing.assert_allclose(alg.step(alg.init()).X.numpy(), X1, rtol=1e-13, atol=1e-15)


def test_the_switches_are_declared_once_and_on_the_command_line(tmp_path, capsys, quad):
    amsgrad = SERVER_OPTIMIZERS.get("amsgrad")
    for switch in ("bias_correction", "eps_inside_sqrt"):
        assert registry.get("dadam").option(switch) is amsgrad.option(switch)
    ring = Network.from_topology("ring", 1, [N])
    alg = registry.build("dadam", quad, ring, lr=0.01, bias_correction="flower", eps_inside_sqrt=True)
    direct = server.amsgrad(0.01, 0.9, 0.999, 1e-8, bias_correction="flower", eps_inside_sqrt=True)
    X = torch.randn(N, D, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    assert torch.equal(alg.local.update(X, alg.local.init(X), X)[0], direct.update(X, direct.init(X), X)[0])
    with pytest.raises(FedboundError, match="did you mean 'adam'"):
        registry.build("dadam", quad, ring, lr=0.01, bias_correction="adma")
    finals = {}
    for name, flags in (("default", []), ("switched", ["--bias-correction", "adam", "--eps-inside-sqrt"])):
        out = tmp_path / name
        assert main(["run", "dadam", "--n", "6", "--d", "3", "--rounds", "6", "--tau", "1e-3",
                     "--out", str(out), "--json", *flags]) == 0
        config = json.loads(capsys.readouterr().out)["config"]
        finals[name] = np.load(out / "x_final.npy")
    assert config["bias_correction"] == "adam" and config["eps_inside_sqrt"] is True
    assert not np.array_equal(finals["default"], finals["switched"])
