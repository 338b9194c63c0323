"""The bare step loop from Python with torch's default threads against one thread, next to a busy
process on every core (issue 35), repeated: the thread policy must keep the default within 1.5x of
one thread in every repetition.

The loop is what fedbound.testing and notebooks run: ``state = alg.init()`` and ``state =
alg.step(state)`` from Python, nothing else, on FedAvg at n = 100, c = 10 (least squares, d = 100,
50 rows per client, K = 5, float64: the issue's job; and the 64-32-10 MLP on the digits, 15
samples per client, float32). Three settings, interleaved in every repetition:

* default: torch as the process found it (torch's default threads, this machine's cores); fedbound's
  thread policy chooses inside ``init`` and ``step`` (one thread for these rounds);
* one thread: ``torch.set_num_threads(1)`` by the caller (an explicit choice, which fedbound keeps);
* no policy (information): torch's default threads chosen explicitly
  (``fedbound.algorithms.threads.torch_threads``), so that the policy stays out: the stall the
  policy avoids.

Busy processes: one pure-Python spinning process per core (``os.cpu_count()``), started before the
first repetition and stopped after the last. Per repetition, each setting's median over 7 chunks
of rounds, the settings taking turns chunk by chunk; the ratio default / one thread of every
repetition and the worst of them (target <= 1.5x). Without the busy processes too (``--quiet-machine`` adds that run).

Usage: python benchmarks/bench_threads.py [--repeats R] [--rounds N] [--quiet-machine]
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fedbound.algorithms import registry  # noqa: E402
from fedbound.algorithms.threads import FOUND, torch_threads  # noqa: E402
from fedbound.tasks import LeastSquares, MLPClassifier  # noqa: E402
from fedbound.tasks.datasets import digits  # noqa: E402

TARGET = 1.5


def spin() -> None:   # pragma: no cover - a busy process
    while True:
        pass


def jobs() -> dict:
    """The two FedAvg jobs of the module doc."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((100, 50, 100)) / 10
    lsq = LeastSquares(A, A @ rng.standard_normal(100) + 0.1 * rng.standard_normal((100, 50)))
    X, y = digits()
    rows = np.stack([rng.choice(len(y), 15, replace=False) for _ in range(100)])
    mlp = MLPClassifier([X[r] for r in rows], [y[r] for r in rows], X[:100], y[:100], hidden=(32,),
                        dtype=torch.float32)
    return {"least squares": registry.build("fedavg", lsq, lr=0.01, local_steps=5, clients_per_round=10),
            "MLP digits": registry.build("fedavg", mlp, lr=0.2, local_steps=5, clients_per_round=10)}


def loop(alg, rounds: int) -> float:
    """Seconds per round of the bare loop."""
    t0 = time.perf_counter()
    state = alg.init()
    for _ in range(rounds):
        state = alg.step(state)
    return (time.perf_counter() - t0) / rounds


def chunk(name: str, alg, rounds: int) -> float:
    """Seconds per round of one loop in the setting ``name``."""
    if name == "default":
        return loop(alg, rounds)
    if name == "one thread":
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return loop(alg, rounds)
        finally:
            torch.set_num_threads(before)
    with torch_threads(FOUND):
        return loop(alg, rounds)


def settings(alg, rounds: int, chunks: int) -> dict[str, float]:
    """The median seconds per round of each setting over ``chunks`` loops, the settings taking
    turns chunk by chunk (a change of the machine's load hits all of them alike)."""
    times: dict[str, list[float]] = {"default": [], "one thread": [], "no policy": []}
    for _ in range(chunks):
        for name, out in times.items():
            out.append(chunk(name, alg, rounds))
    return {name: statistics.median(out) for name, out in times.items()}


def measure(algs: dict, repeats: int, rounds: int, busy: bool) -> None:
    procs = []
    if busy:
        ctx = multiprocessing.get_context("spawn")
        procs = [ctx.Process(target=spin, daemon=True) for _ in range(os.cpu_count() or 1)]
        for p in procs:
            p.start()
        time.sleep(1.0)
    try:
        print(f"\n== {'with a busy process on every core' if busy else 'without busy processes'} "
              f"({len(procs)} spinning), load average {os.getloadavg()[0]:.2f} ==")
        for label, alg in algs.items():
            loop(alg, 5)
            ratios, rows = [], []
            for r in range(repeats):
                t = settings(alg, rounds, 7)
                ratios.append(t["default"] / t["one thread"])
                rows.append(t)
                print(f"  {label}, repetition {r + 1}: default {t['default'] * 1e3:.3f} ms, one thread "
                      f"{t['one thread'] * 1e3:.3f} ms (default / one = {ratios[-1]:.2f}); no policy "
                      f"(torch's {FOUND} threads) {t['no policy'] * 1e3:.3f} ms", flush=True)
            worst = max(ratios)
            no_policy = max(t["no policy"] / t["one thread"] for t in rows)
            print(f"  {label}: worst default / one thread over {repeats} repetitions {worst:.2f}x "
                  f"(target <= {TARGET:g}x) {'PASS' if worst <= TARGET else 'MISS'}; without the policy "
                  f"the worst is {no_policy:.2f}x")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.join()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=20, help="rounds per chunk (7 chunks per setting)")
    parser.add_argument("--quiet-machine", action="store_true",
                        help="also measure without the busy processes")
    args = parser.parse_args()
    print(__doc__.splitlines()[0])
    print(f"torch {torch.__version__}, {os.cpu_count()} cores, torch's default threads here {FOUND}; "
          f"load average before {os.getloadavg()[0]:.2f}")
    algs = jobs()
    if args.quiet_machine:
        measure(algs, args.repeats, args.rounds, busy=False)
    measure(algs, args.repeats, args.rounds, busy=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
