"""``fedbound run ALGORITHM``: run SD-GT or a baseline on a task over a network and save metrics.

Example (n clients of FILE.npz split evenly into 2 ring subnets, 4 sampled per subnet)::

    fedbound run sdgt --task lsq --data FILE.npz --subnets 2 --topology ring --K 5 --sample 4 \\
        --gamma 0.01 --rounds 400 --sigma 0 --float64 --seed 0 --out DIR

Writes DIR/metrics.csv and DIR/metrics.json (per round: loss, loss gap f - f*, squared distance
to x*, squared gradient norm, K, cumulative communication), DIR/plot.png (loss gap and distance to
x* against rounds, semilog) and DIR/x_final.npy (the final global model). A progress bar goes to
stderr. Bad input (n not divisible by S, --sample > m_s, gamma <= 0, a missing or malformed file)
is one line on stderr and exit status 2.

The network is an SD-GT random geometric network (--rgg), S subnets of one topology
(--subnets S --topology NAME), or a JSON file (--network FILE.json). The task is a generator
(--task NAME with --n, --d, --seed) or, for least squares, a user's .npz file (--data FILE.npz with
keys A (n, m, d) and y (n, m); f_i is the least-squares loss of client i's rows).

With ``--controller SPEC.json`` SD-GT runs in closed loop with its controller, Algorithm 2
(fedbound/cli/controller_run.py).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
from pathlib import Path

import numpy as np
import torch

from fedbound.cli import controller_run
from fedbound.errors import ValidationError, require
from fedbound.jsonable import jsonable
from fedbound.outputs import atomic_open, atomic_path, output_folder, write_json  # issue 8
from fedbound.resources import require_run_memory

ALGORITHMS = ("sdgt", "sd-fedavg", "scaffold", "gt", "scaffnew")
TASKS = ("quadratic", "lsq", "lsq-convex", "logistic", "robust", "mlp-gmm", "mlp-digits")
#: default dimension per task (lsq-convex: n * rows + 10, so that d > n m)
DEFAULT_D = {"quadratic": 10, "lsq": 20, "logistic": 10, "robust": 10, "mlp-gmm": 16}
DEFAULT_N = 12
DEFAULT_ROWS = 30
DEFAULT_K = 5


# ---- shared with ``fedbound verify`` --------------------------------------------------------
def add_problem_arguments(parser: argparse.ArgumentParser, tasks=TASKS,
                          default_task: str = "quadratic") -> None:
    """Task and network options (used by ``run`` and ``verify``)."""
    task = parser.add_argument_group("task")
    task.add_argument("--task", choices=tasks, default=default_task,
                      help=f"task generator (default {default_task})")
    task.add_argument("--data", metavar="FILE.npz",
                      help="least-squares data: keys A (n, m, d) and y (n, m) (with --task lsq)")
    task.add_argument("--n", type=int, default=None, help=f"number of clients (default {DEFAULT_N})")
    task.add_argument("--d", type=int, default=None, help="model / feature dimension "
                      f"(defaults: {', '.join(f'{k} {v}' for k, v in DEFAULT_D.items())})")
    task.add_argument("--rows", type=int, default=DEFAULT_ROWS,
                      help=f"rows per client of generated least squares (default {DEFAULT_ROWS})")
    task.add_argument("--seed", type=int, default=0,
                      help="seed of the task generator, random topologies and the run (default 0)")
    task.add_argument("--float64", action="store_true",
                      help="float64 tensors (default float32; verification uses float64)")
    net = parser.add_argument_group("network (one of --rgg, --subnets/--topology, --network)")
    net.add_argument("--rgg", action="store_true",
                     help="SD-GT random geometric network with --subnets S (default 3) subnets")
    net.add_argument("--subnets", type=int, default=None, metavar="S",
                     help="number of subnets; the n clients are split evenly")
    net.add_argument("--topology", default=None, metavar="NAME",
                     help="topology of every subnet: ring (default), complete, chain, star, grid, "
                          "erdos_renyi")
    net.add_argument("--network", default=None, metavar="FILE.json",
                     help='network spec {"subnets": [{"m": 4, "topology": "ring"} or {"W": ...}]}')


def _dtype(args) -> torch.dtype:
    return torch.float64 if args.float64 else torch.float32


def _require_positive(value, name: str) -> None:
    require(value is None or value >= 1, f"{name} must be an integer >= 1, got {value}")


def load_npz_task(path: str, dtype: torch.dtype):
    """Least squares from a user's .npz (keys A (n, m, d), y (n, m)); bad files -> ValidationError."""
    from fedbound.tasks import LeastSquares

    require(os.path.isfile(path), f"data file {path!r} does not exist")
    try:
        return LeastSquares.from_npz(path, dtype=dtype)
    except ValidationError:
        raise
    except (ValueError, OSError, EOFError):
        raise ValidationError(f"data file {path!r} is not a readable .npz archive with keys "
                              "A (n, m, d) and y (n, m)") from None


def build_task(args, n: int | None = None):
    """The task of ``args`` (generator or --data file) without gradient noise; n clients from
    ``--n``, else ``n``, else the ``--network`` file, else the default."""
    from fedbound.tasks import (LeastSquares, LogisticRegression, MLPClassifier, Quadratic,
                                RobustRegression)

    dtype = _dtype(args)
    if args.data is not None:
        require(args.task in ("lsq", "lsq-convex"),
                f"--data gives least-squares data; use --task lsq, got --task {args.task}")
        task = load_npz_task(args.data, dtype)
        require(args.n is None or args.n == task.n,
                f"--n {args.n} does not match the {task.n} clients of {args.data}")
        return task
    n = args.n if args.n is not None else n
    if n is None:
        n = _network_file(args.network).n if args.network is not None else DEFAULT_N
    _require_positive(n, "--n")
    _require_positive(args.d, "--d")
    _require_positive(args.rows, "--rows")
    d = args.d if args.d is not None else DEFAULT_D.get(args.task)
    seed = args.seed
    if args.task == "quadratic":
        return Quadratic.generate(n, d, kappa=10.0, mu=0.1, heterogeneity=1.0, seed=seed, dtype=dtype)
    if args.task == "lsq":
        return LeastSquares.generate(n, args.rows, d, omega=0.5, seed=seed, dtype=dtype)
    if args.task == "lsq-convex":
        d = args.d if args.d is not None else n * args.rows + 10
        require(d > n * args.rows, f"lsq-convex needs d > n * rows = {n * args.rows} (not strongly "
                                   f"convex), got d = {d}")
        return LeastSquares.generate(n, args.rows, d, omega=0.5, seed=seed, dtype=dtype)
    if args.task == "logistic":
        return LogisticRegression.generate(n, dim=d, max_size=200, seed=seed, dtype=dtype)
    if args.task == "robust":
        return RobustRegression.generate(n, d, seed=seed, dtype=dtype)
    if args.task == "mlp-gmm":
        return MLPClassifier.generate(n, dataset="gaussian_mixture", dim=d, num_samples=100 * n,
                                      seed=seed, dtype=dtype)
    require(args.d is None, "--d does not apply to mlp-digits (8x8 images)")
    return MLPClassifier.generate(n, dataset="digits", seed=seed, dtype=dtype)


def _network_file(path: str):
    from fedbound.network import Network

    return Network.from_json(path)


def build_network(args, n: int, default_subnets: int | None):
    """The network of ``args`` for n clients, or None when no network option is given and
    ``default_subnets`` is None."""
    from fedbound.network import Network

    require(not (args.rgg and args.topology is not None), "--rgg and --topology exclude each other")
    if args.network is not None:
        require(not args.rgg and args.subnets is None and args.topology is None,
                "--network gives the subnets; drop --rgg, --subnets and --topology")
        network = _network_file(args.network)
        require(network.n == n, f"the network of {args.network} has {network.n} clients but the "
                                f"task has n = {n}")
        return network
    S = args.subnets if args.subnets is not None else default_subnets
    if S is None and args.topology is None and not args.rgg:
        return None
    S = 1 if S is None else S
    require(S >= 1, f"--subnets must be >= 1, got {S}")
    require(n % S == 0, f"n = {n} clients cannot be split evenly into S = {S} subnets")
    if args.rgg:
        return Network.random_geometric(S, n // S, seed=args.seed)
    return Network.from_topology(args.topology or "ring", S, n // S, seed=args.seed)


def check_sample(sample: int | None, network) -> int | None:
    """``--sample`` h (clients sampled per subnet) within [1, min_s m_s]."""
    if sample is None:
        return None
    smallest = int(np.min(network.m))
    require(1 <= sample <= smallest,
            f"--sample must be in [1, min_s m_s = {smallest}] (clients sampled per subnet), got {sample}")
    return sample


# ---- the run command -----------------------------------------------------------------------
def build_algorithm(args, task, network):
    """The algorithm object named by ``args.algorithm``."""
    from fedbound.algorithms import SCAFFOLD, SDGT, GradientTracking, Scaffnew, SDFedAvg

    if args.K is None:
        args.K = 1 if args.algorithm == "gt" else DEFAULT_K
    require(args.K >= 1, f"--K must be an integer >= 1, got {args.K}")
    h = check_sample(args.sample, network) if network is not None else args.sample
    common = {"gamma": args.gamma, "seed": args.seed}
    if args.algorithm == "sdgt":
        return SDGT(task, network, K=args.K, h=h, **common)
    if args.algorithm == "sd-fedavg":
        return SDFedAvg(task, network, K=args.K, h=h, **common)
    if args.algorithm == "scaffold":
        require(h is None or 1 <= h <= task.n, f"--sample must be in [1, n = {task.n}], got {h}")
        return SCAFFOLD(task, network=network, K=args.K, h=h, **common)
    if args.algorithm == "gt":
        require(args.sample is None, "gt (gradient tracking) has no server: drop --sample")
        require(args.K == 1, f"gt makes one gradient step per round: --K must be 1, got {args.K}")
        return GradientTracking(task, network, **common)
    require(args.sample is None, "scaffnew communicates with all clients: drop --sample")
    require(network is None, "scaffnew runs on a star of the n clients (S = n): drop the network "
                             "options")
    return Scaffnew(task, K=args.K, **common)


#: subnets used when no network option is given (None: the algorithm needs no network)
DEFAULT_SUBNETS = {"sdgt": 3, "sd-fedavg": 3, "gt": 1, "scaffold": None, "scaffnew": None}
METRICS = ("loss", "loss_gap", "dist2", "grad_norm2", "K")


def write_outputs(out: Path, traj, config: dict) -> dict[str, str]:
    """metrics.csv, metrics.json, plot.png and x_final.npy under ``out``; returns the paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    columns = {"round": traj.rounds, **{m: getattr(traj, m) for m in METRICS}, **traj.comm}
    paths = {"csv": out / "metrics.csv", "json": out / "metrics.json", "plot": out / "plot.png",
             "x_final": out / "x_final.npy"}
    with atomic_open(paths["csv"], "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(list(columns))
        for row in zip(*columns.values()):
            writer.writerow([repr(float(v)) if isinstance(v, (float, np.floating)) else int(v)
                             for v in row])
    payload = {"config": config, "metrics": {k: np.asarray(v).tolist() for k, v in columns.items()}}
    write_json(paths["json"], payload, nonfinite="null")
    with atomic_path(paths["x_final"]) as tmp:
        np.save(tmp, traj.x_g[-1].detach().cpu().numpy())
    fig, ax = plt.subplots(figsize=(6, 4))
    series = [("loss_gap", "f(x_g) - f*"), ("dist2", "||x_g - x*||^2")]
    if not any(np.all(np.isfinite(getattr(traj, k))) for k, _ in series):
        series = [("loss", "f(x_g)"), ("grad_norm2", "||grad f(x_g)||^2")]
    for key, label in series:
        values = np.asarray(getattr(traj, key), dtype=float)
        if np.all(np.isfinite(values)):   # exact zeros and rounding below 0 are left out
            ax.semilogy(traj.rounds, np.where(values > 0, values, np.nan), label=label)
    ax.set_xlabel("round")
    ax.set_title(f"{config['algorithm']} on {config['task']}")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    with atomic_path(paths["plot"]) as tmp:
        fig.savefig(tmp, dpi=100)
    plt.close(fig)
    return {k: str(v) for k, v in paths.items()}


def run_command(args) -> int:
    from fedbound.algorithms import run

    if args.controller:  # SD-GT in closed loop with Algorithm 2: fedbound/cli/controller_run.py
        return controller_run.run_controlled(args)
    require(args.rounds >= 0, f"--rounds must be an integer >= 0, got {args.rounds}")
    require(args.gamma > 0 and np.isfinite(args.gamma), f"--gamma must be > 0, got {args.gamma}")
    require(args.sigma >= 0 and np.isfinite(args.sigma), f"--sigma must be >= 0, got {args.sigma}")
    task = build_task(args)
    network = build_network(args, task.n, DEFAULT_SUBNETS[args.algorithm])
    require_run_memory(f"run {args.algorithm}", args.rounds, task.n, task.d)
    noisy = task.with_noise(args.sigma) if args.sigma > 0 else task
    algorithm = build_algorithm(args, noisy, network)
    out = output_folder(args).create()   # marked incomplete until the command succeeds (issue 8)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    traj = run(algorithm, args.rounds, progress=True)
    config = {"algorithm": args.algorithm, "task": args.data or args.task, "n": task.n, "d": task.d,
              "S": None if network is None else network.S,
              "m": None if network is None else network.m.tolist(),
              "q": None if network is None else network.q, "K": args.K, "sample": args.sample,
              "gamma": args.gamma, "sigma": args.sigma, "rounds": args.rounds, "seed": args.seed,
              "dtype": str(task.dtype).replace("torch.", ""), "constants": task.constants()}
    files = write_outputs(out, traj, config)
    final = {k: float(getattr(traj, k)[-1]) for k in ("loss", "loss_gap", "dist2", "grad_norm2")}
    if args.json:
        print(json.dumps(jsonable({"config": config, "final": final, "files": files}, nonfinite="null"), indent=2, allow_nan=False))
    else:
        print(f"{algorithm.name}: {args.rounds} rounds on {config['task']} (n = {task.n}, "
              f"d = {task.d}); final loss {final['loss']:.6g}, f - f* {final['loss_gap']:.3g}, "
              f"||x_g - x*||^2 {final['dist2']:.3g}")
        print(f"wrote {', '.join(files.values())}")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run", help="run SD-GT or a baseline and save metrics, a plot and the final model",
        description=__doc__.split("\n\n")[0].split(": ", 1)[1],
        epilog="Example: fedbound run sdgt --task lsq --data FILE.npz --subnets 2 --topology ring "
               "--K 5 --sample 4 --gamma 0.01 --rounds 400 --float64 --out DIR")
    parser.add_argument("algorithm", choices=ALGORITHMS, metavar="ALGORITHM",
                        help=f"one of: {', '.join(ALGORITHMS)} (gt = ATC gradient tracking)")
    add_problem_arguments(parser)
    opts = parser.add_argument_group("algorithm")
    opts.add_argument("--K", type=int, default=None,
                      help=f"local steps (D2D rounds) per round (default {DEFAULT_K}; gt: 1)")
    opts.add_argument("--sample", type=int, default=None, metavar="h",
                      help="clients sampled per subnet (default all)")
    opts.add_argument("--gamma", type=float, default=0.01, help="step size (default 0.01)")
    opts.add_argument("--sigma", type=float, default=0.0,
                      help="gradient-noise std: E||noise||^2 = sigma^2 per gradient (default 0)")
    opts.add_argument("--rounds", type=int, default=100, help="global rounds (default 100)")
    controller_run.add_arguments(parser)
    parser.add_argument("--out", default="fedbound-run", metavar="DIR",
                        help="output folder (default ./fedbound-run)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary to stdout")
    parser.set_defaults(func=run_command)
