"""``fedbound fixed-point ALGORITHM``: the exact finite-learning-rate fixed point of any registered
algorithm's round on a quadratic task, its distance to x*, and the spectral radius of the round map.

On f_i(x) = 1/2 (x - b_i)^T H_i (x - b_i) with exact gradients and a deterministic round (full
participation), the round of an algorithm with SGD-type client and server optimizers (momentum,
Nesterov, proximal steps, control variates, gossip) is an affine map z+ = M z + v of its augmented
state z (models, trackers, server moments, control variates), obtained by automatic differentiation
of one round (:mod:`fedbound.verify.exact`): runs converge to its fixed point iff the spectral
radius of M (restricted to the directions the run moves in) is < 1, and the radius is the exact
per-round contraction factor. At a finite lr the fixed point differs from x* for FedAvg/FedProx
(biased toward clients with more local steps, FedNova Lemma 1) and FedNova (consistent only as
lr -> 0, fednova.md 7.4); for fedavg, fedprox and fednova without variance reduction the lr -> 0
limit of the fixed point, the aggregation's client weights and the accumulation norms ||a_i||_1
are printed beside it (the hand-derived maps of :mod:`fedbound.verify.quadratic_rounds`). Adam-type
optimizers, random participation and gradient noise are refused with the reason.

Examples (the problem options of ``fedbound run``; each algorithm takes its own options)::

    fedbound fixed-point fednova --task quadratic --data FILE.npz --local-steps 1,3,5,8,2 \\
        --lr 0.05 --participation full --json
    fedbound fixed-point fedavgm --lr 0.05 --local-steps 5 --server-lr 1 --server-momentum 0.6 \\
        --participation full
"""
from __future__ import annotations

from fedbound.cli.commands import SUMMARIES

import json

import numpy as np

from fedbound.algorithms import registry
from fedbound.cli.flags import add_flags
from fedbound.cli.problem import add_problem_arguments, problem_from
from fedbound.cli.run_cmd import algorithm_names, algorithm_options, algorithm_specs, algorithm_table
from fedbound.errors import require
from fedbound.jsonable import jsonable
from fedbound.readout import number

#: the algorithms of the hand-derived maps (quadratic_rounds), and their aggregation rules
HAND_DERIVED = {"fedavg": "mean", "fedprox": "mean", "fednova": "normalized"}


def _hand_derived(name: str, options: dict, task) -> dict:
    """limit_lr_to_0, limit_distance_to_x_star, client_weights and a_norm of FedAvg/FedProx/FedNova
    (:mod:`fedbound.verify.quadratic_rounds`; the fixed point of a server step of SGD type does not
    depend on it, so neither does the limit), or {} where the hand-derived maps do not apply."""
    if name not in HAND_DERIVED or options.get("vr") not in (None, "none"):
        return {}
    from fedbound.local_solver import LocalSolver
    from fedbound.verify.quadratic_rounds import QuadraticProblem, limit_fixed_point, round_map

    problem = QuadraticProblem.build(*task.arrays())
    steps = options.get("local_steps", 1)
    solver = LocalSolver.from_options(options)
    rmap = round_map(problem, steps, solver, HAND_DERIVED[name], options.get("tau_eff", "accumulation"))
    limit = limit_fixed_point(problem, steps, solver, HAND_DERIVED[name])
    return {"limit_lr_to_0": limit,
            "limit_distance_to_x_star": float(np.linalg.norm(limit - problem.minimizer())),
            "client_weights": rmap.c, "a_norm": rmap.a_norm}


def fixed_point_command(args) -> int:
    from fedbound.verify.exact import exact_round

    spec = registry.get(args.algorithm)
    options = algorithm_options(args, spec)
    problem = problem_from(args, float64=True)
    require(spec.network != "none" or not problem.network_options,
            f"{spec.name} takes no network: drop --rgg, --subnets, --topology and --network")
    task = problem.task
    exact = exact_round(problem.algorithm(spec.name, options, seed=problem.task_options["seed"],
                                          flags=True))
    out = {"algorithm": args.algorithm, "n": task.n, "d": task.d, "lr": options.get("lr")}
    if "local_steps" in {o.name for o in spec.options}:   # the round's default: one step
        out["local_steps"] = np.atleast_1d(options.get("local_steps", 1)).tolist()
    out.update(exact.summary())
    out.update(_hand_derived(args.algorithm, options, task))
    out["options"] = options
    if args.json:
        print(json.dumps(jsonable(out, nonfinite="null"), indent=2, allow_nan=False))
        return 0
    verdict = "runs converge to it" if out["converges"] else "runs do NOT converge (radius >= 1)"
    lr = "" if out["lr"] is None else f" at lr = {out['lr']:g}"
    print(f"{args.algorithm}{lr} on {task.n} clients (d = {task.d}); round map on "
          f"{', '.join(out['state_fields'])}"
          + (f" ({out['conserved']} conserved directions factored out)" if out["conserved"] else "")
          + ":")
    print(f"  fixed point          {np.array2string(exact.fixed_point, precision=6)}")
    print(f"  distance to x*       {number(out['distance_to_x_star'])}")
    print(f"  spectral radius      {number(out['spectral_radius'])}  ({verdict})")
    if "limit_lr_to_0" in out:
        print(f"  lr -> 0 limit, distance to x*  {out['limit_distance_to_x_star']:.6g}")
    return 0


def register(subparsers, argv: list[str] | None = None) -> None:
    parser = subparsers.add_parser(
        "fixed-point", help=SUMMARIES["fixed-point"],
        description=__doc__.split("\n\n")[0].split(": ", 1)[1],
        epilog="Examples: fedbound fixed-point fednova --task quadratic --data FILE.npz "
               "--local-steps 1,3,5,8,2 --lr 0.05 --json;  fedbound fixed-point fedavgm --lr 0.05 "
               "--local-steps 5 --server-lr 1 --server-momentum 0.6 --participation full")
    specs = algorithm_specs(argv)
    parser.add_argument("algorithm", choices=algorithm_names(argv), metavar="ALGORITHM",
                        help="; ".join(f"{s.name}: {s.summary}" for s in specs))
    add_problem_arguments(parser, tasks=("quadratic",))
    opts = parser.add_argument_group("algorithm options (each applies to the algorithms listed)")
    add_flags(opts, algorithm_table(specs))
    parser.add_argument("--json", action="store_true", help="print JSON to stdout")
    parser.set_defaults(func=fixed_point_command, algorithm_specs=specs)
