"""FedAvg round benchmark (issue 9, "Speed"): prints side-by-side numbers measured in one run.

1. A FedAvg round at n = 1000 clients, d = 1000, 10 local full-gradient steps on least squares
   (m = 20 and m = 2 rows per client), in float32 (the default dtype of ``fedbound run`` and of a
   PyTorch client) and float64, at 1 %, 10 % and 100 % participation: fedbound's vectorized
   round (only the participants' rows are computed) against two per-client Python loops: the lean
   one (the same five torch operations per client step, no autograd: the strongest loop one can
   write) and the one FL simulators run per client (a parameter tensor, torch.optim.SGD, the loss
   and autograd's backward per step, as a Flower/PyTorch client does); and the time per round
   against linear scaling in the number of participants.
   The speed-up of vectorizing is bounded by (loop overhead + compute) / compute per client step:
   with m = 20 rows of d = 1000 a client step is two 160 KB matrix-vector products, comparable to
   the loop's per-call overhead, so no batching can reach 10x there; with m = 2 it can.
2. The small job n = 100, d = 100, 10 clients sampled per round, 5 local steps, 20 rounds: time per
   round, and the start-up time of ``fedbound run fedavg`` (a fresh process, to the first round).
   Flower: measured side by side when ``FLWR_PYTHON`` names a Python with ``flwr[simulation]``
   installed, else the figures quoted in issue 9 (about 0.1 s per round, 11-12 s start-up),
   clearly labelled as quoted.
3. Torch threads: the small round with 1 and 2 threads, alone and next to a busy process on a second
   core (why ``fedbound run`` uses 1 thread).

Usage: python benchmarks/bench_fedavg_round.py [--quick]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fedbound.algorithms import FedAvg  # noqa: E402
from fedbound.tasks import LeastSquares  # noqa: E402

QUOTED_FLOWER = {"per_round_s": 0.1, "startup_s": 11.5}


def least_squares(n, m, d, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, m, d)) / np.sqrt(d)
    return A, A @ rng.standard_normal(d) + 0.1 * rng.standard_normal((n, m))


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def loop_round(A, y, x, clients, steps, lr):
    """The per-client reference: one client at a time, its own local steps, then the average."""
    m = A.shape[1]
    models = []
    for i in clients.tolist():
        Ai, yi, xi = A[i], y[i], x.clone()
        for _ in range(steps):
            xi = xi - lr * (Ai.T @ (Ai @ xi - yi)) / m
        models.append(xi)
    return torch.stack(models).mean(dim=0)


def autograd_loop_round(A, y, x, clients, steps, lr):
    """The per-client loop of FL simulators: per client a fresh parameter and torch.optim.SGD, and
    per local step the loss, backward and the optimizer step (a Flower PyTorch client's fit)."""
    m = A.shape[1]
    models = []
    for i in clients.tolist():
        w = torch.nn.Parameter(x.clone())
        opt = torch.optim.SGD([w], lr=lr)
        for _ in range(steps):
            opt.zero_grad()
            loss = torch.sum((A[i] @ w - y[i]) ** 2) / (2 * m)
            loss.backward()
            opt.step()
        models.append(w.detach())
    return torch.stack(models).mean(dim=0)


def vectorized_vs_loop(quick, m, dtype):
    n, d, steps, lr = 1000, 1000, 10, 0.05
    A, y = least_squares(n, m, d)
    task = LeastSquares(A, y, dtype=dtype)
    tol = 1e-10 if dtype == torch.float64 else 1e-4
    At, yt = task.A, task.y
    print(f"\n1. FedAvg round, n = {n}, d = {d}, m = {m} rows per client, {steps} local steps "
          f"({str(dtype).replace('torch.', '')}, {torch.get_num_threads()} thread(s))")
    print(f"{'participation':>14} {'clients':>8} {'fedbound s/round':>17} {'lean loop s':>12} "
          f"{'speed-up':>9} {'autograd loop s':>16} {'speed-up':>9} {'s per client':>13}")
    rows = []
    for frac in (0.01, 0.1, 1.0):
        q = int(round(frac * n))
        alg = FedAvg(task, lr=lr, local_steps=steps, clients_per_round=q, seed=0)
        state = alg.step(alg.init())
        reps = 3 if quick else (15 if q < n else 5)
        t_vec = median_time(lambda: alg.step(state), reps)
        nxt = alg.step(state)
        clients = nxt.clients          # the round from ``state`` samples these
        torch.testing.assert_close(loop_round(At, yt, state.x_g, clients, steps, lr), nxt.x_g,
                                   rtol=0, atol=tol)   # the loop computes the same round
        torch.testing.assert_close(autograd_loop_round(At, yt, state.x_g, clients, steps, lr),
                                   nxt.x_g, rtol=0, atol=tol)
        reps_loop = 2 if quick or q == n else 5
        t_loop = median_time(lambda: loop_round(At, yt, state.x_g, clients, steps, lr), reps_loop)
        t_auto = median_time(lambda: autograd_loop_round(At, yt, state.x_g, clients, steps, lr),
                             reps_loop)
        rows.append((q, t_vec))
        print(f"{frac:>13.0%} {q:>8} {t_vec:>17.5f} {t_loop:>12.5f} {t_loop / t_vec:>8.1f}x "
              f"{t_auto:>16.5f} {t_auto / t_vec:>8.1f}x {t_vec / q:>13.2e}")
    (q0, t0), (q1, t1) = rows[0], rows[-1]
    print(f"linearity: time(100%)/time(1%) = {t1 / t0:.1f} for {q1 / q0:.0f}x the participants "
          f"(within 2x of linear if in [{q1 / q0 / 2:.0f}, {2 * q1 / q0:.0f}]); "
          f"10%: {rows[1][1] / t0:.1f} for {rows[1][0] / q0:.0f}x")


def small_job(rounds=20):
    n, m, d = 100, 20, 100
    A, y = least_squares(n, m, d, seed=1)
    task = LeastSquares(A, y)
    alg = FedAvg(task, lr=0.05, local_steps=5, clients_per_round=10, seed=0)
    state = alg.init()
    t0 = time.perf_counter()
    for _ in range(rounds):
        state = alg.step(state)
    return (time.perf_counter() - t0) / rounds, (A, y)


def startup(data_path):
    """(wall, CPU) seconds of a fresh ``fedbound run fedavg`` with 0 rounds and with 20 rounds (CPU:
    user + system time of the child, the figure that does not depend on other processes)."""
    out = {}
    for rounds in (0, 20):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "fedbound", "run", "fedavg", "--task", "lsq", "--data",
                   str(data_path), "--clients-per-round", "10", "--local-steps", "5", "--lr", "0.05",
                   "--rounds", str(rounds), "--float64", "--seed", "0", "--out", tmp]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            out[rounds] = (wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return out


FLOWER_SCRIPT = textwrap.dedent('''
    import sys, time, numpy as np
    t_start = time.perf_counter()
    import flwr as fl
    from flwr.common import ndarrays_to_parameters
    data = np.load(sys.argv[1]); A, y = data["A"], data["y"]; m = A.shape[1]
    stamps = []
    class Client(fl.client.NumPyClient):
        def __init__(self, i): self.i = i
        def fit(self, parameters, config):
            x = parameters[0].copy(); Ai, yi = A[self.i], y[self.i]
            for _ in range(5): x = x - 0.05 * Ai.T @ (Ai @ x - yi) / m
            return [x], m, {}
    def client_fn(context):
        return Client(int(context.node_config["partition-id"])).to_client()
    class Timed(fl.server.strategy.FedAvg):
        def aggregate_fit(self, *a, **k):
            stamps.append(time.perf_counter()); return super().aggregate_fit(*a, **k)
    strategy = Timed(fraction_fit=0.1, min_fit_clients=10, fraction_evaluate=0.0, min_available_clients=100,
                     initial_parameters=ndarrays_to_parameters([np.zeros(A.shape[2])]))
    fl.simulation.start_simulation(client_fn=client_fn, num_clients=100, strategy=strategy,
                                   config=fl.server.ServerConfig(num_rounds=20),
                                   client_resources={"num_cpus": 1})
    per_round = (stamps[-1] - stamps[0]) / (len(stamps) - 1)
    print("FLOWER", stamps[0] - t_start - per_round, per_round)
''')


def flower(data_path):
    python = os.environ.get("FLWR_PYTHON")
    if not python:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(FLOWER_SCRIPT)
    res = subprocess.run([python, fh.name, str(data_path)], capture_output=True, text=True, timeout=900)
    line = [ln for ln in res.stdout.splitlines() if ln.startswith("FLOWER")]
    if not line:
        print("Flower run failed:", (res.stderr or res.stdout)[-800:])
        return None
    _, startup_s, per_round = line[-1].split()
    return {"startup_s": float(startup_s), "per_round_s": float(per_round)}


def busy():
    """A process that keeps one core busy."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def threads_under_contention():
    print("\n3. small round (n = 100, d = 100, 10 sampled, 5 local steps) against torch threads")
    print(f"{'threads':>8} {'alone s/round':>14} {'busy core s/round':>18} {'slow-down':>10}")
    for threads in (1, 2):
        torch.set_num_threads(threads)
        alone = small_job(40)[0]
        proc = busy()
        try:
            time.sleep(0.5)
            contended = small_job(40)[0]
        finally:
            proc.kill()
            proc.wait()
        print(f"{threads:>8} {alone:>14.5f} {contended:>18.5f} {contended / alone:>9.1f}x")
    torch.set_num_threads(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for m in (20, 2):
        for dtype in (torch.float32, torch.float64):
            vectorized_vs_loop(args.quick, m, dtype)
    per_round, (A, y) = small_job()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "small.npz"
        np.savez(path, A=A, y=y)
        times = startup(path)
        measured = flower(path)
    print("\n2. small job: n = 100, d = 100, 10 sampled, 5 local steps, 20 rounds")
    print(f"fedbound: {per_round * 1e3:.2f} ms per round; `fedbound run fedavg` start-up "
          f"{times[0][0]:.2f} s wall, {times[0][1]:.2f} s CPU (fresh process, 0 rounds, files "
          f"written); with 20 rounds {times[20][0]:.2f} s wall, {times[20][1]:.2f} s CPU; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    ref, label = (measured, "measured here") if measured else (QUOTED_FLOWER, "QUOTED from issue 9, not measured")
    print(f"Flower ({label}): {ref['per_round_s']:.3f} s per round, start-up {ref['startup_s']:.1f} s")
    print(f"ratio per round: {ref['per_round_s'] / per_round:.0f}x faster (target >= 30x); "
          f"start-up {times[0][1]:.2f} s CPU (target < 3 s)")
    threads_under_contention()


if __name__ == "__main__":
    main()
