"""Adding an algorithm or a theorem is one module (issue 20 item 3): a module dropped into a copy of
the package, registering an algorithm and a result, is found by ``fedbound list``, ``run``, ``bound``
and ``sweep`` without a line changed anywhere else (no central list to edit)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "fedbound"

ALGORITHM = '''"""FedAvg with server-side Nesterov momentum on the federated round: a drop-in module."""
from fedbound.algorithms.federated.fedopt import ROUND_OPTIONS
from fedbound.algorithms.federated.round import Federated
from fedbound.algorithms.optim import client, server
from fedbound.algorithms.options import SERVER_LR, SERVER_MOMENTUM
from fedbound.algorithms.registry import AlgorithmSpec, register


class DropInNesterov(Federated):
    name = "DropIn-Nesterov"

    def __init__(self, task, *, lr, local_steps=1, server_lr=1.0, server_momentum=0.5,
                 **round_options):
        super().__init__(task, client=client.sgd(lr),
                         server=server.momentum(server_lr, server_momentum, nesterov=True),
                         local_steps=local_steps, **round_options)


register(AlgorithmSpec("dropin-nesterov", DropInNesterov, "FedAvg with server Nesterov momentum",
                       "federated", (*ROUND_OPTIONS, SERVER_LR, SERVER_MOMENTUM)))
'''

THEOREM = '''"""A made-up theorem in its own paper scope: a drop-in module."""
from fedbound.theory.paper import Paper
from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Result, StepCondition, Variant
from fedbound.theory.symbols import POSITIVE, L, T
from fedbound.theory.symbols import gamma as g

PAPER = Paper("dropin", "dropin.txt")
D = PAPER.declare("D", POSITIVE, "initial distance ||x_0 - x*||^2")

register(Result(
    "dropin.thm1", "Drop-in Theorem 1", "f(x_T) - f* <= D / (gamma T)", PAPER.where("(1)", "1-2"),
    ("L-smooth",), [Variant("printed", "as printed", bound=D / (g * T),
                            conditions=(StepCondition("step", 1 / L, source="(1)"),))]))
'''

SPEC = {"algorithm": ["dropin-nesterov", "fedavg"], "task": {"name": "quadratic", "n": 4, "d": 3},
        "rounds": 3, "grid": {"lr": 0.05, "local_steps": 2, "seed": [0, 1]}}


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    """A copy of fedbound with the two drop-in modules, and the environment that imports it."""
    root = tmp_path_factory.mktemp("dropin")
    shutil.copytree(PACKAGE, root / "fedbound", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "fedbound" / "algorithms" / "federated" / "dropin_nesterov.py").write_text(ALGORITHM)
    (root / "fedbound" / "theory" / "dropin").mkdir()
    (root / "fedbound" / "theory" / "dropin" / "__init__.py").write_text('"""Drop-in paper."""\n')
    (root / "fedbound" / "theory" / "dropin" / "thm1.py").write_text(THEOREM)
    env = {**os.environ, "PYTHONPATH": str(root)}
    return root, env


def fedbound(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fedbound", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_the_copy_is_the_one_imported(package):
    root, env = package
    out = subprocess.run([sys.executable, "-c", "import fedbound; print(fedbound.__file__)"], env=env,
                         cwd=root, capture_output=True, text=True).stdout
    assert out.strip() == str(root / "fedbound" / "__init__.py")


def test_a_dropped_in_algorithm_is_listed_and_runs(package, tmp_path):
    root, env = package
    listed = fedbound(env, root, "list", "algorithms", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "dropin-nesterov" in [a["name"] for a in json.loads(listed.stdout)]
    ran = fedbound(env, root, "run", "dropin-nesterov", "--lr", "0.05", "--local-steps", "2",
                   "--server-momentum", "0.6", "--rounds", "3", "--float64", "--out",
                   str(tmp_path / "run"), "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["config"]["server_momentum"] == 0.6


def test_a_dropped_in_theorem_is_listed_and_evaluated(package):
    root, env = package
    listed = fedbound(env, root, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "dropin.thm1" in listed.stdout
    bound = fedbound(env, root, "bound", "dropin.thm1", "--set", "D=2", "gamma=0.1", "T=10", "L=1",
                     "--json")
    assert bound.returncode == 0, bound.stderr
    assert json.loads(bound.stdout)["bound"] == pytest.approx(2.0)


def test_a_dropped_in_algorithm_sweeps(package, tmp_path):
    root, env = package
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    swept = fedbound(env, root, "sweep", str(spec), "--out", str(tmp_path / "sweep"))
    assert swept.returncode == 0, swept.stderr
    reported = fedbound(env, root, "sweep", "report", str(tmp_path / "sweep"), "--json")
    assert reported.returncode == 0, reported.stderr
    rows = json.loads(reported.stdout)["configurations"]
    assert {"dropin-nesterov", "fedavg"} == {row["algorithm"] for row in rows}
