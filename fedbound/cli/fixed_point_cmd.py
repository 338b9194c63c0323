"""``fedbound fixed-point fedavg|fedprox|fednova``: the exact finite-learning-rate fixed point of an
algorithm's round on a quadratic task, its distance to x*, and the spectral radius of the round map.

On f_i(x) = 1/2 (x - b_i)^T H_i (x - b_i) with deterministic local steps and full participation,
one round of FedAvg, FedProx or FedNova is an affine map x+ = M x + v (FedNova App. A (13)-(28)
[001 L316-L385]; :mod:`fedbound.verify.quadratic_rounds`): runs converge to its fixed point
x~ = (I - M)^{-1} v iff the spectral radius of M is < 1. At a finite lr x~ differs from x*:
FedAvg/FedProx are biased toward clients with more local steps (Lemma 1), and FedNova is consistent
only as lr -> 0 (fednova.md 7.4). The lr -> 0 limit of the fixed point is printed beside it.

Example (the problem options of ``fedbound run``)::

    fedbound fixed-point fednova --task quadratic --data FILE.npz --local-steps 1,3,5,8,2 \\
        --lr 0.05 --participation full --json
"""
from __future__ import annotations

import json

import numpy as np

from fedbound.algorithms import registry
from fedbound.cli.flags import add_flags, flag_table, given
from fedbound.cli.problem import add_problem_arguments, problem_from
from fedbound.errors import require
from fedbound.jsonable import jsonable
from fedbound.registry import OptionSet

ALGORITHMS = ("fedavg", "fedprox", "fednova")
#: the options this command reads (the algorithms' own declarations)
OPTIONS = ("local_steps", "lr", "mu", "momentum", "lr_decay", "tau_eff", "participation")


def _entries():
    """The algorithms restricted to :data:`OPTIONS` (their flags and checks)."""
    return [OptionSet(name, registry.get(name).summary,
                      tuple(o for o in registry.get(name).options if o.name in OPTIONS))
            for name in ALGORITHMS]


def _problem(task):
    from fedbound.tasks import Quadratic
    from fedbound.verify.quadratic_rounds import QuadraticProblem

    require(isinstance(task, Quadratic), "fixed-point needs --task quadratic")
    return QuadraticProblem.build(*task.arrays())


def fixed_point_command(args) -> int:
    from fedbound.local_solver import LocalSolver
    from fedbound.verify.quadratic_rounds import fixed_point, limit_fixed_point

    entries = _entries()
    entry = entries[ALGORITHMS.index(args.algorithm)]
    options = entry.check(given(args, entry, flag_table(entries)), flags=True)
    require(options.get("participation", "full") == "full",
            "the exact round map is that of full participation: use --participation full")
    run_problem = problem_from(args)
    require(not run_problem.network_options,
            "fixed-point takes no network: drop --rgg, --subnets, --topology and --network")
    problem = _problem(run_problem.task)
    tau = np.atleast_1d(np.asarray(options.get("local_steps", 1), dtype=np.int64))
    require(tau.size in (1, problem.n), f"--local-steps needs one count or one per client "
                                        f"(n = {problem.n}), got {tau.size}")
    solver = LocalSolver.from_options(options)
    aggregation = "normalized" if args.algorithm == "fednova" else "mean"
    steps = tau if tau.size > 1 else int(tau[0])
    result = fixed_point(problem, steps, solver, aggregation, options.get("tau_eff", "accumulation"))
    limit = limit_fixed_point(problem, steps, solver, aggregation)
    out = {"algorithm": args.algorithm, "n": problem.n, "d": problem.d, "lr": options["lr"],
           "local_steps": tau.tolist(), "fixed_point": result["fixed_point"],
           "x_star": result["x_star"], "distance_to_x_star": result["distance_to_x_star"],
           "spectral_radius": result["spectral_radius"], "converges": bool(result["converges"]),
           "limit_lr_to_0": limit, "limit_distance_to_x_star":
               float(np.linalg.norm(limit - result["x_star"])),
           "client_weights": result["client_weights"], "a_norm": result["a_norm"]}
    if args.json:
        print(json.dumps(jsonable(out, nonfinite="null"), indent=2, allow_nan=False))
        return 0
    verdict = "runs converge to it" if out["converges"] else "runs do NOT converge (radius >= 1)"
    print(f"{args.algorithm} at lr = {options['lr']:g} on {problem.n} clients (d = {problem.d}):")
    print(f"  fixed point          {np.array2string(result['fixed_point'], precision=6)}")
    print(f"  distance to x*       {out['distance_to_x_star']:.6g}")
    print(f"  spectral radius      {out['spectral_radius']:.6g}  ({verdict})")
    print(f"  lr -> 0 limit, distance to x*  {out['limit_distance_to_x_star']:.6g}")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "fixed-point", help="exact finite-lr fixed point of FedAvg/FedProx/FedNova on a quadratic",
        description=__doc__.split("\n\n")[0].split(": ", 1)[1],
        epilog="Example: fedbound fixed-point fednova --task quadratic --data FILE.npz "
               "--local-steps 1,3,5,8,2 --lr 0.05 --json")
    parser.add_argument("algorithm", choices=ALGORITHMS, metavar="ALGORITHM",
                        help="; ".join(ALGORITHMS))
    add_problem_arguments(parser, tasks=("quadratic",))
    add_flags(parser.add_argument_group("algorithm options"), flag_table(_entries()))
    parser.add_argument("--json", action="store_true", help="print JSON to stdout")
    parser.set_defaults(func=fixed_point_command)
