"""FedAvg on least squares with Flower's Simulation Engine (``flwr.simulation.run_simulation``,
Ray backend), as a Flower user runs it: a ``ServerApp`` with Flower's ``FedAvg`` strategy and a
``ClientApp`` per virtual SuperNode (benchmarks/peers/flower_app.py), n SuperNodes, each ClientApp
given one CPU. The strategy trains the benchmark's participants of each round; the clients run K
local full-gradient steps in numpy float64 (Flower's ``Array`` keeps float64), so the final model is
comparable to the hand-written FedAvg to rounding.

Usage (by benchmarks/bench_peers.py, with the peers' Python):
    python flower_fedavg.py JOB_DIR [PARENT_WALL_CLOCK]
prints one line "RESULT {json}" (benchmarks/peers/common.py).
"""
from __future__ import annotations

import os
import sys
import time

T_IMPORT = time.time()

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# Ray's workers import flower_app by name: they inherit this environment
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (HERE, os.environ.get("PYTHONPATH")) if p)
os.environ["FEDBOUND_BENCH_JOB"] = os.path.abspath(sys.argv[1])
os.environ.setdefault("RAY_DEDUP_LOGS", "0")
# a benchmark phones no one: Flower's telemetry and Ray's usage statistics off (both post from
# background threads; neither is on a round's path)
os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

from common import process_start, report  # noqa: E402

import flwr  # noqa: E402
from flwr.simulation import run_simulation  # noqa: E402

import flower_app  # noqa: E402


def main():
    t0 = process_start()
    n = int(flower_app.job()[1].shape[0])
    run_simulation(server_app=flower_app.server_app, client_app=flower_app.client_app,
                   num_supernodes=n,
                   backend_config={"client_resources": {"num_cpus": 1, "num_gpus": 0.0},
                                   "init_args": {"logging_level": "ERROR", "log_to_driver": False}})
    res = flower_app.RESULT
    if not res:
        raise SystemExit("the ServerApp did not finish (see the log above)")
    report("flower", flwr.__version__, t0, res["starts"], res["ends"], res["x"],
           participants_verified=res["verified"], t_import=T_IMPORT)


if __name__ == "__main__":
    main()
