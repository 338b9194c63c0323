"""``fedbound audit`` (fedbound/cli/audit_cmd.py)."""
import json

import pytest

from fedbound.cli.main import main

FAST = ["--samples", "200", "--iterations", "3"]


def test_table(capsys):
    assert main(["audit", "sdgt", *FAST, "--only", "thm5", "lemma3"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[1].endswith(":") and lines[2].split()[:5] == ["claim", "variant", "verdict", "ratio", "worst"]
    rows = {tuple(line.split()[:3]) for line in lines[2:-1]}
    assert ("thm5.contains_root", "printed", "fails") in rows
    assert ("thm5.contains_root", "corrected", "holds") in rows
    assert ("lemma3.alpha_K", "printed", "fails") in rows
    assert lines[-1].startswith("2 of 4 claims fail (")
    heads = [line for line in lines if line.endswith(":") and "(" in line]
    assert heads[-1] == "holds (2):"        # groups by severity, worst first


def test_json_is_a_list_of_reports(capsys):
    assert main(["audit", "sdgt", *FAST, "--seed", "5", "--only", "thm5", "--json"]) == 0
    reports = json.loads(capsys.readouterr().out)
    assert [r["variant"] for r in reports] == ["printed", "corrected"]
    for r in reports:
        assert {"claim", "variant", "verdict", "worst", "violation_ratio", "flag", "failing_parts"} <= set(r)
        assert r["verdict"] in ("holds", "fails") and set(r["worst"]) >= {"Hhat", "lambda2", "p"}


def test_json_is_deterministic(capsys):
    outputs = []
    for _ in range(2):
        assert main(["audit", "sdgt", *FAST, "--only", "lemma", "--json"]) == 0
        outputs.append([{k: v for k, v in r.items() if k != "seconds"} for r in json.loads(capsys.readouterr().out)])
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("argv, message", [
    (["audit", "nope"], "no audit for paper 'nope'"),
    (["audit", "sdgt", "--samples", "0"], "--samples must be >= 1, got 0"),
    (["audit", "sdgt", "--only", "zzz"], "no claim of sdgt matches zzz"),
])
def test_bad_input_exits_2_with_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--help"])
    assert exc.value.code == 0
    assert "--samples" in capsys.readouterr().out
