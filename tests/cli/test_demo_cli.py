"""`fedbound demo` runs end to end and writes its files; its numbers come from the run."""
import json

from fedbound.cli.main import main


def test_demo_writes_files_and_reports_computed_numbers(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--rounds", "60"]) == 0
    printed = capsys.readouterr().out
    for name in ("summary.json", "network.json", "metrics.csv", "convergence.png", "audit.json"):
        assert (out / name).stat().st_size > 0
    summary = json.loads((out / "summary.json").read_text())
    assert 0 < summary["network"]["q"] <= 1
    assert summary["network"]["p"] == 1 - 0.6 ** 2
    # the audit finds the flags the notes predict (F18, F29) by computation
    assert any(f.startswith("thm3.A_l1") for f in summary["theory"]["audit_failures"])
    assert any(f.startswith("thm5.contains_root [printed]") for f in summary["theory"]["audit_failures"])
    for run in summary["runs"].values():  # linear convergence: 60 rounds shrink the error 10x
        assert run["dist2_final"] < 0.1 * run["dist2_initial"]
    assert "E_d2d/E = 0.01" in printed and len(summary["control"]) == 2


def test_demo_rejects_bad_rounds(capsys):
    assert main(["demo", "--rounds", "0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
