"""A sweep killed with SIGKILL at a chosen point (after a random number of finished cells, held
there: tests/sweep/held_sweep.py) and rerun gives exactly the database of an uninterrupted sweep
(every value bitwise, wall times aside: the same code on the same machine), on the embedded path."""
import random

import pytest

from fedbound.sweep import load, run_sweep
from fedbound.sweep.store import DB_NAME



@pytest.mark.slow
def test_sigkill_and_resume_gives_the_uninterrupted_database(tmp_path, spec_file, reference, kill,
                                                             run_cli, content):
    spec = load(spec_file)
    total = len(spec.cells)
    out = tmp_path / "killed"
    rng = random.Random(14)
    seen = [kill((spec_file, "--out", out), out / DB_NAME, total, rng) for _ in range(2)]
    assert 0 < seen[0] <= seen[1] < total, seen   # the second kill lands in the resumed sweep
    run_cli(spec_file, "--out", out)
    got, want = content(out), reference
    assert got == want
    statuses = {row[7] for row in got[1]}
    assert statuses == {"done"} and len(got[1]) == total
    assert len(got[2]) == total * (spec.rounds + 1)


@pytest.mark.slow
def test_ctrl_c_exits_130_and_resumes(tmp_path, spec_file, reference, kill, run_cli, content):
    import signal

    spec = load(spec_file)
    out = tmp_path / "interrupted"
    seen = kill((spec_file, "--out", out), out / DB_NAME, len(spec.cells), random.Random(7),
                signal.SIGINT)
    assert 0 < seen < len(spec.cells)
    run_cli(spec_file, "--out", out)
    assert content(out) == reference


def test_a_finished_sweep_reruns_nothing(tmp_path, spec_file):
    spec = load(spec_file)
    first = run_sweep(spec, tmp_path)
    again = run_sweep(spec, tmp_path)
    assert (first.computed, again.computed, again.skipped) == (len(spec.cells), 0, len(spec.cells))


def test_collect_gives_the_stored_numbers(spec_file, reference):
    """The in-memory API (no store) computes what a sweep stores."""
    from fedbound.sweep import collect

    stored = {}
    for row in reference[2]:
        stored.setdefault(row[0], []).append(row)
    for i, (cell, result) in enumerate(collect(load(spec_file)), start=1):
        assert result.status == "done"
        assert [r[2] for r in stored[i]] == result.columns["loss"].tolist()


def test_batching_does_not_change_the_stored_numbers(tmp_path, content):
    """``"batch": false`` (one run per cell) and the default batches store the same rounds, bitwise."""
    import json

    from fedbound.sweep import loads

    raw = {"algorithm": ["fedavg", "fedadam"], "task": {"name": "lsq", "n": 6, "d": 3, "rows": 5},
           "rounds": 20, "grid": {"lr": 0.05, "local_steps": 2, "clients_per_round": 3,
                                  "sigma": 0.3, "seed": [0, 1, 2, 3]}}
    run_sweep(loads(json.dumps(raw)), tmp_path / "batched")
    run_sweep(loads(json.dumps({**raw, "batch": False})), tmp_path / "single")
    batched, single = content(tmp_path / "batched"), content(tmp_path / "single")
    assert len({row[6] for row in batched[1]}) == 2 and len({row[6] for row in single[1]}) == 8
    assert batched[2] == single[2]
    assert [row[9] for row in batched[1]] == [row[9] for row in single[1]]


def test_the_report_of_collected_results_is_the_stored_report(tmp_path, spec_file):
    from fedbound.sweep import collect, report

    spec = load(spec_file)
    run_sweep(spec, tmp_path)
    stored, in_memory = report.summarize(tmp_path), report.summarize_collected(collect(spec))
    assert [r["final"] for r in stored] == [r["final"] for r in in_memory]
    assert all(r["seeds"] == 5 for r in stored)
