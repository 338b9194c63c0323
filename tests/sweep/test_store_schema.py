"""A store written before issue 20's option names (schema 1: gamma, K, h in its cells' keys) is still
read by the report and refused, with the reason, when a sweep would add to it; an old SPEC that mixes
the families' old names ("gamma" for SD-GT beside "lr" for FedAvg) keeps its meaning."""
import json
import sqlite3

import pytest

from fedbound.errors import ValidationError
from fedbound.sweep import report, runner, spec as spec_mod
from fedbound.sweep.store import DB_NAME

SPEC = {"algorithm": ["fedavg", "sdgt"], "task": {"name": "lsq", "n": 4, "d": 3, "rows": 3},
        "network": {"subnets": 2, "topology": "ring"}, "rounds": 2,
        "grid": {"lr": 0.05, "gamma": 0.02, "K": 2, "local_steps": 3, "seed": [0, 1]}}


def test_old_names_keep_their_meaning_per_family():
    cells = spec_mod.parse(SPEC).cells
    sdgt = [c.options for c in cells if c.algorithm == "sdgt"]
    fedavg = [c.options for c in cells if c.algorithm == "fedavg"]
    assert all(o["lr"] == 0.02 and o["local_steps"] == 2 for o in sdgt)
    assert all(o["lr"] == 0.05 and o["local_steps"] == 3 for o in fedavg)


def test_a_schema_1_store_is_reported_not_resumed(tmp_path):
    spec = spec_mod.parse(SPEC)
    runner.run_sweep(spec, tmp_path)
    before = report.summarize(tmp_path)
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
    assert json.dumps(report.summarize(tmp_path), default=str) == json.dumps(before, default=str)
    with pytest.raises(ValidationError, match="schema 1; gamma, K, h are now lr, local_steps"):
        runner.run_sweep(spec, tmp_path)
