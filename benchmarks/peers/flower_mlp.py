"""FedAvg and FedAdam on the MLP of the neural race with Flower's Simulation Engine
(``flwr.simulation.run_simulation``, Ray backend), as a Flower user runs it: a ``ServerApp`` with
Flower's strategy and a ``ClientApp`` per virtual SuperNode training a PyTorch MLP
(benchmarks/peers/flower_mlp_app.py), n SuperNodes, each ClientApp given one CPU.

Usage (by benchmarks/neural_race.py, with the peers' Python):
    python flower_mlp.py JOB_DIR [PARENT_WALL_CLOCK]
prints one line "RESULT {json}" (benchmarks/peers/common.py) with the model after round 1 (x1).
"""
from __future__ import annotations

import os
import sys
import time

T_IMPORT = time.time()

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# Ray's workers import flower_mlp_app by name: they inherit this environment
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (HERE, os.environ.get("PYTHONPATH")) if p)
os.environ["FEDBOUND_BENCH_JOB"] = os.path.abspath(sys.argv[1])
os.environ.setdefault("RAY_DEDUP_LOGS", "0")
os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

from common import process_start, report  # noqa: E402

import flwr  # noqa: E402
from flwr.simulation import run_simulation  # noqa: E402

import flower_mlp_app  # noqa: E402
from mlp_common import peak_rss_mb  # noqa: E402


def main():
    t0 = process_start()
    spec, features = flower_mlp_app.job()[:2]
    n = int(features.shape[0] // spec["m"])
    run_simulation(server_app=flower_mlp_app.server_app, client_app=flower_mlp_app.client_app,
                   num_supernodes=n,
                   backend_config={"client_resources": {"num_cpus": 1, "num_gpus": 0.0},
                                   "init_args": {"logging_level": "ERROR", "log_to_driver": False}})
    res = flower_mlp_app.RESULT
    if not res:
        raise SystemExit("the ServerApp did not finish (see the log above)")
    report("flower", flwr.__version__, t0, res["starts"], res["ends"], res["x"],
           x1=res["x1"].tolist(), participants_verified=res["verified"], t_import=T_IMPORT,
           driver_max_rss_mb=peak_rss_mb())


if __name__ == "__main__":
    main()
