"""FedAvg on the GPU against the CPU (issue 24 item 4, ``--device cuda``), measured in one run.

Least squares, K = 5 local full-gradient steps, c of n clients per round, float32 (the default
dtype of ``fedbound run``) and float64: ``run()`` per round (its default metrics, the thread policy
on the CPU) on the CPU and on CUDA, after a warm-up, and the ratio; before timing, the two runs'
final models must agree (float64: 1e-9 relative; float32: 1e-4), else no ratio is printed. Without
a CUDA GPU the benchmark says "no GPU" and prints the CPU figures only.

Run:  .venv/bin/python benchmarks/bench_device.py [--quick]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch

from fedbound.algorithms import registry, run
from fedbound.tasks import LeastSquares

SIZES = [(1000, 100, 50, 100), (10000, 100, 50, 100), (1000, 100, 50, 1000), (10000, 1000, 20, 1000)]
QUICK = SIZES[:2]


def per_round(task, clients: int, rounds: int) -> tuple[float, np.ndarray]:
    """Seconds per round of run() (after a warm-up run) and the final model."""
    build = dict(seed=0, lr=0.01, local_steps=5, clients_per_round=clients)
    run(registry.build("fedavg", task, **build), 3)
    if task.device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    traj = run(registry.build("fedavg", task, **build), rounds)
    if task.device.type == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / rounds, traj.x_g[-1].cpu().numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two sizes, fewer rounds")
    args = parser.parse_args()
    rounds = 10 if args.quick else 30
    gpu = torch.cuda.is_available()
    print(__doc__.splitlines()[0])
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; "
          + (f"GPU: {torch.cuda.get_device_name(0)}" if gpu else "no GPU: CPU figures only"))
    print(f"{'n x c, m, d':24s} {'dtype':8s} {'CPU ms/round':>13s} {'GPU ms/round':>13s} {'CPU/GPU':>8s}")
    for n, c, m, d in (QUICK if args.quick else SIZES):
        for dtype, tol in ((torch.float32, 1e-4), (torch.float64, 1e-9)):
            task = LeastSquares.generate(n=n, m=m, d=d, seed=0, dtype=dtype)
            cpu_s, cpu_x = per_round(task, c, rounds)
            label = f"{n} x {c}, {m}, {d}"
            name = str(dtype).replace("torch.", "")
            if not gpu:
                print(f"{label:24s} {name:8s} {cpu_s * 1e3:13.3f} {'no GPU':>13s}")
                continue
            gpu_s, gpu_x = per_round(task.to("cuda"), c, rounds)
            scale = max(1.0, float(np.abs(cpu_x).max()))
            if np.abs(gpu_x - cpu_x).max() > tol * scale:
                print(f"{label:24s} {name:8s} {cpu_s * 1e3:13.3f} {gpu_s * 1e3:13.3f}  "
                      f"models differ by {np.abs(gpu_x - cpu_x).max():.3g}: no ratio")
                continue
            print(f"{label:24s} {name:8s} {cpu_s * 1e3:13.3f} {gpu_s * 1e3:13.3f} "
                  f"{cpu_s / gpu_s:8.2f}")


if __name__ == "__main__":
    main()
