"""verify.setting: the theorem constants of a Problem's run and of a sweep's cells come from the
paper adapters (fedbound.theory.adapters), with the registry's options and defaults."""
import pytest

from fedbound import deprecation, sweep
from fedbound.algorithms.problem import Problem
from fedbound.errors import UnknownNameError
from fedbound.theory import adapters
from fedbound.verify import cell_constants, run_constants

SPEC = {"algorithm": ["sdgt", "fednova"], "task": {"name": "quadratic", "n": 6, "d": 3},
        "network": {"subnets": 2}, "rounds": 5,
        "grid": {"lr": [0.01, 0.02], "sigma": 0.1, "zip": {"local_steps": [1, 2], "seed": [0, 1]}}}


def test_run_constants_fill_the_registry_defaults(monkeypatch):
    problem = Problem("quadratic", {"n": 6, "d": 3})
    k = run_constants(problem, "sdgt", {"lr": 0.05}, sigma=0.2)
    assert (k["K"], k["gamma"], k["p"], k["n"]) == (5, 0.05, 1.0, 6)      # local_steps: the registry's 5
    assert k["sigma"] == pytest.approx(0.2) and k["q"] == problem.network("sdgt").q
    monkeypatch.setattr(deprecation, "_WARNED", set())                    # a deprecation warns once per process
    with pytest.warns(FutureWarning, match="gamma"):                      # old spellings: through the registry
        assert run_constants(problem, "sdgt", {"gamma": 0.05}, sigma=0.2) == k


def test_every_cell_of_a_sweep_gets_its_papers_constants():
    spec = sweep.parse(SPEC)
    problem = spec.build_problem()
    seen = set()
    for cell in spec.cells:
        k = cell_constants(spec, cell, problem)
        task = problem.task.with_noise(cell.sigma)
        assert k == adapters.constants(task, problem.network(cell.algorithm), cell.algorithm, cell.options)
        assert k["sigma"] == pytest.approx(0.1)
        step = k["gamma"] if cell.algorithm == "sdgt" else k["eta"]
        steps = k["K"] if cell.algorithm == "sdgt" else k["tau_bar"]
        assert (step, steps) == (cell.options["lr"], cell.options["local_steps"])
        seen.add(cell.algorithm)
    assert seen == {"sdgt", "fednova"}
    assert cell_constants(spec, spec.cells[0]) == cell_constants(spec, spec.cells[0], problem)


def test_an_algorithm_without_a_theorem_is_named():
    problem = Problem("quadratic", {"n": 6, "d": 3})
    with pytest.raises(UnknownNameError, match="no paper's theorems cover the algorithm 'fedadam'"):
        run_constants(problem, "fedadam", {"lr": 0.1})
    k = run_constants(problem, "fedavg", {"lr": 0.1, "local_steps": 2})
    assert k["m"] == 6 and k["tau_eff"] == pytest.approx(2.0) and k["chi2"] == pytest.approx(0.0, abs=1e-15)
