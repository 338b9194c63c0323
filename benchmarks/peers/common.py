"""Shared by the peers' scripts (run by the peers' Python, never imported by fedbound): the job
files written by benchmarks/bench_peers.py and the JSON line each script prints.

Job directory: A.npy (n, m, d) float64, y.npy (n, m) float64, participants.npy (R, c) int64 (the
clients of each round, in fedbound's order), job.json {"lr", "local_steps", "rounds"}. The model
starts at zero; every client holds m rows, so example weights and equal weights agree.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np


def load_job(folder: str | Path):
    folder = Path(folder)
    job = json.loads((folder / "job.json").read_text())
    A = np.load(folder / "A.npy", mmap_mode="r")     # shared page cache between processes
    y = np.load(folder / "y.npy", mmap_mode="r")
    participants = np.load(folder / "participants.npy")
    return job, A, y, participants


def local_sgd(x, A_i, y_i, lr, steps):
    """steps full-gradient steps on f_i(x) = ||A_i x - y_i||^2 / (2m), in float64."""
    m = A_i.shape[0]
    for _ in range(steps):
        x = x - lr * (A_i.T @ (A_i @ x - y_i)) / m
    return x


def report(name: str, version: str, t_process: float, round_starts, round_ends, x_final,
           **extra) -> None:
    """The one JSON line the benchmark reads: start-up (process start, taken as the parent's
    ``BENCH_T0`` wall clock when given, to the first round's start), per-round times, the final
    model."""
    print("RESULT " + json.dumps({
        "peer": name, "version": version, "t_process": t_process,
        "round_starts": list(round_starts), "round_ends": list(round_ends),
        "x_final": np.asarray(x_final, dtype=np.float64).tolist(), **extra}), flush=True)


def process_start() -> float:
    """Wall-clock time of this process's start: the parent's stamp just before it spawned us
    (argv[2]) when given, else now."""
    return float(sys.argv[2]) if len(sys.argv) > 2 else time.time()
