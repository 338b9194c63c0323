"""``fedbound run ALGORITHM``: run an algorithm of the registry (SD-GT and its baselines, the
FedOpt family) on a task, over a network where it takes one, and save metrics.

Examples (SD-GT: n clients of FILE.npz split evenly into 2 ring subnets, 4 sampled per subnet;
FedAvg: C of the n clients sampled uniformly per round, K local full-gradient steps of size ETA)::

    fedbound run sdgt --task lsq --data FILE.npz --subnets 2 --topology ring --local-steps 5 \\
        --clients-per-subnet 4 --lr 0.01 --rounds 400 --sigma 0 --float64 --seed 0 --out DIR
    fedbound run fedavg --task lsq --data FILE.npz --clients-per-round C --local-steps K --lr ETA \\
        --rounds R --sigma 0 --float64 --seed 0 --out DIR

The algorithms, their options and their flags come from :mod:`fedbound.algorithms.registry`; a flag
that the chosen algorithm does not take is an error.

Writes DIR/metrics.csv and DIR/metrics.json (per round: loss, loss gap f - f*, squared distance
to x*, squared gradient norm, K, cumulative communication), DIR/plot.png (loss gap and distance to
x* against rounds, semilog) and DIR/x_final.npy (the final global model). A progress bar goes to
stderr. Bad input (n not divisible by S, --clients-per-subnet > m_s, lr <= 0, a missing or malformed file)
is one line on stderr and exit status 2.

Task and network options: :mod:`fedbound.cli.problem`. Old flags (``--gamma``, ``--K``,
``--sample``, ``--amsgrad-eps``, ``--server``) still work and warn.

With ``--controller SPEC.json`` SD-GT runs in closed loop with its controller, Algorithm 2
(fedbound/cli/controller_run.py).
"""
from __future__ import annotations

from fedbound.cli.commands import SUMMARIES

import csv
import json
import math
from pathlib import Path

import numpy as np

from fedbound.algorithms import registry
from fedbound.algorithms.threads import MAX_THREADS
from fedbound.cli import controller_run
from fedbound.cli.flags import add_flags, flag_table, given
from fedbound.cli.problem import add_problem_arguments, problem_from
from fedbound.errors import require
from fedbound.jsonable import jsonable
from fedbound.outputs import atomic_open, atomic_path, output_folder, write_json

# ---- the run command -----------------------------------------------------------------------
def algorithm_specs(argv: list[str] | None = None) -> tuple:
    """The algorithms whose flags the parser of ``argv`` (the command line from the command word)
    declares: every one without ``argv`` or when it names none; else fedbound's own and the one it
    names, so that an installed plugin is not imported for a command that does not use it (the
    registry's cached index knows the plugins' names, :meth:`fedbound.registry.Registry.known_names`)."""
    named = next((a for a in (argv or [])[1:] if not a.startswith("-")), None)
    if named is None:
        return registry.specs()
    own = registry.ALGORITHMS.own_entries()
    if named not in registry.ALGORITHMS.known_names():
        return own                  # an unknown name: argparse refuses it with the closest ones
    chosen = registry.get(named)
    return own if chosen in own else (*own, chosen)


def algorithm_names(argv: list[str] | None = None) -> tuple[str, ...]:
    """The names ALGORITHM takes: every registered one, a plugin's from its cached index."""
    return registry.ALGORITHMS.known_names() if argv else registry.names()


def algorithm_table(specs=None):
    return flag_table(registry.specs() if specs is None else specs)


def algorithm_options(args, spec) -> dict:
    """The options of ``spec`` given on the command line, checked, registered defaults filled
    in (a flag of another algorithm that was given is an error)."""
    return spec.check(given(args, spec, algorithm_table(getattr(args, "algorithm_specs", None))), flags=True)


METRICS = ("loss", "loss_gap", "dist2", "grad_norm2", "K")


def write_outputs(out: Path, traj, config: dict) -> dict[str, str]:
    """metrics.csv, metrics.json, plot.png and x_final.npy under ``out``; returns the paths."""
    from matplotlib.figure import Figure  # no pyplot: 0.4 s less start-up, no global figure state

    out.mkdir(parents=True, exist_ok=True)
    columns = {"round": traj.rounds, **{m: getattr(traj, m) for m in METRICS}, **traj.comm,
               **traj.algorithm_metrics}
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
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    evaluated = np.isfinite(traj.loss)   # every round, or those of --eval-every
    series = [("loss_gap", "f(x_g) - f*"), ("dist2", "||x_g - x*||^2")]
    if not any(np.all(np.isfinite(getattr(traj, k)[evaluated])) for k, _ in series):
        series = [("loss", "f(x_g)"), ("grad_norm2", "||grad f(x_g)||^2")]
    for key, label in series:
        values = np.asarray(getattr(traj, key), dtype=float)[evaluated]
        if np.all(np.isfinite(values)):   # exact zeros and rounding below 0 are left out
            ax.semilogy(traj.rounds[evaluated], np.where(values > 0, values, np.nan), label=label)
    ax.set_xlabel("round")
    ax.set_title(f"{config['algorithm']} on {config['task']}")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    fig.subplots_adjust(left=0.13, right=0.97, top=0.92, bottom=0.12)  # tight_layout costs 0.2 s
    with atomic_path(paths["plot"]) as tmp:
        fig.savefig(tmp, dpi=100, format="png")
    return {k: str(v) for k, v in paths.items()}


def run_command(args) -> int:
    from fedbound.algorithms import run

    spec = registry.get(args.algorithm)
    options = algorithm_options(args, spec)
    if args.controller:  # SD-GT in closed loop with Algorithm 2: fedbound/cli/controller_run.py
        return controller_run.run_controlled(args, options)
    require(args.rounds >= 0, f"--rounds must be an integer >= 0, got {args.rounds}")
    require(args.sigma >= 0 and np.isfinite(args.sigma), f"--sigma must be >= 0, got {args.sigma}")
    require(args.eval_every >= 1, f"--eval-every must be an integer >= 1, got {args.eval_every}")
    require(args.threads is None or 1 <= args.threads <= MAX_THREADS,
            f"--threads must be an integer in [1, {MAX_THREADS}], got {args.threads}")
    problem = problem_from(args)
    require(spec.network != "none" or not problem.network_options,
            f"{spec.name} takes no network (it runs on a star of the n clients): drop "
            "--rgg, --subnets, --topology and --network")
    task, seed = problem.task, problem.task_options["seed"]
    algorithm = problem.algorithm(spec.name, options, seed=seed, sigma=args.sigma, rounds=args.rounds,
                                  flags=True)
    network = problem.network(spec.name)
    out = output_folder(args).create()   # marked incomplete until the command succeeds
    traj = run(algorithm, args.rounds, progress=True, eval_every=args.eval_every,
               threads=args.threads)
    config = {"algorithm": args.algorithm, "task": problem.task_options.get("data") or args.task,
              "n": task.n, "d": task.d,
              "S": None if network is None else network.S,
              "m": None if network is None else network.m.tolist(),
              "q": None if network is None else network.q,
              **options, "sigma": args.sigma, "rounds": args.rounds, "seed": seed,
              **({"eval_every": args.eval_every} if args.eval_every != 1 else {}),
              "weights": problem.task_options.get("weights", "uniform"),
              "dtype": str(task.dtype).replace("torch.", ""), "constants": task.constants(),
              **({"device": args.device} if args.device != "cpu" else {})}
    files = write_outputs(out, traj, config)
    final = {k: float(getattr(traj, k)[-1]) for k in ("loss", "loss_gap", "dist2", "grad_norm2")}
    if args.json:
        print(json.dumps(jsonable({"config": config, "final": final, "files": files}, nonfinite="null"), indent=2, allow_nan=False))
    else:
        print(f"{algorithm.name}: {args.rounds} rounds on {config['task']} (n = {task.n}, "
              f"d = {task.d}); final loss {final['loss']:.6g}, f - f* {_known(final['loss_gap'])}, "
              f"||x_g - x*||^2 {_known(final['dist2'])}")
        grown = traj.growth_words()
        if grown:
            print(f"note: {grown}")
        print(f"wrote {', '.join(files.values())}")
    return 0


def _known(value: float) -> str:
    """A final gap or distance as the summary line shows it: "unknown" where the task knows no f*
    or x* (a neural task's: the trajectory holds NaN there, Trajectory's docstring)."""
    return "unknown" if math.isnan(value) else f"{value:.3g}"


def register(subparsers, argv: list[str] | None = None) -> None:
    parser = subparsers.add_parser(
        "run", help=SUMMARIES["run"],
        description=__doc__.split("\n\n")[0].split(": ", 1)[1],
        epilog="Examples: fedbound run sdgt --task lsq --data FILE.npz --subnets 2 --topology ring "
               "--local-steps 5 --clients-per-subnet 4 --lr 0.01 --rounds 400 --float64 --out DIR;  fedbound run fedavg "
               "--task lsq --data FILE.npz --clients-per-round 10 --local-steps 5 --lr 0.05 "
               "--rounds 100 --float64 --out DIR")
    specs = algorithm_specs(argv)
    parser.add_argument("algorithm", choices=algorithm_names(argv), metavar="ALGORITHM",
                        help="; ".join(f"{s.name}: {s.summary}" for s in specs))
    add_problem_arguments(parser)
    opts = parser.add_argument_group("algorithm options (each applies to the algorithms listed)")
    add_flags(opts, algorithm_table(specs))
    opts.add_argument("--sigma", type=float, default=0.0,
                      help="gradient-noise std: E||noise||^2 = sigma^2 per gradient (default 0)")
    opts.add_argument("--rounds", type=int, default=100, help="global rounds (default 100)")
    parser.add_argument("--eval-every", type=int, default=1, metavar="E",
                        help="evaluate the global model's loss, gap, distance and gradient norm (O(d^2) "
                             "per round on quadratic tasks, a pass over all clients on others) every E rounds and at the last (default 1); "
                             "the other rounds hold nan in metrics.csv")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="where the task's data lives and the run computes (default cpu; "
                             "randomness is drawn on the CPU, so a seed gives the same "
                             "participants and noise on both)")
    parser.add_argument("--threads", type=int, default=None, metavar="N",
                        help="torch threads (default: one per 25 MFLOP of a round's work, at "
                             "least 1: small rounds run on one thread, fedbound.algorithms.threads)")
    controller_run.add_arguments(parser)
    parser.add_argument("--out", default="fedbound-run", metavar="DIR",
                        help="output folder (default ./fedbound-run)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary to stdout")
    parser.set_defaults(func=run_command, algorithm_specs=specs)
