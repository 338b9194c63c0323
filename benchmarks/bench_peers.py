"""fedbound against Flower and pfl-research on one FedAvg job, side by side, measured in one run.

The job: FedAvg with c of n clients per round, K = 5 local full-gradient steps of size 0.01 on least
squares f_i(x) = ||A_i x - y_i||^2 / (2m) (m = 50 rows per client, d = 100, float64), the server
model the mean of the participants' models (server lr 1; every client holds m rows, so equal and
example weights agree), n x c in {100 x 10, 1000 x 10, 1000 x 100, 10000 x 100}.

1. Equality first. fedbound's FedAvg is built through the public API as ``fedbound run fedavg
   --task lsq --data FILE.npz --float64`` builds it (:class:`fedbound.algorithms.problem.Problem`)
   and run with ``run()``; the participants of every round are read from the states
   (``state.clients``). A hand-written numpy FedAvg on the same participants must give the same
   models, every round, to 1e-10, else the benchmark prints no ratio and exits 1. Each peer is given
   the same participants and its final model must equal numpy's to 1e-8, else its times are printed
   without a ratio.
2. fedbound, timed as users run it: ``run(alg, R, progress=True)`` with its default metrics (the
   loss, gap, distance and gradient norm of the global model every round), per round; the bare
   round ``alg.step``, ``run`` with ``--eval-every R`` and the same rounds written as bare torch
   calls (``torch_by_hand``: the floor of any torch implementation, checked against numpy too)
   beside it (information); torch threads as
   ``run`` chooses them (fedbound.algorithms.threads: one for these small rounds). Start-up: a fresh process
   ``fedbound run fedavg ...`` from its start to its first round, the least of a few (at 100 x 10
   also the wall and CPU time of the whole process with 0 rounds, outputs written).
3. The peers, each in a subprocess of the peers' Python (benchmarks/peers/): Flower 1.42's
   Simulation Engine (``run_simulation``, Ray, a ``ServerApp`` with Flower's ``FedAvg`` strategy
   and one ``ClientApp`` per virtual SuperNode) and pfl-research's ``SimulatedBackend`` with
   ``FederatedAveraging`` and a PyTorch model. Per round: the median over rounds 2..R (round 1 warms
   up: Ray starts its actors then); start-up: process start to the first round's start, plus the
   first round's excess over a steady round.
4. Fixed cost per round: the time per round at c = 10 and c = 100 of n = 1000 clients extrapolated to
   c = 0, and a round of one client with m = d = 1; arithmetic: a round's 4 c K m d flops at this
   machine's one-thread matrix-vector rate. Linearity in participants, not n: 10000 x 100 against
   1000 x 100, the two timed in turn.
5. The targets (issue): >= 300x Flower and >= 50x pfl per round, start-up < 2 s, fixed cost < 0.1 ms,
   a round within 2x of its arithmetic, 10000 x 100 / 1000 x 100 about 1: each with the measured value
   and PASS or MISS.

The peers are never dependencies of fedbound: their Python is ``--peers-python``, or
``$FEDBOUND_BENCH_PYTHON``, or this interpreter when it has the pinned versions (``pip install
'fedbound[bench]'``), or a virtual environment the benchmark makes once and reuses
(``$FEDBOUND_BENCH_VENV``, default benchmarks/.peers-venv; about 2 GB, a minute from PyPI). A peer
that cannot be installed or run is reported as "not available (reason)"; fedbound's figures are
printed regardless.

The neural race (issue 35: FedAvg and FedAdam on MLP classifiers, full-batch and minibatch local
steps, n up to 10000) is benchmarks/neural_race.py, run here after the least-squares race.

Usage: python benchmarks/bench_peers.py [--quick] [--no-peers] [--peers-python PYTHON]
       [--task all|lsq|mlp] [--clients-per-round C] [--device cpu|cuda]
(--quick: 100 x 10 and 1000 x 10 only, fewer repetitions: 1-2 minutes once the peers are
installed, most of it Flower's start-up; the full run: 3-5 minutes; the neural race adds 10-60
minutes, most of it Flower's, --clients-per-round 10 about a third of it; --device cuda adds fedbound's neural rounds on the GPU, or says
that there is none).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from race import LABEL, fmt_ms, fmt_s, median_time, median_times, peer_rounds, verdict  # noqa: E402
from fedbound.algorithms import run  # noqa: E402
from fedbound.algorithms.problem import Problem  # noqa: E402

PEERS_DIR = Path(__file__).resolve().parent / "peers"
#: the peers' pinned versions (pyproject.toml's ``bench`` extra); torch as fedbound pins it
PINS = {"flower": ["flwr[simulation]==1.42.0"],
        "pfl": ["pfl[pytorch]==0.6.0", "torch==2.13.0"]}
MODULES = {"flower": ("flwr", "1.42.0", "import flwr, ray; print(flwr.__version__)"),
           "pfl": ("pfl", "0.6.0", "import pfl, torch; from importlib.metadata import version; "
                                   "print(version('pfl'))")}
SCRIPTS = {"flower": "flower_fedavg.py", "pfl": "pfl_fedavg.py"}

M, D, K, LR = 50, 100, 5, 0.01
SIZES = [(100, 10), (1000, 10), (1000, 100), (10000, 100)]
QUICK_SIZES = [(100, 10), (1000, 10)]
TOL_FEDBOUND, TOL_PEER = 1e-10, 1e-8
TARGETS = {"flower": 300.0, "pfl": 50.0}
STARTUP_TARGET_S, FIXED_TARGET_MS, ARITH_TARGET, LINEAR_TARGET = 2.0, 0.1, 2.0, 1.5


# ---- the peers' Python ---------------------------------------------------------------------------
def peer_check(python: str, peer: str) -> tuple[bool, str]:
    """(usable, version or reason) of ``peer`` in ``python``."""
    module, version, code = MODULES[peer]
    try:
        res = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as err:
        return False, f"{python} failed: {err}"
    if res.returncode != 0:
        last = (res.stderr.strip().splitlines() or ["?"])[-1]
        return False, f"cannot import {module} in {python}: {last[:160]}"
    got = res.stdout.strip().splitlines()[-1] if res.stdout.strip() else "?"
    return True, got


def make_venv(folder: Path) -> dict[str, str]:
    """Create (once) the peers' virtual environment in ``folder`` and install each peer; returns
    the failures (peer -> reason). A stamp per peer records a finished install."""
    failures = {}
    python = folder / "bin" / "python"
    if not python.exists():
        print(f"creating the peers' environment {folder} (once; about 2 GB) ...", flush=True)
        res = subprocess.run([sys.executable, "-m", "venv", str(folder)], capture_output=True,
                             text=True)
        if res.returncode != 0:
            reason = f"python -m venv failed: {(res.stderr or res.stdout).strip()[-200:]}"
            return {peer: reason for peer in PINS}
    for peer, pins in PINS.items():
        stamp = folder / f".installed-{peer}-{'-'.join(pins).replace('/', '_')}"
        if stamp.exists():
            continue
        print(f"installing {' '.join(pins)} into {folder} ...", flush=True)
        try:
            res = subprocess.run([str(python), "-m", "pip", "install", "--quiet",
                                  "--disable-pip-version-check", "--retries", "2",
                                  "--timeout", "60", *pins],
                                 capture_output=True, text=True, timeout=1800)
            ok = res.returncode == 0
            reason = "" if ok else " ".join((res.stderr or res.stdout).split())[-300:]
        except subprocess.TimeoutExpired:
            ok, reason = False, "pip install timed out after 1800 s"
        if ok:
            stamp.touch()
        else:
            failures[peer] = f"pip install {' '.join(pins)} failed: {reason}"
    return failures


def peer_pythons(args) -> dict[str, tuple[str | None, str]]:
    """peer -> (python, version) or (None, reason)."""
    if args.no_peers:
        return {peer: (None, "--no-peers") for peer in PINS}
    explicit = args.peers_python or os.environ.get("FEDBOUND_BENCH_PYTHON")
    out: dict[str, tuple[str | None, str]] = {}
    if explicit:
        for peer in PINS:
            ok, info = peer_check(explicit, peer)
            out[peer] = (explicit, info) if ok else (None, info)
        return out
    here = {peer: peer_check(sys.executable, peer) for peer in PINS}
    if all(ok and info == MODULES[peer][1] for peer, (ok, info) in here.items()):
        return {peer: (sys.executable, info) for peer, (ok, info) in here.items()}
    folder = Path(os.environ.get("FEDBOUND_BENCH_VENV") or Path(__file__).parent / ".peers-venv")
    try:
        failures = make_venv(folder)
    except OSError as err:
        failures = {peer: f"cannot create {folder}: {err}" for peer in PINS}
    python = str(folder / "bin" / "python")
    for peer in PINS:
        if peer in failures:
            out[peer] = (None, failures[peer])
            continue
        ok, info = peer_check(python, peer)
        out[peer] = (python, info) if ok else (None, info)
    return out


# ---- the job -------------------------------------------------------------------------------------
def least_squares(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, M, D)) / np.sqrt(D)
    return A, A @ rng.standard_normal(D) + 0.1 * rng.standard_normal((n, M))


def numpy_fedavg(A, y, participants, x0):
    """The hand-written FedAvg: per round, each participant's K local full-gradient steps from the
    server model, then their plain mean. Returns the models after every round, (R + 1, d)."""
    x = np.array(x0, dtype=np.float64)
    out = [x.copy()]
    for clients in participants:
        local = []
        for i in clients:
            xi = x.copy()
            for _ in range(K):
                xi = xi - LR * (A[i].T @ (A[i] @ xi - y[i])) / M
            local.append(xi)
        x = np.mean(local, axis=0)
        out.append(x.copy())
    return np.array(out)


def build_fedavg(path: Path, c: int, rounds: int):
    """FedAvg as ``fedbound run fedavg --task lsq --data PATH --clients-per-round c --local-steps
    K --lr LR --float64 --seed 0`` builds it."""
    problem = Problem("lsq", {"data": str(path), "float64": True})
    return problem.algorithm("fedavg", {"lr": LR, "local_steps": K, "clients_per_round": c},
                             seed=problem.task_options.get("seed", 0), sigma=0.0, rounds=rounds)


def user_run(alg, rounds: int, eval_every: int = 1):
    """``run`` as ``fedbound run`` calls it (progress bar on, to a sink here; ``eval_every``:
    its ``--eval-every``, default 1)."""
    with contextlib.redirect_stderr(io.StringIO()):
        return run(alg, rounds, progress=True, eval_every=eval_every)


def bare_rounds(alg, rounds: int) -> None:
    state = alg.init()
    for _ in range(rounds):
        state = alg.step(state)


@dataclass
class Measured:
    n: int
    c: int
    rounds: int
    run_s: float = float("nan")          # fedbound run(): seconds per round
    bare_s: float = float("nan")         # alg.step: seconds per round
    sparse_s: float = float("nan")       # run(eval_every=rounds): seconds per round
    hand_s: float = float("nan")         # torch_by_hand: seconds per round (the torch floor)
    equal_err: float = float("nan")
    startup: dict = field(default_factory=dict)
    peers: dict = field(default_factory=dict)


def fedbound_side(path: Path, A, y, c: int, rounds: int, repeats: int):
    """(participants (R, c), numpy models (R + 1, d), max error, run s/round, bare s/round);
    raises SystemExit(1) when fedbound's FedAvg is not numpy's."""
    alg = build_fedavg(path, c, rounds)
    participants, weights = [], []

    def record(state):
        participants.append(state.clients.numpy().copy())
        weights.append(state.weights.numpy().copy())

    traj = run(alg, rounds, callback=record)      # also computes the task's constants once
    P = np.stack(participants)
    x0 = alg.task.x0.numpy()
    ref = numpy_fedavg(A, y, P, x0)
    models = traj.x_g.detach().numpy()
    err = float(np.max(np.abs(models - ref)))
    equal_weights = all(np.allclose(w, 1.0 / c, rtol=1e-12, atol=0) for w in weights)
    if not (P.shape == (rounds, c) and equal_weights and err <= TOL_FEDBOUND):
        print(f"EQUALITY FAILED at n = {alg.task.n}, c = {c}: max |x_fedbound - x_numpy| = {err:.3g}"
              f" (tolerance {TOL_FEDBOUND:g}), participants {P.shape}, equal weights "
              f"{equal_weights}. fedbound's FedAvg is not the hand-written FedAvg: no ratio is "
              "printed.", flush=True)
        raise SystemExit(1)
    timed = user_run(alg, rounds)                 # the timed runs draw the same participants
    if not torch.equal(timed.x_g[-1], traj.x_g[-1]):
        print("EQUALITY FAILED: a second run() of the same algorithm differs", flush=True)
        raise SystemExit(1)
    rows = [torch.as_tensor(p) for p in P]
    by_hand_err = float(np.max(np.abs(torch_by_hand(alg.task, rows).numpy() - ref[-1])))
    if by_hand_err > TOL_FEDBOUND:
        print(f"EQUALITY FAILED: the torch loop by hand differs from numpy by {by_hand_err:.3g}", flush=True)
        raise SystemExit(1)
    run_s, bare_s, sparse_s, hand_s = (t / rounds for t in median_times(
        [lambda: user_run(alg, rounds), lambda: bare_rounds(alg, rounds),
         lambda: user_run(alg, rounds, eval_every=rounds), lambda: torch_by_hand(alg.task, rows)],
        repeats))
    return alg, P, ref, err, run_s, bare_s, sparse_s, hand_s


def torch_by_hand(task, participants: list) -> torch.Tensor:
    """The floor of any torch FedAvg on this job: the same rounds as bare torch calls, the
    participants given (no sampling, metrics, counters or checks): per round one gather of the
    participants' data, K steps of two batched products, the mean. Returns the final model."""
    A, y = task.A, task.y.unsqueeze(1)
    x = task.x0.clone()
    for rows in participants:
        As, ys = A.index_select(0, rows), y.index_select(0, rows)
        AsT, X = As.transpose(1, 2), x.expand(rows.shape[0], x.shape[0])
        for _ in range(K):
            scaled = torch.baddbmm(ys, X.unsqueeze(1), AsT, beta=-1 / M, alpha=1 / M)   # (A x - y)^T / m
            X = X.add(torch.bmm(scaled, As).squeeze(1), alpha=-LR)
        x = X.mean(0)
    return x


STARTUP_WRAPPER = textwrap.dedent('''
    import sys, time
    T0 = float(sys.argv[1])
    from fedbound.algorithms.federated import round as _round
    _first = []
    _step = _round.Federated.step
    def step(self, state, **kw):
        if not _first:
            _first.extend([time.time(), time.process_time()])
        return _step(self, state, **kw)
    _round.Federated.step = step
    from fedbound.cli.main import main
    code = main(sys.argv[2:])
    print("STARTUP", _first[0] - T0 if _first else "nan", _first[1] if _first else "nan", code)
''')


def fedbound_startup(path: Path, c: int, tries: int = 1, whole: bool = False) -> dict:
    """A fresh ``fedbound run fedavg`` process: wall seconds from its start to its first round (1
    round; the least of ``tries`` processes) and the CPU seconds it spent until then, and
    (``whole``) the wall and CPU seconds of the whole process with 0 rounds (outputs written)."""
    out = {"to_first_round_s": float("inf"), "to_first_round_cpu_s": float("nan")}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    with tempfile.TemporaryDirectory() as tmp:
        def argv(rounds, folder):
            return ["run", "fedavg", "--task", "lsq", "--data", str(path), "--clients-per-round",
                    str(c), "--local-steps", str(K), "--lr", str(LR), "--rounds", str(rounds),
                    "--float64", "--seed", "0", "--out", str(Path(tmp) / folder)]
        for i in range(tries):
            t0 = time.time()
            res = subprocess.run([sys.executable, "-c", STARTUP_WRAPPER, repr(t0),
                                  *argv(1, f"one{i}")],
                                 capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
            line = [ln for ln in res.stdout.splitlines() if ln.startswith("STARTUP")]
            if not line or line[-1].split()[3] != "0":
                out["error"] = (res.stderr or res.stdout).strip()[-300:]
                out["to_first_round_s"] = float("nan")
                break
            wall, cpu = float(line[-1].split()[1]), float(line[-1].split()[2])
            if wall < out["to_first_round_s"]:
                out["to_first_round_s"], out["to_first_round_cpu_s"] = wall, cpu
        if not whole:
            return out
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable, "-m", "fedbound", *argv(0, "zero")],
                             capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
        out["process_0_rounds_wall_s"] = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out["process_0_rounds_cpu_s"] = (after.ru_utime + after.ru_stime - before.ru_utime
                                         - before.ru_stime)
        if res.returncode != 0:
            out["error"] = (res.stderr or res.stdout).strip()[-300:]
    return out


# ---- the peers' runs -----------------------------------------------------------------------------
def write_job(folder: Path, A=None, y=None, participants=None) -> None:
    """The job folder of benchmarks/peers/common.py (the data once, the participants per peer)."""
    folder.mkdir(parents=True, exist_ok=True)
    if A is not None:
        np.save(folder / "A.npy", A)
        np.save(folder / "y.npy", y)
    if participants is not None:
        np.save(folder / "participants.npy", np.asarray(participants, dtype=np.int64))
        (folder / "job.json").write_text(json.dumps({"lr": LR, "local_steps": K,
                                                     "rounds": int(len(participants))}))


def run_peer(peer: str, python: str, job: Path, ref_final: np.ndarray) -> dict:
    """Run one peer on ``job``; its per-round and start-up seconds, and whether its final model
    is numpy's (``equal``, ``err``), or ``error``."""
    out, timing = peer_rounds(str(PEERS_DIR / SCRIPTS[peer]), python, str(job))
    if "error" in timing:
        return timing
    x = np.asarray(out["x_final"], dtype=np.float64)
    err = float(np.max(np.abs(x - ref_final))) if x.shape == ref_final.shape else float("inf")
    verified = out.get("participants_verified", True)
    return {**timing, "err": err, "equal": bool(err <= TOL_PEER and verified),
            "participants_verified": verified, "version": out.get("version")}


# ---- fixed cost and arithmetic -------------------------------------------------------------------
def gemv_rate(c: int) -> float:
    """Flops per second of this machine's one-thread float64 matrix-vector products on a round's
    data (c m x d), the arithmetic of a round done as one dense product per step."""
    X = torch.randn(c * M, D, dtype=torch.float64)
    v = torch.randn(D, dtype=torch.float64)
    reps = 2 * K
    t = median_time(lambda: [X.T @ (X @ v) for _ in range(reps // 2)], 15)
    return 4 * c * M * D * (reps // 2) / t


def fixed_cost(tmp: Path, repeats: int) -> dict:
    """Seconds per round (run and bare) at c = 10 and 100 of n = 1000 (extrapolated to c = 0), and
    of a one-client, m = d = 1 task."""
    A, y = least_squares(1000, seed=2)
    path = tmp / "fixed.npz"
    np.savez(path, A=A, y=y)
    algs = {c: build_fedavg(path, c, 40) for c in (10, 100)}
    fns = []
    for alg in algs.values():
        user_run(alg, 2)
        fns += [lambda alg=alg: user_run(alg, 40), lambda alg=alg: bare_rounds(alg, 40)]
    t = [x / 40 for x in median_times(fns, repeats)]
    rows = {10: (t[0], t[1]), 100: (t[2], t[3])}
    tiny = tmp / "tiny.npz"
    np.savez(tiny, A=np.ones((1, 1, 1)), y=np.ones((1, 1)))
    problem = Problem("lsq", {"data": str(tiny), "float64": True})
    alg = problem.algorithm("fedavg", {"lr": LR, "local_steps": 1, "clients_per_round": 1},
                            seed=0, rounds=200)
    user_run(alg, 2)
    tiny_run, tiny_bare = (x / 200 for x in median_times(
        [lambda: user_run(alg, 200), lambda: bare_rounds(alg, 200)], repeats))

    def extrapolate(i):
        slope = (rows[100][i] - rows[10][i]) / 90
        return rows[10][i] - 10 * slope, slope
    return {"rows": rows, "run": extrapolate(0), "bare": extrapolate(1),
            "tiny_run": tiny_run, "tiny_bare": tiny_bare}


LINEAR_PAIR = ((1000, 100), (10000, 100))


def linearity(algs: dict, repeats: int) -> dict | None:
    """Seconds per round (run, bare) of 10000 x 100 over 1000 x 100, the two timed in turn in the
    same repetitions (the per-size figures are minutes apart on a machine whose load moves)."""
    if any(key not in algs for key in LINEAR_PAIR):
        return None
    small, big = (algs[key] for key in LINEAR_PAIR)
    rounds = 20
    t = median_times([lambda: user_run(small, rounds), lambda: user_run(big, rounds),
                      lambda: bare_rounds(small, rounds), lambda: bare_rounds(big, rounds)],
                     repeats + 2)
    return {"run": (t[0] / rounds, t[1] / rounds), "bare": (t[2] / rounds, t[3] / rounds)}


# ---- output --------------------------------------------------------------------------------------
def print_size(res: Measured, pythons) -> None:
    print(f"\n== n x c = {res.n} x {res.c} (m = {M}, d = {D}, K = {K}, lr = {LR}, float64) ==")
    print(f"equality: max |x_fedbound - x_numpy| over {res.rounds} rounds = {res.equal_err:.2e} "
          f"(<= {TOL_FEDBOUND:g}: proven)")
    st = res.startup
    print(f"{'':26}{'per round':>13}{'fedbound run is':>17}{'start-up':>11}   note")
    print(f"{'fedbound run()':26}{fmt_ms(res.run_s):>13}{'':>17}"
          f"{fmt_s(st.get('to_first_round_s')):>11}   default metrics every round, "
          f"{torch.get_num_threads()} torch thread(s); start-up: fresh `fedbound run` to round 1"
          f" ({fmt_s(st.get('to_first_round_cpu_s'))} CPU)"
          + (f" [{st['error'][:80]}]" if st.get("error") else ""))
    print(f"{'fedbound bare alg.step':26}{fmt_ms(res.bare_s):>13}{'':>17}{'':>11}   "
          f"metrics cost {fmt_ms(res.run_s - res.bare_s)} per round (run - bare; step called "
          "from outside fedbound, its arguments checked every call)")
    print(f"{'fedbound run(), eval 1/R':26}{fmt_ms(res.sparse_s):>13}{'':>17}{'':>11}   "
          f"information: `--eval-every {res.rounds}` (metrics at the last round only)")
    print(f"{'torch by hand (floor)':26}{fmt_ms(res.hand_s):>13}{'':>17}{'':>11}   "
          f"information: the same rounds as bare torch calls (participants given, no metrics or "
          f"checks): fedbound run() is {res.run_s / res.hand_s:.2f}x of it")
    for peer in PINS:
        python, info = pythons[peer]
        label = f"{LABEL[peer]} {info}" if python else LABEL[peer]
        p = res.peers.get(peer)
        if python is None:
            print(f"{label:26}{'':>13}{'':>17}{'':>11}   not available ({info[:160]})")
            continue
        if p is None or "error" in p:
            reason = "not run" if p is None else p["error"]
            print(f"{label:26}{'':>13}{'':>17}{'':>11}   not available (run failed: {reason[:300]})")
            continue
        if p["equal"]:
            x = p['per_round_s'] / res.run_s
            ratio = f"{x:.1f}x faster" if x >= 1 else f"{x:.2f}x (slower)"
            note = f"final model = numpy's to {p['err']:.1e} over {p['rounds']} rounds"
        else:
            ratio = "no ratio"
            why = ("participants not verified" if not p["participants_verified"]
                   else f"final model differs from numpy's by {p['err']:.2e} > {TOL_PEER:g}")
            note = f"EQUALITY NOT SHOWN ({why})"
        print(f"{label:26}{fmt_ms(p['per_round_s']):>13}{ratio:>17}{fmt_s(p['startup_s']):>11}   "
              f"{note}; first round {fmt_s(p['first_round_s'])}, to its start "
              f"{fmt_s(p['to_first_round_s'])}")
    if st.get("process_0_rounds_wall_s") is not None:
        print(f"fedbound whole process, 0 rounds, outputs written: "
              f"{fmt_s(st['process_0_rounds_wall_s'])} wall, {fmt_s(st['process_0_rounds_cpu_s'])} CPU")
    sys.stdout.flush()


def summary(results: list[Measured], fixed: dict, linear: dict | None, pythons,
            quick: bool) -> None:
    print("\n== targets (issue): as users run it, `run()` with default metrics ==")
    for peer, target in TARGETS.items():
        ratios = [(r.n, r.c, r.peers[peer]["per_round_s"] / r.run_s) for r in results
                  if peer in r.peers and r.peers[peer].get("equal")]
        if not ratios:
            reason = pythons[peer][1] if pythons[peer][0] is None else "no size with proven equality"
            print(f"  per round >= {target:.0f}x {LABEL[peer]}: not measured ({reason[:120]})")
            continue
        worst = min(x for _, _, x in ratios)
        each = ", ".join(f"{n}x{c}: {x:.1f}x" for n, c, x in ratios)
        print(f"  per round >= {target:.0f}x {LABEL[peer]}: {each} -> worst {worst:.1f}x "
              f"{verdict(worst >= target)}")
        if worst < target:   # how far the target is from what torch itself can do
            print("    the target asks run() <= " + ", ".join(
                f"{r.n}x{r.c}: {r.peers[peer]['per_round_s'] / target * 1e3:.3f} ms (torch by hand "
                f"{r.hand_s * 1e3:.3f} ms)" for r in results
                if peer in r.peers and r.peers[peer].get("equal")
                and r.peers[peer]["per_round_s"] / r.run_s < target))
        peer_startups = [r.peers[peer]["startup_s"] for r in results
                         if peer in r.peers and "startup_s" in r.peers[peer]]
        print(f"    {LABEL[peer]} start-up measured: "
              + ", ".join(f"{s:.1f} s" for s in peer_startups))
    small = results[0]
    s = small.startup.get("to_first_round_s", float("nan"))
    cpu = small.startup.get("to_first_round_cpu_s", float("nan"))
    print(f"  start-up < {STARTUP_TARGET_S:g} s ({small.n}x{small.c}, fresh `fedbound run` to round 1,"
          f" least of {2 if quick else 3}): {fmt_s(s)} wall {verdict(bool(s < STARTUP_TARGET_S))} ({fmt_s(cpu)} CPU "
          f"{verdict(bool(cpu < STARTUP_TARGET_S))}); other sizes (least of {1 if quick else 2}): "
          + ", ".join(f"{r.n}x{r.c}: {fmt_s(r.startup.get('to_first_round_s'))}" for r in results[1:]))
    for kind in ("run", "bare"):
        a, slope = fixed[kind]
        tiny = fixed[f"tiny_{kind}"]
        tag = "run()" if kind == "run" else "bare alg.step (information)"
        line = (f"  fixed cost per round < {FIXED_TARGET_MS:g} ms, {tag}: {a * 1e3:.3f} ms "
                f"(n = 1000, c = 10 and 100 extrapolated to c = 0; {slope * 1e6:.1f} us per "
                f"participant); one client of m = d = 1: {tiny * 1e3:.3f} ms")
        print(line + (f" {verdict(a * 1e3 < FIXED_TARGET_MS and tiny * 1e3 < FIXED_TARGET_MS)}"
                      if kind == "run" else ""))
    rate = gemv_rate(100)
    arith = 4 * 100 * K * M * D / rate
    r100 = fixed["rows"][100]
    print(f"  round within {ARITH_TARGET:g}x of its arithmetic (n = 1000, c = 100: {4 * 100 * K * M * D / 1e6:.0f}"
          f" MFLOP, {arith * 1e3:.3f} ms at this machine's {rate / 1e9:.1f} GFLOP/s one-thread "
          f"float64 matrix-vector rate): run() {r100[0] * 1e3:.3f} ms = {r100[0] / arith:.1f}x "
          f"{verdict(r100[0] / arith <= ARITH_TARGET)}; bare {r100[1] * 1e3:.3f} ms = "
          f"{r100[1] / arith:.1f}x (information)")
    if linear is not None:
        (mid, big), (mid_b, big_b) = linear["run"], linear["bare"]
        ratio = big / mid
        print(f"  linear in participants, not n: run() 10000x100 / 1000x100 = {big * 1e3:.3f} ms / "
              f"{mid * 1e3:.3f} ms = {ratio:.2f} (timed in turn; target about 1, <= "
              f"{LINEAR_TARGET:g}) {verdict(ratio <= LINEAR_TARGET)}; bare {big_b / mid_b:.2f} "
              "(information)")
    else:
        print("  linear in participants, not n: not measured" + (" (--quick)" if quick else ""))


def machine_line() -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return (f"machine: {platform.machine()} {platform.system()} {platform.release()}, "
            f"{os.cpu_count()} cores ({usable} usable), load average {load[0]:.2f} {load[1]:.2f} "
            f"{load[2]:.2f}; python {platform.python_version()}, torch {torch.__version__}, "
            f"numpy {np.__version__}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="100 x 10 and 1000 x 10 only, fewer repetitions")
    parser.add_argument("--no-peers", action="store_true", help="fedbound's figures only")
    parser.add_argument("--peers-python", metavar="PYTHON",
                        help="a Python with flwr[simulation] and pfl installed")
    parser.add_argument("--task", choices=("all", "lsq", "mlp"), default="all",
                        help="least squares (lsq), the neural race on MLP classifiers "
                             "(mlp, benchmarks/neural_race.py) or both (default)")
    parser.add_argument("--clients-per-round", type=int, metavar="C",
                        help="the neural race at the sizes with C clients per round only (10 or "
                             "100; default: all)")
    parser.add_argument("--device", default="cpu",
                        help="also run the neural race's fedbound side on this device (cuda): "
                             "says so where torch sees no GPU")
    args = parser.parse_args()
    from fedbound.algorithms.threads import threads_for

    torch.set_num_threads(threads_for(0))   # the bare rounds as run() takes them: small, one thread
    print(__doc__.splitlines()[0])
    print(machine_line())
    pythons = peer_pythons(args)
    for peer, (python, info) in pythons.items():
        print(f"{LABEL[peer]}: " + (f"{info} ({python})" if python else f"not available ({info})"))
    if args.task != "mlp":
        lsq_race(args, pythons)
    if args.task != "lsq":
        import neural_race

        neural_race.main(args, pythons)
    print(f"\n{machine_line()} (at the end)")
    return 0


def lsq_race(args, pythons) -> None:
    """The least-squares race (the module doc)."""
    print(f"fedbound timings use {torch.get_num_threads()} torch thread(s), as run() chooses for these rounds; "
          "the peers run with their own defaults (Flower: one CPU per ClientApp, Ray actors on "
          f"all cores; pfl: torch's default threads). Compare ratios, not absolute times.",
          flush=True)
    sizes = QUICK_SIZES if args.quick else SIZES
    repeats = 3 if args.quick else 5
    results: list[Measured] = []
    kept: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench_peers_") as tmp_name:
        tmp = Path(tmp_name)
        for n, c in sizes:
            rounds = 50 if c <= 10 else (30 if n <= 1000 else 20)
            peer_rounds = {"flower": 6 if c <= 10 else 4, "pfl": 10 if c <= 10 else 6}
            A, y = least_squares(n, seed=1)
            path = tmp / f"lsq_{n}.npz"
            np.savez(path, A=A, y=y)
            alg, P, ref, err, run_s, bare_s, sparse_s, hand_s = fedbound_side(path, A, y, c, rounds,
                                                                               repeats)
            if (n, c) in LINEAR_PAIR:
                kept[(n, c)] = alg
            res = Measured(n, c, rounds, run_s, bare_s, sparse_s, hand_s, err)
            first = not results
            tries = (2 if args.quick else 3) if first else (1 if args.quick else 2)
            res.startup = fedbound_startup(path, c, tries=tries, whole=first)
            job = tmp / f"job_{n}_{c}"
            if any(python for python, _ in pythons.values()):
                write_job(job, A, y)
            for peer, (python, _) in pythons.items():
                if python is None:
                    continue
                r = min(peer_rounds[peer], rounds)
                write_job(job, participants=P[:r])
                res.peers[peer] = run_peer(peer, python, job, ref[r])
            if job.exists():
                for f in job.iterdir():
                    f.unlink()
            path.unlink()
            del A, y
            results.append(res)
            print_size(res, pythons)
        fixed = fixed_cost(tmp, repeats)
        linear = linearity(kept, repeats)
    summary(results, fixed, linear, pythons, args.quick)


if __name__ == "__main__":
    sys.exit(main())
