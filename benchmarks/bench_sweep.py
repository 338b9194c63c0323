"""Sweep benchmark (issue 14): prints side-by-side numbers measured in one run.

1. A 64-cell sweep (fedavg and sdgt, 2 step sizes x 16 seeds each, least squares n = 20, d = 10,
   100 rounds, gradient noise): a plain Python loop over the cells (build, ``run``, keep the
   trajectory: what notebooks did by hand), the embedded sweep with seeds batched (the default),
   the embedded sweep one run per cell (``"batch": false``), and the sweep on a local Ray
   (``--ray``: the start of Ray included, as a user pays it, and again on a Ray already running).
   The sweeps include writing every round of every cell to the SQLite store.
2. Batched seeds against one run per seed: 100 seeds of FedAvg on a small least-squares task
   (n = 10, d = 5, 5 local steps, 4 of 10 clients per round, 50 rounds, sigma = 0.3), all with one
   torch thread; target at least 20x (issue 24; issue 14 asked 5x).

Usage: python benchmarks/bench_sweep.py [--quick] [--no-ray]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fedbound.algorithms import registry, run  # noqa: E402
from fedbound.sweep import loads, run_sweep  # noqa: E402
from fedbound.sweep.batch import run_seeds  # noqa: E402
from fedbound.sweep.runner import Problem  # noqa: E402
from fedbound.tasks import LeastSquares  # noqa: E402


def spec_text(seeds: int, rounds: int, batch: bool) -> str:
    return (f'{{"algorithm": ["fedavg", "sdgt"], "task": {{"name": "lsq", "n": 20, "d": 10, "rows": 10}}, '
            f'"network": {{"subnets": 2, "topology": "ring"}}, "rounds": {rounds}, "batch": {str(batch).lower()}, '
            f'"grid": {{"lr": [0.02, 0.05], "gamma": [0.01, 0.02], "local_steps": 5, "K": 3, '
            f'"clients_per_round": 10, "sigma": 0.2, "seed": {list(range(seeds))}}}}}')


def timed(fn) -> float:
    """Wall seconds of ``fn()``."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def cpu_timed(fn, repeats: int) -> tuple[float, float]:
    """(least wall seconds, least CPU seconds of this process) over ``repeats`` calls: on a shared
    machine the CPU time of an in-process variant is the number that does not move with the load."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def plain_loop(text: str) -> None:
    spec = loads(text)
    problem = Problem(spec)
    [run(problem.algorithm(cell), spec.rounds).columns() for cell in spec.cells]


def sweep_64(quick: bool, with_ray: bool) -> None:
    seeds, rounds = (4, 30) if quick else (16, 100)
    batched, single = spec_text(seeds, rounds, True), spec_text(seeds, rounds, False)
    cells = len(loads(batched).cells)
    print(f"1. a {cells}-cell sweep ({rounds} rounds each), seconds (in-process rows: best of 3 wall "
          f"and CPU time):")
    counter = iter(range(10 ** 6))
    times = {"plain loop": cpu_timed(lambda: plain_loop(single), 3)}
    with tempfile.TemporaryDirectory() as tmp:
        times["embedded, seeds batched"] = cpu_timed(
            lambda: run_sweep(loads(batched), Path(tmp) / f"a{next(counter)}"), 3)
        times["embedded, one run per cell"] = cpu_timed(
            lambda: run_sweep(loads(single), Path(tmp) / f"b{next(counter)}"), 3)
        if with_ray:
            times["Ray (local, started on demand)"] = timed(
                lambda: run_sweep(loads(single), Path(tmp) / "c", ray=True))
            import ray
            ray.init(address="local", include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
            try:
                times["Ray (already running), one run per cell"] = timed(
                    lambda: run_sweep(loads(single), Path(tmp) / "d", ray=True))
                times["Ray (already running), seeds batched"] = timed(
                    lambda: run_sweep(loads(batched), Path(tmp) / "e", ray=True))
                cpus = int(ray.cluster_resources().get("CPU", 0))
            finally:
                ray.shutdown()
            print(f"   (Ray with {cpus} CPUs)")
    base = times["plain loop"]
    for name, t in times.items():
        wall, cpu = t if isinstance(t, tuple) else (t, None)
        line = f"   {name:42s} wall {wall:8.2f} s  {base[0] / wall:6.2f}x the plain loop"
        if cpu is not None:
            line += f"   CPU {cpu:8.2f} s  {base[1] / cpu:6.2f}x"
        print(line)


def batched_seeds(quick: bool) -> None:
    seeds, rounds = (20, 20) if quick else (100, 50)
    task = LeastSquares.generate(10, 20, 5, seed=0)
    noisy = task.with_noise(0.3)
    algs = [registry.build("fedavg", noisy, seed=s, lr=0.05, local_steps=5, clients_per_round=4)
            for s in range(seeds)]
    one_by_one = cpu_timed(lambda: [run(a, rounds).columns() for a in algs], 3)
    batched = cpu_timed(lambda: run_seeds(algs, rounds), 3)
    print(f"2. {seeds} seeds of FedAvg (n = 10, d = 5, {rounds} rounds), best of 3, one torch thread:")
    for what, i in (("wall", 0), ("CPU", 1)):
        print(f"   {what:4s}: one run per seed {one_by_one[i]:.2f} s, batched {batched[i]:.2f} s: "
              f"{one_by_one[i] / batched[i]:.1f}x (target >= 20x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--no-ray", action="store_true", help="leave out the Ray rows")
    args = parser.parse_args()
    torch.set_num_threads(1)
    batched_seeds(args.quick)
    with_ray = not args.no_ray
    if with_ray:
        try:
            import ray  # noqa: F401
        except ImportError:
            print("   (ray is not installed: pip install 'fedbound[ray]'; Ray rows left out)")
            with_ray = False
    sweep_64(args.quick, with_ray)


if __name__ == "__main__":
    main()
