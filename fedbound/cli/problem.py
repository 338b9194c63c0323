"""The CLI's shared problem builders: task and network options and their construction, used by
``fedbound run``, ``fedbound verify`` and the closed-loop controller run (one module, so that the
commands import it and not each other).

The task is a generator (--task NAME with --n, --d, --seed) or a user's .npz file (--data FILE.npz):
for least squares keys A (n, m, d) and y (n, m), f_i(x) = 1/(2m) ||A_i x - y_i||^2; for the
quadratic keys H (n, d, d), b (n, d) and optional p (n,), f_i(x) = 1/2 (x - b_i)^T H_i (x - b_i) with
weights p_i from the file (else uniform). The network
is an SD-GT random geometric network (--rgg), S subnets of one topology (--subnets S --topology NAME),
or a JSON file (--network FILE.json).
"""
from __future__ import annotations

import argparse
import os

import numpy as np
import torch

from fedbound.errors import ValidationError, require

TASKS = ("quadratic", "lsq", "lsq-convex", "logistic", "robust", "mlp-gmm", "mlp-digits")
#: default dimension per task (lsq-convex: n * rows + 10, so that d > n m)
DEFAULT_D = {"quadratic": 10, "lsq": 20, "logistic": 10, "robust": 10, "mlp-gmm": 16}
DEFAULT_N = 12
DEFAULT_ROWS = 30
#: tasks whose clients hold examples, so that --weights examples applies
EXAMPLE_TASKS = ("lsq", "lsq-convex", "logistic")


def add_problem_arguments(parser: argparse.ArgumentParser, tasks=TASKS,
                          default_task: str = "quadratic") -> None:
    """Task and network options (used by ``run`` and ``verify``)."""
    task = parser.add_argument_group("task")
    task.add_argument("--task", choices=tasks, default=default_task,
                      help=f"task generator (default {default_task})")
    task.add_argument("--data", metavar="FILE.npz",
                      help="a user's data: with --task lsq keys A (n, m, d) and y (n, m); with "
                           "--task quadratic keys H (n, d, d), b (n, d) and optional weights p (n)")
    task.add_argument("--n", type=int, default=None, help=f"number of clients (default {DEFAULT_N})")
    task.add_argument("--d", type=int, default=None, help="model / feature dimension "
                      f"(defaults: {', '.join(f'{k} {v}' for k, v in DEFAULT_D.items())})")
    task.add_argument("--rows", type=int, default=DEFAULT_ROWS,
                      help=f"rows per client of generated least squares (default {DEFAULT_ROWS})")
    task.add_argument("--seed", type=int, default=0,
                      help="seed of the task generator, random topologies and the run (default 0)")
    task.add_argument("--float64", action="store_true",
                      help="float64 tensors (default float32; verification uses float64)")
    task.add_argument("--weights", choices=("uniform", "examples"), default="uniform",
                      help="aggregation weights p_i: uniform (default) or proportional to each "
                           f"client's number of examples ({', '.join(EXAMPLE_TASKS)})")
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


def load_npz_task(path: str, dtype: torch.dtype, task: str = "lsq"):
    """Least squares (keys A (n, m, d), y (n, m)) or, for ``task`` "quadratic", the quadratic (keys
    H (n, d, d), b (n, d), optional p (n,)) from a user's .npz; bad files -> ValidationError."""
    from fedbound.tasks import LeastSquares, Quadratic

    require(os.path.isfile(path), f"data file {path!r} does not exist")
    loader = Quadratic.from_npz if task == "quadratic" else LeastSquares.from_npz
    try:
        return loader(path, dtype=dtype)
    except ValidationError:
        raise
    except (ValueError, OSError, EOFError):
        raise ValidationError(f"data file {path!r} is not a readable .npz archive with the keys "
                              f"of --task {task}") from None


def build_task(args, n: int | None = None):
    """The task of ``args`` (generator or --data file) without gradient noise; n clients from
    ``--n``, else ``n``, else the ``--network`` file, else the default."""
    from fedbound.tasks import (LeastSquares, LogisticRegression, MLPClassifier, Quadratic,
                                RobustRegression)

    dtype = _dtype(args)
    weighting = getattr(args, "weights", "uniform")
    require(weighting == "uniform" or args.task in EXAMPLE_TASKS,
            f"--weights examples needs a task whose clients hold examples ({', '.join(EXAMPLE_TASKS)}), "
            f"got --task {args.task}")
    if args.data is not None:
        require(args.task in ("lsq", "lsq-convex", "quadratic"),
                f"--data gives least-squares (--task lsq) or quadratic (--task quadratic) data, got "
                f"--task {args.task}")
        task = load_npz_task(args.data, dtype, args.task)
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
        return LogisticRegression.generate(n, dim=d, max_size=200, seed=seed, dtype=dtype,
                                           weighting="data" if weighting == "examples" else "uniform")
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
