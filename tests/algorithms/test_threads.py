"""The thread policy of runs (issue 24): one thread for small rounds, more only for rounds with the
work for them, never more than the caller allows, overridable, and torch's setting restored."""
import pytest
import torch

from fedbound.algorithms import registry, run
from fedbound.algorithms.threads import FLOPS_PER_THREAD, threads_for
from fedbound.cli.main import main
from fedbound.tasks import LeastSquares


def test_threads_grow_with_the_work_of_a_round_up_to_the_cores():
    assert threads_for(0, 8) == threads_for(1.9 * FLOPS_PER_THREAD, 8) == 1
    assert threads_for(2 * FLOPS_PER_THREAD, 8) == 2
    assert threads_for(1e15, 8) == 8 and threads_for(1e15, 1) == 1


def _threads_seen(task, threads=None, allowed=4):
    alg = registry.build("fedavg", task, seed=0, lr=0.01, local_steps=2, clients_per_round=4)
    seen = []
    before = torch.get_num_threads()
    torch.set_num_threads(allowed)
    try:
        run(alg, 3, callback=lambda state: seen.append(torch.get_num_threads()), threads=threads)
        assert torch.get_num_threads() == allowed       # restored
    finally:
        torch.set_num_threads(before)
    return seen


def test_a_small_round_runs_on_one_thread_and_an_override_wins():
    task = LeastSquares.generate(20, 10, 5, seed=0)
    assert _threads_seen(task) == [1, 1, 1]
    assert _threads_seen(task, threads=2) == [2, 2, 2]


def test_a_large_round_takes_more_threads_but_no_more_than_allowed(monkeypatch):
    task = LeastSquares.generate(20, 10, 5, seed=0)
    # 4 participants x 2 steps = 8 gradients per round at 10 FLOPS_PER_THREAD each: 80 -> all cores
    monkeypatch.setattr(LeastSquares, "gradient_flops", property(lambda self: 10 * FLOPS_PER_THREAD))
    expected = min(threads_for(80 * FLOPS_PER_THREAD), 2)   # 2 on any machine of 2+ cores
    assert expected == 2 and _threads_seen(task, allowed=2) == [2, 2, 2]   # set after round 1
    assert _threads_seen(task, allowed=1) == [1, 1, 1]


def test_the_gradient_flops_count_the_clients_data():
    task = LeastSquares.generate(20, 10, 5, seed=0)          # 10 rows of 5 and 10 targets
    assert task.gradient_flops == pytest.approx(4 * (10 * 5 + 10))


def test_bad_threads_are_refused_on_the_command_line(capsys, tmp_path):
    assert main(["run", "fedavg", "--task", "lsq", "--lr", "0.01", "--threads", "0", "--rounds", "1",
                 "--out", str(tmp_path / "r")]) == 2
    assert "--threads" in capsys.readouterr().err
