"""Vectorized SD-GT against a plain per-client Python loop, and the memory bandwidth of a round.

Part 1 (throughput, target >= 10x at n = 100, d = 100): the same SD-GT rounds (seed 003, eqs.
(4)-(11), partial sampling, corrected init) on the same least-squares task
f_i(x) = 1/(2m) ||A_i x - y_i||^2 (fedbound.tasks.LeastSquares), run by
  * fedbound.algorithms.SDGT (clients stacked in (n, d) tensors, batched mixing), and
  * LoopSDGT below: lists of per-client tensors, one Python iteration per client and neighbour.
Both use the same sampled masks; their iterates must agree to 1e-10. Throughput is in
client-steps/s = n K rounds / seconds (best of --repeats).

Part 2 (bandwidth, target >= 50% of copy bandwidth at n = 1000, d = 1000): bytes one SD-GT round
moves, divided by the round time, against the copy bandwidth of a large torch tensor copy_ timed in
the same run (read + write bytes). Two byte counts (see round_bytes):
  * essential: every tensor the round must touch, once per access (A (n, m, d) once per gradient
    evaluation, y, X, the gradients, Y, Z, the accumulator, W), i.e. what a fused implementation
    would move;
  * streamed: essential plus the second pass over A (and the residual round trip) that the
    gradient A^T (A x - y) / m makes as two batched products. This is the "bytes actually moved"
    figure the target applies to (vector temporaries are still counted at the essential level,
    so it is a lower bound of the traffic).
The task's gradient (LeastSquares.grad) is two batched row-vector products x^T A^T and r^T A, the
orientation that streams A fastest on CPU (an einsum version reached only 5-7x and 23-26%).

Allocator: every round allocates fresh (n, d) tensors (the state is functional). With glibc's
default dynamic thresholds, freed 8 MB blocks go back to the OS and every new tensor page-faults
(measured: a gradient-free SD-GT round at n = d = 1000 takes 55-110 ms instead of 22 ms). The
benchmark therefore calls mallopt(M_MMAP_THRESHOLD = 1 GiB, M_TRIM_THRESHOLD = 2 GiB) first, the
same as running with MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=2147483647 in the
environment; --no-malloc-tuning measures the default.

    .venv/bin/python benchmarks/bench_sdgt_vectorized.py           # full sizes
    .venv/bin/python benchmarks/bench_sdgt_vectorized.py --quick   # CI smoke (seconds)
"""
from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import time

import numpy as np
import torch

from fedbound.algorithms import SDGT
from fedbound.network.subnets import Network
from fedbound.tasks import LeastSquares

F64 = 8  # bytes


def keep_freed_memory() -> bool:
    """glibc mallopt: serve large tensors from the heap and never trim it (see the docstring)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name)
    if not hasattr(libc, "mallopt"):
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    return (bool(libc.mallopt(M_MMAP_THRESHOLD, 1 << 30))
            and bool(libc.mallopt(M_TRIM_THRESHOLD, (1 << 31) - 1)))


def least_squares(n: int, m: int, d: int, seed: int) -> LeastSquares:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, m, d)) / np.sqrt(d)
    y = rng.standard_normal((n, m))
    return LeastSquares(A, y)


class LoopSDGT:
    """SD-GT with lists of per-client tensors: the same math as fedbound.algorithms.sdgt_round,
    written the way a per-client simulator does it (one Python iteration per client)."""

    def __init__(self, task: LeastSquares, network: Network, K: int, gamma: float):
        self.A = [task._At[i] for i in range(task.n)]
        self.y = [task._yt[i] for i in range(task.n)]
        self.m, self.n, self.d = task.m, task.n, task.d
        self.K, self.gamma = K, gamma
        self.members = [list(network.members(s)) for s in range(network.S)]
        self.subnet_of = [int(s) for s in network.subnet_of]
        W = network.W
        self.neighbours = [[(j, float(W[i, j])) for j in np.flatnonzero(W[i])]
                           for i in range(self.n)]
        self.omega = [len(c) / self.n for c in self.members]

    def grad(self, i: int, x: torch.Tensor) -> torch.Tensor:
        return self.A[i].T @ (self.A[i] @ x - self.y[i]) / self.m

    def mix(self, values: list) -> list:
        out = []
        for i in range(self.n):
            acc = None
            for j, w in self.neighbours[i]:
                acc = w * values[j] if acc is None else acc + w * values[j]
            out.append(acc)
        return out

    def init(self, x0: torch.Tensor):
        g0 = [self.grad(i, x0) for i in range(self.n)]
        g_sub = [sum(g0[i] for i in c) / len(c) for c in self.members]
        g_bar = sum(w * g for w, g in zip(self.omega, g_sub))
        ys = [g_bar - g_sub[self.subnet_of[i]] for i in range(self.n)]
        zs = [g_sub[self.subnet_of[i]] - g0[i] for i in range(self.n)]
        return [x0.clone() for _ in range(self.n)], ys, zs, x0.clone()

    def round(self, xs, ys, zs, x_g, sampled):
        K, gamma = self.K, self.gamma
        starts = xs
        g_sum = [torch.zeros(self.d, dtype=x_g.dtype) for _ in range(self.n)]
        for _ in range(K):
            halves = []
            for i in range(self.n):
                g = self.grad(i, xs[i])
                g_sum[i] = g_sum[i] + g
                halves.append(xs[i] - gamma * (g + (ys[i] + zs[i])))
            xs = self.mix(halves)
        s_sum = [-gamma * (g_sum[i] + K * zs[i]) for i in range(self.n)]
        mixed = self.mix(s_sum)
        zs = [zs[i] + (s_sum[i] - mixed[i]) / (K * gamma) for i in range(self.n)]
        x_tilde = [xs[i] - starts[i] + K * gamma * ys[i] for i in range(self.n)]
        means = []
        for c in self.members:
            picked = [x_tilde[i] for i in c if sampled[i]]
            means.append(sum(picked) / len(picked))
        x_tilde_g = sum(w * v for w, v in zip(self.omega, means))
        x_g = x_g + x_tilde_g
        psi = [(v - x_tilde_g) / (K * gamma) for v in means]
        new_xs, new_ys = [], []
        for i in range(self.n):
            if sampled[i]:
                new_xs.append(x_g.clone())
                new_ys.append(psi[self.subnet_of[i]])
            else:
                new_xs.append(xs[i])
                new_ys.append(ys[i])
        return new_xs, new_ys, zs, x_g


def best_time(fn, repeats: int) -> float:
    """Smallest wall time of ``repeats`` calls after one warm-up (robust to a shared machine)."""
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def compare_with_loop(n, d, m, S, K, rounds, repeats, seed):
    """Client-steps/s of SDGT and of the loop, and the max |difference| of their iterates."""
    task = least_squares(n, m, d, seed)
    network = Network.from_topology("ring", S, n // S)
    gamma = 0.2
    alg = SDGT(task, network, lr=gamma, local_steps=K, clients_per_subnet=max(1, (n // S) // 2), seed=seed)
    loop = LoopSDGT(task, network, K, gamma)

    def run_vectorized():
        state, states = alg.init(), []
        for _ in range(rounds):
            state = alg.step(state)
            states.append(state)
        return states

    states = run_vectorized()
    masks = [s.mask.tolist() for s in states]  # the loop replays SDGT's sampling
    rate = n * K * rounds / best_time(run_vectorized, repeats)
    xs, ys, zs, x_g = run_loop(loop, task.x0, masks)
    last = states[-1]
    diff = max(float(torch.max(torch.abs(torch.stack(xs) - last.X))),
               float(torch.max(torch.abs(torch.stack(ys) - last.Y))),
               float(torch.max(torch.abs(torch.stack(zs) - last.Z))),
               float(torch.max(torch.abs(x_g - last.x_g))))
    loop_rate = n * K * rounds / best_time(lambda: run_loop(loop, task.x0, masks),
                                           max(1, repeats // 2))
    return rate, loop_rate, diff


def run_loop(loop: LoopSDGT, x0, masks):
    xs, ys, zs, x_g = loop.init(x0)
    for mask in masks:
        xs, ys, zs, x_g = loop.round(xs, ys, zs, x_g, mask)
    return xs, ys, zs, x_g


def round_bytes(n, d, m, K, W_bytes) -> tuple[int, int]:
    """(essential, streamed) bytes of one SD-GT round, float64; nd = one (n, d) tensor.

    Per D2D step: gradient (A n m d, y n m, X in, G out); local step x - gamma (g + (y + z))
    (X, G, y + z in, x^{k+1/2} out: 4 nd); accumulator sum_k g (in, out: 2 nd); mixing
    (x^{k+1/2} in, X out: 2 nd, plus W). Per round: y + z (3 nd); tracking update
    S = -gamma (G_sum + K Z) (3 nd), W S (2 nd + W), Z + (S - W S)/(K gamma) (4 nd);
    x~ = X_end - X + K gamma Y (4 nd) and its weighted subnet sums (1 nd); reset of X, Y
    (X_end, Y in, X, Y out: 4 nd). Streamed adds, per gradient, the second pass over A and the
    residual r (n m) written and read back.
    """
    nd, nmd, nm = n * d, n * m * d, n * m
    per_step = nmd + nm + 10 * nd
    per_round = (3 + 9 + 5 + 4) * nd
    essential = F64 * (K * per_step + per_round) + (K + 1) * W_bytes
    streamed = essential + F64 * K * (nmd + 2 * nm)
    return essential, streamed


def mixing_bytes(net) -> int:
    """Bytes of W read per mixing: the neighbour table (index + weight) or the dense blocks."""
    if net.mixing == "gather":
        return net.neighbours.numel() * 8 + net.neighbour_weights.numel() * F64
    return int(np.sum(net.m.astype(np.int64) ** 2)) * F64


def bandwidth(n, d, m, S, K, repeats, seed, copy_bytes):
    """Per repeat, time a copy_ of ``copy_bytes``, one SD-GT round and the gradient alone, back to
    back, so each round is compared with the copy bandwidth of the same moment; returns
    {label: (bytes (essential, streamed), [seconds per repeat])}."""
    task = least_squares(n, m, d, seed)
    network = Network.from_topology("ring", S, n // S)
    h = max(1, (n // S) // 2)
    src = torch.rand(copy_bytes // F64, dtype=torch.float64)
    dst = torch.empty_like(src)
    X = torch.randn(n, d, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    nmd, nm, nd = n * m * d, n * m, n * d
    jobs = {"copy_": ((2 * src.numel() * F64,) * 2, lambda: dst.copy_(src)),
            "gradient alone": ((F64 * (nmd + nm + 2 * nd), F64 * (2 * nmd + 3 * nm + 2 * nd)),
                               lambda: task.grad(X))}
    alg = SDGT(task, network, lr=0.2, local_steps=K, clients_per_subnet=h, seed=seed)
    state = alg.init()
    jobs["SD-GT round"] = (round_bytes(n, d, m, K, mixing_bytes(alg.net)), lambda: alg.step(state))
    times = {label: [] for label in jobs}
    for _, fn in jobs.values():
        fn()  # warm-up
    for _ in range(repeats):
        for label, (_, fn) in jobs.items():
            start = time.perf_counter()
            fn()
            times[label].append(time.perf_counter() - start)
    return {label: (jobs[label][0], times[label]) for label in jobs}, alg.net.mixing


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes for a CI smoke run")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: stable on a shared 2-core machine)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-malloc-tuning", action="store_true",
                        help="keep glibc's default allocator thresholds")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    tuned = False if args.no_malloc_tuning else keep_freed_memory()
    print(f"threads={args.threads}, malloc tuning={'on' if tuned else 'off'}")
    if args.quick:
        cmp_sizes, bw_sizes, rounds, copy_mb = (20, 20, 10, 4, 2), (100, 100, 30, 4, 2), 3, 64
    else:
        cmp_sizes, bw_sizes = (100, 100, 30, 10, 5), (1000, 1000, 30, 10, 5)
        rounds, copy_mb = 5, 512
    repeats = 2 if args.quick else args.repeats

    n, d, m, S, K = cmp_sizes
    rate, loop_rate, diff = compare_with_loop(n, d, m, S, K, rounds, repeats, args.seed)
    print(f"[throughput] SD-GT least squares n={n} d={d} m={m} S={S} K={K} rounds={rounds} "
          f"threads={args.threads}")
    print(f"  {'per-client loop':20s}: {loop_rate:10.0f} client-steps/s")
    verdict = "" if args.quick else f"  (target >= 10x: {'met' if rate / loop_rate >= 10 else 'MISSED'})"
    print(f"  {'vectorized SDGT':20s}: {rate:10.0f} client-steps/s = {rate / loop_rate:5.1f}x loop{verdict}")
    print(f"  max |vectorized - loop| over X, Y, Z, x_g: {diff:.1e} "
          f"({'ok' if diff <= 1e-10 else 'MISMATCH'} at 1e-10)")

    n, d, m, S, K = bw_sizes
    results, mixing = bandwidth(n, d, m, S, K, repeats, args.seed, copy_mb * 2**20)
    copy_times = np.array(results.pop("copy_")[1])
    copy_bw = 2 * copy_mb * 2**20 / copy_times
    print(f"[bandwidth] n={n} d={d} m={m} S={S} K={K} (ring subnets, mixing={mixing}), "
          f"threads={args.threads}: copy_ bandwidth median {np.median(copy_bw) / 1e9:.2f} GB/s "
          f"(best {copy_bw.max() / 1e9:.2f}); shares are medians over {repeats} repeats of "
          f"(bytes / time) / (copy_ bandwidth of the same repeat)"
          + ("  [smoke run: cache-resident sizes]" if args.quick else ""))
    for label, ((essential, streamed), seconds) in results.items():
        seconds = np.array(seconds)
        share = 100 * float(np.median(streamed / seconds / copy_bw))
        share_essential = 100 * float(np.median(essential / seconds / copy_bw))
        verdict = ""
        if label == "SD-GT round" and not args.quick:
            verdict = f" (target >= 50%: {'met' if share >= 50 else 'MISSED'})"
        print(f"  {label:30s}: {np.median(seconds) * 1e3:7.1f} ms, streamed "
              f"{streamed / 1e6:6.0f} MB"
              f" = {share:5.1f}% of copy{verdict}; essential {essential / 1e6:6.0f} MB = "
              f"{share_essential:5.1f}%")
    if args.quick:
        return 0 if diff <= 1e-10 else 1
    (grad_bytes, _), grad_seconds = results["gradient alone"]
    (round_essential, _), round_seconds = results["SD-GT round"]
    rest = np.array(round_seconds) - K * np.array(grad_seconds)
    rest_bytes = round_essential - K * grad_bytes
    print(f"  {'round minus K gradients':30s}: {np.median(rest) * 1e3:7.1f} ms for the SD-GT "
          f"vector work, essential {rest_bytes / 1e6:6.0f} MB = "
          f"{100 * float(np.median(rest_bytes / rest / copy_bw)):5.1f}% of copy")
    return 0 if diff <= 1e-10 else 1


if __name__ == "__main__":
    raise SystemExit(main())
