"""``fedbound verify``: named checks, measured against predicted, JSON output."""
import json

import torch
from threadpoolctl import threadpool_limits

from fedbound.cli.commands import EXIT_VIOLATED
from fedbound.cli.main import main

torch.set_num_threads(1)
threadpool_limits(1)


def _json(capsys, *args):
    code = main(["verify", "sdgt", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_fixed_point_json(capsys):
    code, out = _json(capsys, "fixed-point", "--rounds", "500")
    (result,) = out["results"]
    assert code == 0 and result["status"] == "holds" and result["measured"] <= result["predicted"]
    assert out["setting"]["h"] == [2, 2, 2] and out["setting"]["sigma"] == 0.0


def test_linear_rate_json(capsys):
    code, out = _json(capsys, "linear-rate", "--task", "lsq", "--n", "12", "--d", "4",
                      "--rows", "10", "--lr", "0.0166")
    names = [(r["name"], r["variant"]) for r in out["results"]]
    assert names == [("linear-rate:operator", None)] + [
        (name, v) for v in ("main", "appendix", "rederived")
        for name in ("linear-rate:thm3", "linear-rate:thm3-operator")]
    assert out["results"][0]["status"] == "holds" and code == 0
    assert abs(out["results"][0]["measured"] - out["results"][0]["predicted"]) <= 1e-6
    # lr = 0.0166 is above every gamma_bar: Theorem 3 does not apply, and says so
    assert all(r["status"] == "not applicable" for r in out["results"][1:])


def test_lemmas_text_output(capsys):
    code = main(["verify", "sdgt", "lemmas", "--rounds", "5", "--seeds", "20"])
    text = capsys.readouterr().out
    assert code in (0, EXIT_VIOLATED)
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
    assert main(["verify", "sdgt", "fixed-point", "--clients-per-subnet", "9"]) == 2
    assert "--clients-per-subnet" in capsys.readouterr().err
    assert main(["verify", "sdgt", "fixed-point", "--lr", "-1"]) == 2
    assert "--lr" in capsys.readouterr().err
    assert main(["verify", "sdgt", "no-such-check"]) == 2
    assert "check of sdgt must be one of" in capsys.readouterr().err
    assert main(["verify", "no-such-paper"]) == 2
    assert "paper with checks" in capsys.readouterr().err
    # a flag that the chosen check does not take is refused, never ignored
    assert main(["verify", "sdgt", "fixed-point", "--seeds", "3"]) == 2
    assert "--seeds does not apply to verify sdgt fixed-point" in capsys.readouterr().err


def test_old_form_verify_check_still_works_and_warns(capsys, monkeypatch):
    from fedbound import deprecation
    monkeypatch.setattr(deprecation, "_WARNED", set())    # warnings are once per process
    code = main(["verify", "linear-rate", "--K", "2", "--json"])
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert code == 0 and out["check"] == "linear-rate" and out["paper"] == "sdgt"
    assert out["setting"]["K"] == 2
    assert "fedbound: warning: fedbound verify linear-rate is deprecated; use fedbound verify sdgt linear-rate" in captured.err
    assert "fedbound: warning: --K is deprecated; use --local-steps" in captured.err


def test_a_check_is_named_with_or_without_its_paper(capsys):
    """`list checks` shows `sdgt.fixed-point`; verify takes that name as well as `fixed-point`
    (and `verify sdgt.fixed-point` alone), for the same numbers; a violated check exits 3
    (EXIT_VIOLATED), not 1, which stays an internal error."""
    outs = []
    for argv in (["sdgt", "fixed-point"], ["sdgt", "sdgt.fixed-point"], ["sdgt.fixed-point"]):
        code = main(["verify", *argv, "--rounds", "60", "--json"])
        outs.append((code, json.loads(capsys.readouterr().out)))
    (code, first), *others = outs
    assert all(o == (code, first) for o in others)
    assert EXIT_VIOLATED == 3 and code == (EXIT_VIOLATED if first["results"][0]["status"] == "violated" else 0)


def test_json_is_strict_and_names_what_is_not_a_number(capsys):
    """A check that does not apply has no measurement: its JSON holds null, named with the value in
    the object's ``nonfinite`` field, never NaN or the string "nan" (issue 31)."""
    code, out = _json(capsys, "linear-rate", "--rounds", "2")
    skipped = [r for r in out["results"] if r["status"] == "not applicable"]
    assert skipped
    for r in skipped:
        assert r["measured"] is None and r["ratio"] is None
        assert r["nonfinite"] == {"measured": "nan", "predicted": "nan", "ratio": "nan"}
    text = json.dumps(out)
    assert "NaN" not in text and "Infinity" not in text
