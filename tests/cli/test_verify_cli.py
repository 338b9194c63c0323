"""``fedbound verify``: named checks, measured against predicted, JSON output."""
import json

import pytest
import torch
from threadpoolctl import threadpool_limits

from fedbound.cli.main import main

torch.set_num_threads(1)
threadpool_limits(1)


def _json(capsys, *args):
    code = main(["verify", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_fixed_point_json(capsys):
    code, out = _json(capsys, "fixed-point", "--rounds", "500")
    (result,) = out["results"]
    assert code == 0 and result["status"] == "holds" and result["measured"] <= result["predicted"]
    assert out["setting"]["h"] == [2, 2, 2] and out["setting"]["sigma"] == 0.0


def test_linear_rate_json(capsys):
    code, out = _json(capsys, "linear-rate", "--task", "lsq", "--n", "12", "--d", "4",
                      "--rows", "10", "--lr", "0.0166")
    names = [r["name"] for r in out["results"]]
    assert names == ["linear-rate:operator", "linear-rate:thm3", "linear-rate:thm3-operator"]
    assert all(r["status"] == "holds" for r in out["results"]) and code == 0
    assert abs(out["results"][0]["measured"] - out["results"][0]["predicted"]) <= 1e-6


def test_lemmas_text_output(capsys):
    code = main(["verify", "lemmas", "--rounds", "5", "--seeds", "20"])
    text = capsys.readouterr().out
    assert code in (0, 1)
    for i in range(1, 7):
        assert f"sdgt.lemma{i} [printed]" in text
    assert "sdgt.lemma4 [rederived]" in text and "measured" in text and "predicted" in text


def test_thm3_bound_json_reports_every_variant(capsys):
    code, out = _json(capsys, "thm3-bound", "--rounds", "10", "--seeds", "5")
    bounds = [r for r in out["results"] if r["name"] == "thm3-bound"]
    assert [r["variant"] for r in bounds] == ["main", "appendix", "rederived"]
    assert all(r["details"]["theorem_applies"] and r["holds"] for r in bounds)
    assert {r["name"] for r in out["results"]} == {"thm3-bound", "thm3-premise"}


def test_bad_input(capsys):
    assert main(["verify", "fixed-point", "--clients-per-subnet", "9"]) == 2
    assert "--clients-per-subnet" in capsys.readouterr().err
    assert main(["verify", "fixed-point", "--lr", "-1"]) == 2
    with pytest.raises(SystemExit):
        main(["verify", "no-such-check"])
