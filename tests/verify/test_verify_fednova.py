"""``fedbound verify fednova`` (fedbound/verify/fednova_checks.py) through the CLI at small scale:
Theorems 1 and 3 of FedNova (seed 001, (97) [L616], (147) [L817]) against Monte-Carlo runs on a
quadratic, least squares and an MLP; the statuses are computed, and a theorem that does not apply
says "not applicable" with its reason, never "holds"."""
from __future__ import annotations

import json

import pytest

from fedbound.cli.commands import EXIT_VIOLATED
from fedbound.cli.main import main
from fedbound.verify.check import STATUSES

SMALL = ["--rounds", "4", "--seeds", "2"]


def _json(capsys, *argv) -> tuple[int, dict]:
    code = main(["verify", "fednova", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_every_check_runs_and_the_mlp_is_not_applicable(capsys):
    """All three checks at small scale: every status one of STATUSES; on the quadratic and least
    squares the theorems apply at the largest admitted step (a computed verdict, with the conditions
    holding); on the MLP L, kappa^2 and f* are unknown: not applicable, the measured values kept."""
    code, data = _json(capsys, *SMALL)
    assert code in (0, EXIT_VIOLATED) and data["paper"] == "fednova"
    rows = {row["check"]: row for row in data["checks"]}
    assert set(rows) == {"thm1-quadratic", "thm1-lsq", "thm1-mlp"}
    for name, row in rows.items():
        names = {r["name"] for r in row["results"]}
        assert names == {"fednova.thm1 (fednova)", "fednova.thm3 (fednova)", "fednova.thm1 (fedavg)",
                         "fednova.thm2 (fedavg)"}, name
        for r in row["results"]:
            assert r["status"] in STATUSES
            if name == "thm1-mlp":
                assert r["status"] == "not applicable" and not r["holds"]
                assert any("Assumption 1" in c for c in r["details"]["conditions"])
                assert len(r["details"]["measured_mean"]) == len(r["details"]["horizons"])
            else:
                assert r["status"] != "not applicable" and r["details"]["theorem_applies"] is True
                assert r["predicted"] > 0 and r["measured"] >= 0
                assert "beta2_min" in r["details"]["assumption 3"]
                if r["name"] == "fednova.thm2 (fedavg)":     # unequal steps: Delta bounded by F~(x0)
                    assert r["variant"] == "explicit" and "upper bound" in r["details"]["Delta"]


@pytest.mark.parametrize("argv,reason", [
    (["thm1-lsq", "--beta2-scale", "1"], "finite kappa^2"),     # kappa^2 = inf at beta2_min (4.12)
    (["thm1-quadratic", "--lr", "10"], "(98)"),                 # a step outside (98)-(99)
])
def test_a_theorem_that_does_not_apply_says_so(capsys, argv, reason):
    assert main(["verify", "fednova", *argv, *SMALL]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("  ")]
    assert lines and all("not applicable" in ln and "holds" not in ln for ln in lines)
    assert any(reason in ln for ln in lines)


def test_bad_option_is_a_clear_error(capsys):
    assert main(["verify", "fednova", "thm1-lsq", "--beta2-scale", "0.5"]) == 2
    assert "--beta2-scale" in capsys.readouterr().err
