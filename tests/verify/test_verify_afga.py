"""``fedbound verify afga`` at small scale (issue 22 item 6): Theorem 4.6 / D.3 against Monte-Carlo
runs of afga / cafga through the CLI, with "not applicable: CONDITION" wherever the theorem does not
apply (seed 000_bd1b5016b2d2bc05.txt; fedbound/verify/afga_checks.py)."""
from __future__ import annotations

import json

import pytest

from fedbound.cli.main import main
from fedbound.verify.afga_checks import COMPARED, NOT_FOR_FIXED_STEPS

SMALL = ["--rounds", "3", "--seeds", "2"]


def _verify(capsys, *args) -> tuple[int, dict]:
    code = main(["verify", "afga", *args, *SMALL, "--json"])
    return code, json.loads(capsys.readouterr().out)


def _by_variant(row: dict) -> dict:
    return {r["variant"]: r for r in row["results"]}


def test_all_checks_on_the_bounded_gradient_task(capsys):
    """Both theorems on AFGA's Q2 task (exact constants): the fixed-step variants are compared
    (conditions hold at the default lr, the largest admissible), the others never read "holds"."""
    code, out = _verify(capsys, "--task", "robust")
    names = [c["check"] for c in out["checks"]]
    assert code == 0 and names == [f"{t}{s}" for t in ("thm46", "thmD3") for s in ("", "-lsq", "-mlp")]
    tasks = {c["check"]: c["setting"]["task"] for c in out["checks"]}
    assert tasks["thm46"] == "robust" and tasks["thm46-lsq"] == "lsq" and tasks["thmD3-mlp"] == "mlp-gmm"
    for row in out["checks"]:
        if row["check"] not in ("thm46", "thmD3"):
            continue
        results = _by_variant(row)
        assert set(results) == {*COMPARED, *NOT_FOR_FIXED_STEPS}
        for v in COMPARED:
            assert results[v]["status"] == "holds" and results[v]["details"]["theorem_applies"]
            assert results[v]["details"]["constants"]["rho"] < 1e-12        # complete graph
        for v in NOT_FOR_FIXED_STEPS:
            assert results[v]["status"] == "not applicable" and not results[v]["holds"]


def test_ring_is_outside_the_rho_condition(capsys):
    code, out = _verify(capsys, "thm46", "--task", "robust", "--topology", "ring")
    results = _by_variant(out)
    assert code == 0
    for v in ("printed", "rederived"):
        assert results[v]["status"] == "not applicable"
        assert "rho <= m/(m+n)" in results[v]["details"]["conditions"]
    assert results["eq29"]["status"] == "holds"        # (29) holds without the rho-condition


def test_quadratic_estimates_G_and_heterogeneity(capsys):
    code, out = _verify(capsys, "thmD3", "--task", "quadratic")
    results = _by_variant(out)
    assert code == 0 and results["printed"]["status"] == "holds"
    estimated = results["printed"]["details"]["estimated"]
    assert set(estimated) >= {"G", "sigma_l", "sigma_c"} and all(v >= 0 for v in estimated.values())


def test_mlp_is_not_applicable_with_the_reason(capsys):
    code = main(["verify", "afga", "thm46", "--task", "mlp-gmm", *SMALL])
    text = capsys.readouterr().out
    assert code == 0
    lines = [ln for ln in text.splitlines() if ln.strip().startswith("afga.thm46")]
    assert len(lines) == 5 and all("not applicable: " in ln and "holds" not in ln for ln in lines)
    assert "does not know" in lines[0]


@pytest.mark.parametrize("bad", [["--seeds", "1"], ["--lr", "-1"], ["--local-steps", "0"]])
def test_bad_input_is_a_clear_error(capsys, bad):
    assert main(["verify", "afga", "thm46", "--task", "robust", "--rounds", "2", *bad]) == 2
    assert "Traceback" not in capsys.readouterr().err
