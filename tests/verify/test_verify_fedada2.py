"""`fedbound verify fedada2` (fedbound/verify/fedada2_checks.py): Theorem 20 against runs of
fedada2 on a quadratic, least squares, robust regression and an MLP, at small scale through the CLI
(seed 004 [L842-L1052], papers/fedada2.md 4.9)."""
import json

import numpy as np
import pytest
import torch

from fedbound.cli.main import main
from fedbound.algorithms.problem import Problem
from fedbound.verify.fedada2_checks import box_gradient_bound


def _verify(capsys, *args, check=("thm20",)):
    code = main(["verify", "fedada2", *check, *args, "--rounds", "6", "--json"])
    out = json.loads(capsys.readouterr().out)
    return code, out


def test_the_paper_covers_quadratic_least_squares_and_the_mlp(capsys):
    """`fedbound verify fedada2` without CHECK: Theorem 20 on the --task (quadratic by default),
    least squares and the MLP classifier (not applicable there, with the reason)."""
    code, out = _verify(capsys, check=())
    rows = {c["check"]: c for c in out["checks"]}
    assert code == 0 and list(rows) == ["thm20", "thm20-lsq", "thm20-mlp"]
    assert [rows[c]["setting"]["task"] for c in rows] == ["quadratic", "lsq", "mlp-gmm"]
    assert all(r["status"] == "holds" for r in rows["thm20-lsq"]["results"])
    assert {r["status"] for r in rows["thm20-mlp"]["results"]} == {"not applicable"}


@pytest.mark.parametrize("task", ["quadratic", "lsq", "robust"])
def test_theorem20_holds_on_tasks_with_known_or_boxed_constants(capsys, task):
    code, out = _verify(capsys, "--task", task)
    assert code == 0 and out["check"] == "thm20"
    results = {r["variant"]: r for r in out["results"]}
    assert len(results) == 16 and {"printed", "rederived"} <= set(results)
    for r in results.values():
        assert r["status"] == "holds" and r["details"]["theorem_applies"] is True
    assert ("box" in out["setting"]["constants"]) == (task != "robust")


def test_outside_the_theorem_is_not_applicable_never_holds(capsys):
    code, out = _verify(capsys, "--task", "mlp-gmm")          # G and L unknown for the MLP
    assert [r["status"] for r in out["results"]] == ["not applicable"]
    assert "G (Assumption 2" in out["results"][0]["details"]["conditions"][0]
    code, out = _verify(capsys, "--sigma", "0.3")              # the theorem is full-batch [L128, L913]
    assert [r["status"] for r in out["results"]] == ["not applicable"]
    code, out = _verify(capsys, "--clients-per-round", "4")   # min_t E[.] is not what it bounds
    assert [r["status"] for r in out["results"]] == ["not applicable"]
    assert "partial participation" in out["results"][0]["details"]["conditions"][0]
    code, out = _verify(capsys, "--lr", "0.5")                 # 0.5 > 6^-1/2: outside T eta_l^2 <= 1
    status = {r["variant"]: r["status"] for r in out["results"]}
    assert status["rederived"] == "not applicable" and status["printed"] == "holds"


def test_box_bound_dominates_the_gradients_in_the_box():
    task = Problem("lsq", {"float64": True, "d": 6}).task
    radius = 0.7
    G = box_gradient_bound(task, radius)
    rng = np.random.default_rng(0)
    X = task.x0[None, :] + radius * (2 * torch.as_tensor(rng.random((task.n, task.d))) - 1)
    assert float(task.grad(X).abs().max()) <= G * (1 + 1e-12)
    corner = task.x0[None, :] + radius * torch.sign(task.hessians[:, 0, :])   # maximises row 0's |H x|
    assert float(task.grad(corner).abs().max()) <= G * (1 + 1e-12)
