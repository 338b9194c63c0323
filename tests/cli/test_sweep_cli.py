"""``fedbound sweep``: run, resume, refuse a changed SPEC unless --extend, report; one-line errors
with exit status 2."""
import json

import numpy as np
import pytest
import torch

from fedbound.cli.main import main
from fedbound.sweep import report
from fedbound.sweep.store import Store

torch.set_num_threads(1)

SPEC = {"algorithm": ["fedavg", "fedadam"], "task": {"name": "quadratic", "n": 6, "d": 3},
        "rounds": 15, "grid": {"lr": [0.05, 0.1], "local_steps": 2, "sigma": 0.1, "seed": [0, 1, 2]}}


def write(tmp_path, spec, name="spec.json"):
    path = tmp_path / name
    path.write_text(json.dumps(spec))
    return str(path)


def sweep(*args, capsys=None):
    code = main(["sweep", *map(str, args)])
    return (code, *capsys.readouterr()) if capsys is not None else code


def test_run_rerun_extend_and_report(tmp_path, capsys):
    spec, out = write(tmp_path, SPEC), tmp_path / "out"
    code, stdout, _ = sweep(spec, "--out", out, "--json", capsys=capsys)
    assert code == 0
    first = json.loads(stdout)
    assert (first["cells"], first["computed"], first["skipped"]) == (12, 12, 0)
    code, stdout, _ = sweep(spec, "--out", out, "--json", capsys=capsys)
    assert json.loads(stdout)["computed"] == 0
    changed = write(tmp_path, {**SPEC, "grid": {**SPEC["grid"], "seed": [0, 1, 2, 3]}}, "more.json")
    code, _, err = sweep(changed, "--out", out, capsys=capsys)
    assert code == 2 and "--extend" in err and len(err.strip().splitlines()) == 1
    code, stdout, _ = sweep(changed, "--out", out, "--extend", "--json", capsys=capsys)
    assert (json.loads(stdout)["computed"], json.loads(stdout)["cells"]) == (4, 16)
    other_task = write(tmp_path, {**SPEC, "rounds": 16}, "rounds.json")
    code, _, err = sweep(other_task, "--out", out, "--extend", capsys=capsys)
    assert code == 2 and "same task, network, rounds" in err

    code, stdout, _ = sweep("report", out, "--json", "--metric", "dist2", capsys=capsys)
    assert code == 0
    shown = json.loads(stdout)
    assert len(shown["configurations"]) == 4
    assert all(c["seeds"] == 4 and c["final"]["samples"] == 4 for c in shown["configurations"])
    for path in shown["plots"].values():
        assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    # the table's mean and interval are those of the stored final values
    store = Store(out)
    cells = [c for c in store.cells() if c["algorithm"] == "fedavg" and c["config"].count('"lr": 0.05')]
    finals = np.array([c["final"]["dist2"] for c in cells])
    store.close()
    row = next(c for c in shown["configurations"] if c["algorithm"] == "fedavg" and c["options"]["lr"] == 0.05)
    assert row["final"]["mean"] == pytest.approx(finals.mean(), rel=1e-12)
    code, stdout, _ = sweep("report", out, capsys=capsys)
    assert code == 0 and "fedadam" in stdout and "95% CI" in stdout


def test_overwrite_starts_afresh(tmp_path, capsys):
    spec, out = write(tmp_path, SPEC), tmp_path / "out"
    assert sweep(spec, "--out", out, capsys=capsys)[0] == 0
    other = write(tmp_path, {**SPEC, "rounds": 5}, "other.json")
    code, stdout, _ = sweep(other, "--out", out, "--overwrite", "--json", capsys=capsys)
    assert code == 0 and json.loads(stdout)["computed"] == 12


@pytest.mark.parametrize("args, words", [
    (["missing.json", "--out", "OUT"], "no such file"),
    (["SPEC"], "needs --out"),
    (["SPEC", "extra", "--out", "OUT"], "extra argument"),
    (["report"], "needs the sweep folder"),
    (["report", "OUT"], "holds no sweep database"),
    (["report", "OUT", "--ray"], "takes --metric and --json only"),
    (["BAD", "--out", "OUT"], "did you mean 'lr'"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, args, words):
    spec = write(tmp_path, SPEC)
    bad = write(tmp_path, {**SPEC, "grid": {"lrr": 0.1}}, "bad.json")
    (tmp_path / "OUT").mkdir()
    args = [{"SPEC": spec, "BAD": bad, "OUT": str(tmp_path / "OUT"),
             "missing.json": str(tmp_path / "missing.json")}.get(a, a) for a in args]
    code, _, err = sweep(*args, capsys=capsys)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_a_folder_of_another_command_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "fedavg", "--lr", "0.1", "--rounds", "2", "--out", str(out)]) == 0
    code, _, err = sweep(write(tmp_path, SPEC), "--out", out, capsys=capsys)
    assert code == 2 and "not a sweep" in err


def test_summarize_reports_diverged_cells(tmp_path):
    from fedbound.sweep import loads, run_sweep

    spec = loads(json.dumps({**SPEC, "algorithm": "fedavg", "rounds": 40, "grid": {"lr": [0.05, 1e10], "seed": [0, 1]}}))
    summary = run_sweep(spec, tmp_path)
    assert summary.diverged == 2
    rows = report.summarize(tmp_path)
    assert [r["diverged"] for r in rows] == [0, 2] and rows[1]["final"] is None


def test_an_unreachable_ray_address_is_one_line_exit_2(tmp_path, capsys):
    pytest.importorskip("ray", reason="the Ray path needs the optional dependency ray")
    code, _, err = sweep(write(tmp_path, SPEC), "--out", tmp_path / "out", "--ray-address",
                         "127.0.0.1:1", capsys=capsys)
    assert code == 2 and "cannot reach Ray at '127.0.0.1:1'" in err
