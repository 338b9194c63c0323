"""`fedbound verify sdgt` on the three kinds of task (issue 22; seed 003, papers/sdgt.md 7.4): the
main theorems against Monte-Carlo runs on a quadratic, least squares and the MLP classifier (L
estimated), "not applicable: CONDITION" wherever a theorem does not apply, and every check at a
small scale through the CLI's main."""
import json

import pytest

from fedbound.cli.commands import EXIT_VIOLATED
from fedbound.cli.main import main


def _json(capsys, *args):
    code = main(["verify", "sdgt", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_linear_rate_outside_gamma_bar_is_not_applicable(capsys):
    """The default step 1/(4KL) exceeds every gamma_bar of Theorem 3: its parts say so, never holds."""
    code = main(["verify", "sdgt", "linear-rate", "--rounds", "100"])
    text = capsys.readouterr().out
    for variant in ("main", "appendix", "rederived"):
        assert f"linear-rate:thm3 [{variant}]: not applicable: gamma <= gamma_bar ({variant})" in text
    assert "linear-rate:operator" in text and code == 0
    assert not any(line.strip().startswith("linear-rate:thm3") and "-> holds" in line
                   for line in text.splitlines())


def test_linear_rate_within_gamma_bar_applies(capsys):
    code, out = _json(capsys, "linear-rate", "--rounds", "50", "--lr", "3e-5")
    parts = [r for r in out["results"] if r["name"].startswith("linear-rate:thm3")]
    assert len(parts) == 6 and all(r["status"] == "holds" for r in parts)


@pytest.mark.parametrize("task", ["quadratic", "lsq"])
def test_thm3_bound_on_exact_tasks(capsys, task):
    code, out = _json(capsys, "thm3-bound", "--task", task, "--rounds", "6", "--seeds", "4")
    bounds = [r for r in out["results"] if r["name"] == "thm3-bound"]
    assert {r["variant"] for r in bounds} == {"main", "appendix", "rederived"}
    assert all(r["status"] == "holds" and r["details"]["theorem_applies"] for r in bounds)


def test_thm1_bound_on_the_mlp_with_estimated_L(capsys):
    code, out = _json(capsys, "thm1-bound", "--task", "mlp-gmm", "--n", "6", "--rounds", "6",
                      "--seeds", "3")
    (result,) = out["results"]
    details = result["details"]
    assert result["status"] in ("holds", "inconclusive") and details["theorem_applies"]
    assert details["L_estimate"]["value"] > 0 and not details["L_estimate"]["given"]
    assert 0 <= details["E1"]["low"] <= details["E1"]["high"]
    assert out["setting"]["d"] > 100


@pytest.mark.parametrize("check,task,reason", [
    ("thm3-bound", "lsq-convex", "mu > 0"),
    ("thm3-bound", "mlp-gmm", "strongly convex"),
    ("thm2-bound", "mlp-gmm", "convex f"),
    ("fixed-point", "mlp-gmm", "exact L, mu"),
])
def test_not_applicable_names_the_condition(capsys, check, task, reason):
    code = main(["verify", "sdgt", check, "--task", task, "--n", "6"])
    text = capsys.readouterr().out
    assert code == 0 and f"{check}: not applicable: " in text and reason in text
    assert "-> holds" not in text


def test_every_check_at_small_scale(capsys):
    code = main(["verify", "sdgt", "--rounds", "6", "--seeds", "3"])
    text = capsys.readouterr().out
    for check in ("fixed-point", "server-recursion", "linear-rate", "thm3-bound", "lemmas",
                  "noise-floor", "thm1-bound", "thm2-bound", "tasks"):
        assert f"{check} (sdgt):" in text
    assert code in (0, EXIT_VIOLATED)     # 6 rounds are too few for the fixed point: a violation, exit 3


def test_tasks_check_runs_the_theorems_on_lsq_and_the_mlp(capsys):
    code, out = _json(capsys, "tasks", "--rounds", "6", "--seeds", "3", "--n", "6")
    by_name = {(r["name"], r["variant"]): r for r in out["results"]}
    assert by_name[("lsq:thm3-bound", "appendix")]["status"] == "holds"
    assert by_name[("mlp-gmm:thm3-bound", None)]["status"] == "not applicable"
    mlp = by_name[("mlp-gmm:thm1-bound", "rederived")]
    assert mlp["status"] in ("holds", "inconclusive") and mlp["details"]["L_estimate"]["value"] > 0
    assert out["setting"]["tasks"] == ["lsq", "mlp-gmm"]
