"""The thread policy (issues 24 and 35): one thread for small rounds, more only for rounds with the
work for them, never more than the caller allows, at every entry that computes rounds (``run()``,
a bare ``init``/``step`` loop, a user's Algorithm subclass, batched seeds, exact analysis, a
sweep's call); torch's setting restored after each; an explicit choice (``threads=``, a
``torch.set_num_threads`` after fedbound's import) wins.

Each test pretends torch's own setting (what fedbound found at import, ``threads.FOUND``) is
``DEFAULT`` threads, so that the policy is visible on a machine of any number of cores."""
import pytest
import torch

from fedbound.algorithms import registry, run, threads
from fedbound.algorithms.base import Algorithm, State
from fedbound.algorithms.accounting import CommCounts
from fedbound.algorithms.threads import FLOPS_PER_THREAD, step_flops, threads_for
from fedbound.cli.main import main
from fedbound.tasks import LeastSquares, Quadratic

DEFAULT = 4


@pytest.fixture
def torch_default(monkeypatch):
    """torch at DEFAULT threads, which fedbound takes for torch's own setting; restored after."""
    before = torch.get_num_threads()
    monkeypatch.setattr(threads, "FOUND", DEFAULT)
    torch.set_num_threads(DEFAULT)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def gradient_threads(monkeypatch):
    """The torch threads each gradient call of a least-squares task ran with, in order."""
    seen = []
    original = LeastSquares._grad_on

    def recording(self, X, data):
        seen.append(torch.get_num_threads())
        return original(self, X, data)
    monkeypatch.setattr(LeastSquares, "_grad_on", recording)
    return seen


def _fedavg(task, **options):
    return registry.build("fedavg", task, seed=0, lr=0.01, local_steps=2, clients_per_round=4, **options)


def _threads_seen(task, threads=None):
    seen = []
    run(_fedavg(task), 3, callback=lambda state: seen.append(torch.get_num_threads()), threads=threads)
    return seen


def test_threads_grow_with_the_work_of_a_local_step_up_to_the_cores():
    assert threads_for(0, 8) == threads_for(1.9 * FLOPS_PER_THREAD, 8) == 1
    assert threads_for(2 * FLOPS_PER_THREAD, 8) == 2
    assert threads_for(1e15, 8) == 8 and threads_for(1e15, 1) == 1
    # a round of many steps of small operations stays on one thread (each operation is small)
    assert threads_for(step_flops(500, 5, 0.15e6), 8) == 1 == threads_for(step_flops(1, 0, 1.5e7), 8)


def test_a_small_run_runs_on_one_thread_and_an_override_wins(torch_default):
    task = LeastSquares.generate(20, 10, 5, seed=0)
    assert _threads_seen(task) == [1, 1, 1] and torch.get_num_threads() == DEFAULT   # restored
    assert _threads_seen(task, threads=2) == [2, 2, 2] and torch.get_num_threads() == DEFAULT


def test_a_users_torch_setting_wins_over_the_policy(torch_default):
    task = LeastSquares.generate(20, 10, 5, seed=0)
    torch.set_num_threads(3)                      # explicit, after fedbound's import
    assert _threads_seen(task) == [3, 3, 3] and torch.get_num_threads() == 3


def test_a_large_round_takes_more_threads_but_no_more_than_allowed(torch_default, monkeypatch):
    task = LeastSquares.generate(20, 10, 5, seed=0)
    # 4 participants per local step at 10 FLOPS_PER_THREAD each: 40 -> all cores
    monkeypatch.setattr(LeastSquares, "gradient_flops", property(lambda self: 10 * FLOPS_PER_THREAD))
    expected = min(threads_for(40 * FLOPS_PER_THREAD), DEFAULT)   # set after round 1
    assert expected >= 1 and _threads_seen(task) == [expected] * 3
    monkeypatch.setattr(threads, "FOUND", 1)       # torch's own setting of one thread caps it
    torch.set_num_threads(1)
    assert _threads_seen(task) == [1, 1, 1]


def test_a_bare_step_loop_runs_small_rounds_on_one_thread_and_restores(torch_default, gradient_threads):
    """The loop of fedbound.testing and the notebooks: init() and step() from Python."""
    alg = _fedavg(LeastSquares.generate(20, 10, 5, seed=0))
    state = alg.init()
    after = []
    for _ in range(3):
        state = alg.step(state)
        after.append(torch.get_num_threads())
    assert gradient_threads == [1] * 6 and after == [DEFAULT] * 3


def test_a_bare_step_loop_of_large_rounds_takes_the_threads_of_their_work(torch_default, monkeypatch,
                                                                         gradient_threads):
    monkeypatch.setattr(LeastSquares, "gradient_flops", property(lambda self: 10 * FLOPS_PER_THREAD))
    alg = _fedavg(LeastSquares.generate(20, 10, 5, seed=0))
    state = alg.init()
    for _ in range(3):
        state = alg.step(state)
    many = min(threads_for(40 * FLOPS_PER_THREAD), DEFAULT)   # measured from the round before
    assert gradient_threads == [1, 1] + [many] * 4 and torch.get_num_threads() == DEFAULT


def test_an_explicit_setting_wins_in_a_bare_step_loop(torch_default, gradient_threads):
    alg = _fedavg(LeastSquares.generate(20, 10, 5, seed=0))
    torch.set_num_threads(2)
    alg.step(alg.init())
    assert gradient_threads == [2, 2] and torch.get_num_threads() == 2


class _UsersGradientDescent(Algorithm):
    """A user's algorithm: full gradient descent, written against the public base class only."""

    name = "users-gd"

    def init(self, x0=None):
        zero = CommCounts()
        return State(t=0, x_g=self.initial_models(x0), rng=torch.zeros(1), K=1, comm=zero,
                     last_comm=zero)

    def step(self, state):
        self.seen = torch.get_num_threads()
        x = state.x_g - 0.1 * self.task.global_grad(state.x_g)
        return self.advance(state, x_g=x, last_comm=CommCounts(gradient_evaluations=self.task.n))


def test_a_users_algorithm_gets_the_policy(torch_default):
    alg = _UsersGradientDescent(Quadratic.generate(4, 3, seed=0))
    state = alg.step(alg.init())
    assert alg.seen == 1 and torch.get_num_threads() == DEFAULT and state.t == 1


def test_batched_seeds_exact_analysis_and_sweep_calls_apply_the_policy(torch_default,
                                                                      gradient_threads):
    from fedbound.algorithms.federated.seeds import run_seeds
    from fedbound.sweep.executor import call
    from fedbound.verify.exact import exact_round

    task = LeastSquares.generate(20, 10, 5, seed=0)
    run_seeds([_fedavg(task, ) for _ in range(2)], 2)
    assert set(gradient_threads) == {1} and torch.get_num_threads() == DEFAULT
    quadratic = Quadratic.generate(4, 2, seed=0)
    seen = []
    original = type(quadratic)._grad_on

    def recording(self, X, data):
        seen.append(torch.get_num_threads())
        return original(self, X, data)
    type(quadratic)._grad_on = recording
    try:
        exact_round(registry.build("fedavg", quadratic, lr=0.05, local_steps=2, participation="full"))
    finally:
        type(quadratic)._grad_on = original
    assert seen and set(seen) == {1} and torch.get_num_threads() == DEFAULT
    assert call(lambda common, payload: torch.get_num_threads(), None, None) == 1
    assert torch.get_num_threads() == DEFAULT


def test_the_gradient_flops_count_the_clients_data():
    task = LeastSquares.generate(20, 10, 5, seed=0)          # 10 rows of 5 and 10 targets
    assert task.gradient_flops == pytest.approx(4 * (10 * 5 + 10))


def test_bad_threads_are_refused_on_the_command_line(capsys, tmp_path):
    assert main(["run", "fedavg", "--task", "lsq", "--lr", "0.01", "--threads", "0", "--rounds", "1",
                 "--out", str(tmp_path / "r")]) == 2
    assert "--threads" in capsys.readouterr().err


def test_a_block_restores_the_setting_when_its_body_or_its_choice_fails(torch_default, monkeypatch):
    """round_threads: torch's setting and the 'chosen' flag are as before the block after an error
    raised inside it, and after one raised while it chose the threads; a block inside a block keeps
    the outer choice."""
    with pytest.raises(RuntimeError, match="inside"):
        with threads.round_threads(0.0) as policy:
            assert torch.get_num_threads() == 1 and threads.chosen() and policy.active
            with threads.round_threads(1e12) as inner:
                assert not inner.active and torch.get_num_threads() == 1
            raise RuntimeError("inside")
    assert torch.get_num_threads() == DEFAULT and not threads.chosen()

    def failing(flops, cores=None):
        raise RuntimeError("while choosing")
    monkeypatch.setattr(threads, "threads_for", failing)
    with pytest.raises(RuntimeError, match="while choosing"):
        with threads.round_threads(0.0):
            pass
    assert torch.get_num_threads() == DEFAULT and not threads.chosen()
    with threads.round_threads(threads=2) as policy:
        assert torch.get_num_threads() == 2 and not policy.active
    assert torch.get_num_threads() == DEFAULT and not threads.chosen()
