"""fedbound now against an earlier revision of itself, measured side by side in one run (issue 20:
"no slowdown beyond noise" after the architecture refactor).

The earlier revision (``--rev``, default the commit before the refactor) is checked out into a
temporary folder (``git worktree``); every workload runs in a fresh process of each version in
turn, alternating, ``--repeats`` times, and the median of each is compared: a ratio now/before of 1
is no change; below 1 is faster now. One torch thread everywhere (the runs' own setting).

Workloads (each the median seconds of its inner repetitions):

* ``fedavg-round``: one bare FedAvg round, least squares n = 1000 clients of 20 rows, d = 100,
  10 % participation, 5 local steps, float32;
* ``fedavg-run``: ``run()`` of the same FedAvg (the round plus the recorded metrics), per round;
* ``sdgt-round``: one SD-GT round, n = 100 in 10 ring subnets, d = 100, K = 5, h = 5, float64;
* ``fedadam-seeds``: 64 seeds of FedAdam batched (the sweeps' path), 20 rounds of a small task;
* ``theory-bound``: sdgt.thm3's bound at 10^5 points (compiled once, then evaluated);
* ``theory-max-step``: afga.thm46's implicit step-size solve at 10^3 points.

Usage: python benchmarks/bench_against_revision.py [--rev REV] [--repeats N] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the last commit before the architecture refactor of issue 20
DEFAULT_REV = "9b586e0"

WORKLOAD = r'''
import json, sys, time, warnings
import numpy as np, torch
warnings.simplefilter("ignore")
torch.set_num_threads(1)
name, inner = sys.argv[1], int(sys.argv[2])
from fedbound.algorithms import registry, run
from fedbound.network import Network
from fedbound.tasks import LeastSquares, Quadratic


def median_time(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def build(algorithm, task, network=None, **options):
    """The algorithm by the names of either version (lr/local_steps/clients_per_subnet now, the
    paper's gamma/K/h before)."""
    try:
        return registry.build(algorithm, task, network, seed=0, **options)
    except Exception:
        old = {"lr": "gamma", "local_steps": "K", "clients_per_subnet": "h"}
        return registry.build(algorithm, task, network, seed=0,
                              **{old.get(k, k): v for k, v in options.items()})


if name.startswith("fedavg"):
    task = LeastSquares.generate(1000, 20, 100, seed=0, dtype=torch.float32)
    alg = build("fedavg", task, lr=0.01, local_steps=5, clients_per_round=100)
    if name == "fedavg-round":
        state = alg.init()
        seconds = median_time(lambda: alg.step(state), inner)
    else:
        seconds = median_time(lambda: run(alg, 10), max(1, inner // 10)) / 10
elif name == "sdgt-round":
    task = LeastSquares.generate(100, 20, 100, seed=0)
    net = Network.from_topology("ring", 10, 10)
    alg = build("sdgt", task, net, lr=0.01, local_steps=5, clients_per_subnet=5)
    state = alg.init()
    seconds = median_time(lambda: alg.step(state), inner)
elif name == "fedadam-seeds":
    from fedbound.sweep.batch import run_cells
    task = Quadratic.generate(10, 5, kappa=4.0, mu=0.5, seed=0).with_noise(0.1)
    algs = [registry.build("fedadam", task, seed=s, lr=0.05, local_steps=2, clients_per_round=5,
                           server_lr=0.05) for s in range(64)]
    seconds = median_time(lambda: run_cells(algs, 20), max(1, inner // 10))
elif name == "theory-bound":
    from fedbound.theory import get
    thm3 = get("sdgt.thm3")
    rng = np.random.default_rng(0)
    K = rng.integers(1, 10, 100_000).astype(float)
    c = dict(L=1.0, mu=0.1, K=K, p=0.64, q=0.5, n=30, sigma=0.1, gamma=1e-4 / K, T=100, Lyap1=1.0)
    seconds = median_time(lambda: thm3.bound(**c), inner)
else:
    from fedbound.theory import get
    thm = get("afga.thm46")
    names = [n for n in thm.constants() if n != "eta_l"]
    c = {}
    for n in names:
        dom = thm.domain(n)[0]
        c[n] = 2.0 if dom.integer else (0.5 if dom.high <= 1 else 1.0)
    c["I"] = np.arange(1, 1001, dtype=float)
    seconds = median_time(lambda: thm.max_step(variable="eta_l", **c), max(1, inner // 10))
print(json.dumps({"seconds": seconds}))
'''

WORKLOADS = ("fedavg-round", "fedavg-run", "sdgt-round", "fedadam-seeds", "theory-bound",
             "theory-max-step")


def measure(path: Path, name: str, inner: int) -> float | None:
    env = {**os.environ, "PYTHONPATH": str(path), "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", WORKLOAD, name, str(inner)], env=env, cwd=path,
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        print(f"  {name} at {path}: failed: {out.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default=DEFAULT_REV, help=f"the earlier revision (default {DEFAULT_REV})")
    parser.add_argument("--repeats", type=int, default=5, help="alternations per workload (default 5)")
    parser.add_argument("--quick", action="store_true", help="3 alternations, fewer inner repetitions")
    args = parser.parse_args()
    repeats = 3 if args.quick else args.repeats
    inner = 10 if args.quick else 30
    with tempfile.TemporaryDirectory() as tmp:
        before = Path(tmp) / "before"
        subprocess.run(["git", "worktree", "add", "--detach", str(before), args.rev], cwd=ROOT,
                       check=True, capture_output=True)
        try:
            print(f"fedbound now ({ROOT}) against {args.rev}, {repeats} alternations, median seconds")
            print(f"{'workload':18s} {'before':>11s} {'now':>11s} {'now/before':>11s}")
            for name in WORKLOADS:
                pairs = [(measure(before, name, inner), measure(ROOT, name, inner))
                         for _ in range(repeats)]
                if any(a is None or b is None for a, b in pairs):
                    continue
                old = statistics.median(a for a, _ in pairs)
                new = statistics.median(b for _, b in pairs)
                print(f"{name:18s} {old:11.3e} {new:11.3e} {new / old:11.2f}")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before)], cwd=ROOT,
                           capture_output=True)


if __name__ == "__main__":
    main()
