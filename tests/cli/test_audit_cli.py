"""``fedbound audit`` (fedbound/cli/audit_cmd.py)."""
import json

import pytest

from fedbound.cli.main import main

FAST = ["--samples", "200", "--iterations", "3"]


def test_table(capsys):
    assert main(["audit", "sdgt", *FAST, "--only", "thm5", "lemma3"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[1].endswith(":") and lines[2].split()[:6] == ["claim", "variant", "verdict", "size", "(lhs/rhs)",
                                                                "worst"]
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


def test_every_verdict_carries_its_evidence(capsys):
    assert main(["audit", "sdgt", *FAST, "--only", "lemma", "--json"]) == 0
    reports = json.loads(capsys.readouterr().out)
    kinds = {"proved", "proved-on-box", "refuted", "not-refuted", "statistical", "numeric"}
    for r in reports:
        assert r["evidence"] in kinds and r["certificate"]["method"]
    by_claim = {r["claim"]: r for r in reports}
    assert by_claim["lemma2.coefficient"]["evidence"] == "proved"
    assert by_claim["lemma3.alpha_K"]["evidence"] == "refuted"


def test_the_text_output_shows_the_evidence(capsys):
    assert main(["audit", "sdgt", *FAST, "--only", "lemma2", "lemma3"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("lemma2.coefficient"))
    assert "proved: z3" in row
    assert out.splitlines()[-2].startswith("evidence: 1 proved, 1 proved-on-box, 1 refuted")


def test_prove_levels(capsys):
    assert main(["audit", "sdgt", *FAST, "--only", "lemma2", "--prove", "0", "--json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    assert report["evidence"] == "not-refuted"      # level 0 re-checks points, proves nothing
    assert main(["audit", "sdgt", "--only", "lemma2", "--prove", "4"]) == 2
    assert "--prove must be a level in 0..3, got 4" in capsys.readouterr().err


def test_audit_all_counts_the_evidence_per_paper(capsys, tmp_path):
    assert main(["audit", "all", *FAST, "--only", "lemma2", "lemma4.kappa2", "--json",
                 "--report", str(tmp_path / "r")]) == 0
    data = json.loads(capsys.readouterr().out)
    counts = data.pop("evidence_counts")
    assert set(counts) == set(data) | {"all"}
    for paper, reports in data.items():
        assert sum(counts[paper].values()) == len(reports)
        for kind in ("proved", "proved-on-box", "refuted", "not-refuted", "statistical", "numeric"):
            assert counts[paper][kind] == sum(r["evidence"] == kind for r in reports)
    assert counts["all"]["proved"] >= 1 and counts["all"]["refuted"] >= 1
    index = (tmp_path / "r" / "index.md").read_text()
    assert index.splitlines()[2] == "What backs each verdict, per paper:"
    assert "| sdgt |" in index and "| fednova |" in index


def test_a_table_says_each_size_in_words_largest_first(capsys):
    """Issue 34 item 3: a factor of 10^47 and a factor of 2 are different findings: each row says
    its ratio in words and powers of ten, largest first within a severity."""
    import re

    from fedbound.readout import magnitude

    assert main(["audit", "fedada2", "--samples", "200", "--iterations", "0", "--prove", "0"]) == 0
    out = capsys.readouterr().out
    for block in out.split("\n\n"):
        sizes = [m.group(1) for m in re.finditer(r"  (?:holds|fails)    (a factor of \S+(?: [-+] \S+)?)", block)]
        assert all(size.startswith("a factor of ") for size in sizes)
        logs = [float(s.split("10^")[1]) if "10^" in s else magnitude(float(s.split()[3]))
                for s in sizes if " - " not in s and " + " not in s]
        assert logs == sorted(logs, reverse=True), block
    assert "a factor of 10^47" in out and "2.335e+47" not in out
