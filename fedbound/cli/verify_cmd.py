"""``fedbound verify CHECK``: run a named check of SD-GT's theory and print measured against
predicted (one line per check and variant; ``--json`` for machine-readable output).

Checks (papers/sdgt.md 4.2-4.6, 7.4; fedbound.verify.checks):

* fixed-point: sigma = 0, partial sampling: SD-GT reaches x* (distance to x*).
* server-recursion: the server-model recursion (40), exact with full participation, Monte-Carlo
  mean otherwise.
* linear-rate: measured contraction vs the spectral radius of the exact linear operator vs
  Theorem 3's 1 - mu K gamma/4 (full participation, sigma = 0).
* thm3-bound: Theorem 3's bound (98) per variant, gamma <= gamma_bar by default.
* lemmas: one-step LHS/RHS of Lemmas 1-6, printed and re-derived variants.
* noise-floor: exact stationary error under gradient noise vs Theorem 3's floor, with a
  Monte-Carlo check of the stationary value and its scaling in gamma.
* thm1-bound, thm2-bound: Theorem 1 (76) (re-derived variant at --c2; the printed one needs
  --D5) and Theorem 2 (89) per variant, running averages over T = K+1..rounds.

Verification runs in float64 on quadratic tasks (quadratic, lsq, lsq-convex or --data FILE.npz).
The Monte-Carlo seeds run through the sweep API (fedbound.sweep.evaluate): in-process, or on Ray
with --ray (a local Ray) or --ray-address ADDR (a cluster), with the same numbers.
Exit status: 0 when no check is violated, 1 when one is (a counterexample), 2 on bad input.
"""
from __future__ import annotations

import argparse
import contextlib
import json
from dataclasses import replace

import torch
from threadpoolctl import threadpool_limits

from fedbound import resources
from fedbound.cli.problem import add_problem_arguments, network_options, task_options
from fedbound.deprecation import deprecated
from fedbound.errors import require
from fedbound.jsonable import jsonable

CHECKS = ("fixed-point", "server-recursion", "linear-rate", "thm3-bound", "lemmas", "noise-floor",
          "thm1-bound", "thm2-bound")
#: per check: default sample per subnet (None = all), sigma, rounds, seeds
DEFAULTS = {
    "fixed-point": {"sample": 2, "sigma": 0.0, "rounds": 600, "seeds": 1},
    "server-recursion": {"sample": 2, "sigma": 0.5, "rounds": 20, "seeds": 200},
    "linear-rate": {"sample": None, "sigma": 0.0, "rounds": 600, "seeds": 1},
    "thm3-bound": {"sample": 2, "sigma": 0.3, "rounds": 100, "seeds": 50},
    "lemmas": {"sample": 2, "sigma": 0.5, "rounds": 15, "seeds": 200},
    "noise-floor": {"sample": None, "sigma": 0.5, "rounds": None, "seeds": 50},
    "thm1-bound": {"sample": 2, "sigma": 0.3, "rounds": 100, "seeds": 50},
    "thm2-bound": {"sample": 2, "sigma": 0.3, "rounds": 100, "seeds": 50},
}
VERIFY_D = 5
#: checks without a Monte-Carlo over seeds
DETERMINISTIC = ("fixed-point", "linear-rate")


def _setting(args):
    from fedbound.verify.checks import SDGTSetting, lemma_step, step_for, thm3_step

    from fedbound.algorithms.problem import Problem

    defaults = DEFAULTS[args.check]
    options = {"float64": True, **task_options(args)}
    if args.task == "quadratic" and "data" not in options:
        options.setdefault("d", VERIFY_D)
    problem = Problem(args.task, options, network_options(args))
    task = problem.task
    require(task.L is not None and task.mu is not None and task.x_star is not None,
            f"verify needs a quadratic task with known L, mu and x*, got --task {args.task}")
    network = problem.network("sdgt")
    args.seed = problem.task_options["seed"]
    _renamed(args)
    sample = args.clients_per_subnet
    if sample is None and defaults["sample"] is not None:
        sample = min(defaults["sample"], int(network.m.min()))
    smallest = int(network.m.min())
    require(sample is None or 1 <= sample <= smallest,
            f"--clients-per-subnet must be in [1, min_s m_s = {smallest}], got {sample}")
    sigma = args.sigma if args.sigma is not None else defaults["sigma"]
    require(sigma >= 0, f"--sigma must be >= 0, got {sigma}")
    K = args.local_steps
    require(K >= 1, f"--local-steps must be an integer >= 1, got {K}")
    practical = 1.0 / (4 * K * task.L)     # Lemma 1's cap: a step with a visible contraction
    setting = SDGTSetting(task, network, K, practical, sample, sigma)
    if args.lr is not None:
        require(args.lr > 0, f"--lr must be > 0, got {args.lr}")
        gamma = args.lr
    elif args.check in ("thm3-bound", "noise-floor"):
        gamma = thm3_step(setting)
    elif args.check == "lemmas":
        gamma = lemma_step(setting)
    elif args.check in ("thm1-bound", "thm2-bound"):
        result_id, variants, fixed = _average_bound_options(args)
        gamma = step_for(setting, result_id, variants, **fixed)
    else:
        gamma = practical
    return replace(setting, gamma=gamma), practical


#: old flag -> (new flag, type)
OLD_FLAGS = {"--K": ("--local-steps", int), "--sample": ("--clients-per-subnet", int),
             "--gamma": ("--lr", float)}


def _renamed(args) -> None:
    """The run flags under their new names (old spellings warn; default K = 3)."""
    for old, (new, _) in OLD_FLAGS.items():
        value = getattr(args, f"old_{old[2:]}")
        if value is not None:
            require(getattr(args, new[2:].replace("-", "_")) is None,
                    f"give {new} or its old spelling {old}, not both")
            deprecated(old, new)
            setattr(args, new[2:].replace("-", "_"), value)
    if args.local_steps is None:
        args.local_steps = 3


def _average_bound_options(args) -> tuple:
    """(result id, variants, fixed constants) of thm1-bound / thm2-bound."""
    if args.check == "thm2-bound":
        return "sdgt.thm2", None, {}
    require(args.c2 > 2, f"--c2 must be > 2 (Theorem 1's (74)), got {args.c2}")
    if args.D5 is None:
        return "sdgt.thm1", ("rederived",), {"c2": args.c2}
    require(args.D5 > 0, f"--D5 must be > 0, got {args.D5}")
    return "sdgt.thm1", None, {"c2": args.c2, "D": 0.25, "D5": args.D5}


def verify_command(args) -> int:
    torch.set_num_threads(1)        # small dense problems: threads only add contention
    with threadpool_limits(1):
        return _verify(args)


def _verify(args) -> int:
    from fedbound.sweep.executor import Executor, using
    from fedbound.verify import checks as C

    on_ray = args.ray or args.ray_address is not None
    require(not on_ray or args.check not in DETERMINISTIC,
            f"{args.check} runs one deterministic seed: --ray and --ray-address apply to the "
            f"Monte-Carlo checks ({', '.join(c for c in CHECKS if c not in DETERMINISTIC)})")
    setting, practical = _setting(args)
    defaults = DEFAULTS[args.check]
    rounds = args.rounds if args.rounds is not None else defaults["rounds"]
    seeds = args.seeds if args.seeds is not None else defaults["seeds"]
    require(rounds is None or rounds >= 1, f"--rounds must be >= 1, got {rounds}")
    require(seeds >= 2 or args.check in DETERMINISTIC,
            f"--seeds must be >= 2 for Monte-Carlo intervals, got {seeds}")
    resources.require_run_memory(f"verify {args.check}", rounds or 1, setting.task.n,
                                 setting.task.d, seeds=max(seeds, 1))
    with using(Executor(ray=args.ray, address=args.ray_address)) if on_ray else contextlib.nullcontext():
        if args.check == "fixed-point":
            results = C.fixed_point(setting, rounds=rounds, seed=args.seed)
        elif args.check == "server-recursion":
            results = C.server_recursion(setting, rounds=rounds, seeds=seeds)
        elif args.check == "linear-rate":
            results = C.linear_rate(setting, rounds=rounds)
        elif args.check == "thm3-bound":
            results = C.thm3_bound(setting, rounds=rounds, seeds=seeds)
        elif args.check == "lemmas":
            results = C.lemmas(setting, rounds=rounds, seeds=seeds)
        elif args.check in ("thm1-bound", "thm2-bound"):
            result_id, variants, fixed = _average_bound_options(args)
            results = C.average_bound(setting, result_id, rounds=rounds, seeds=seeds,
                                      variants=variants, **fixed)
        else:
            mc_gamma = args.mc_gamma if args.mc_gamma is not None else practical
            results = C.noise_floor(setting, mc_gamma=mc_gamma, seeds=seeds)
    if args.json:
        print(json.dumps(jsonable({"check": args.check, "setting": setting.describe(),
                                   "results": [c.to_dict() for c in results]}), indent=1,
                         allow_nan=False))
    else:
        described = ", ".join(f"{k} = {v}" for k, v in setting.describe().items())
        print(f"{args.check}: SD-GT, {described}")
        for c in results:
            applies = c.details.get("theorem_applies", c.details.get("conditions_all_hold"))
            note = ""
            if isinstance(applies, bool):
                note = "  [conditions hold]" if applies else "  [outside the result's step-size conditions]"
            print("  " + c.summary() + note)
    return 1 if any(c.violated for c in results) else 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "verify", help="check SD-GT's theory against runs: measured vs predicted",
        description=__doc__.split("\n\n")[0].replace("``", ""))
    parser.add_argument("check", choices=CHECKS, metavar="CHECK", help=f"one of: {', '.join(CHECKS)}")
    add_problem_arguments(parser, tasks=("quadratic", "lsq", "lsq-convex"))
    opts = parser.add_argument_group("run")
    opts.add_argument("--local-steps", type=int, default=None, help="SD-GT's K, D2D rounds per "
                      "global round (default 3)")
    opts.add_argument("--clients-per-subnet", type=int, default=None, metavar="h",
                      help="SD-GT's h, clients sampled per subnet (default per check: 2, or all "
                           "where the check needs full participation)")
    opts.add_argument("--lr", type=float, default=None,
                      help="SD-GT's step size gamma (default per check: gamma_bar for "
                           "thm3-bound/noise-floor, half the smallest lemma cap for lemmas, "
                           "1/(4KL) otherwise)")
    for old in OLD_FLAGS:
        opts.add_argument(old, dest=f"old_{old[2:]}", type=OLD_FLAGS[old][1], default=None,
                          help=argparse.SUPPRESS)
    opts.add_argument("--mc-gamma", type=float, default=None,
                      help="noise-floor: step size of the Monte-Carlo check (default 1/(4KL))")
    opts.add_argument("--c2", type=float, default=2.01,
                      help="thm1-bound: Lyapunov constant c2 > 2 of (74) (default 2.01)")
    opts.add_argument("--D5", type=float, default=None,
                      help="thm1-bound: the paper's unspecified D5; given, the printed (76) with "
                           "D = 1/4 is checked too")
    opts.add_argument("--sigma", type=float, default=None, help="gradient-noise std (default per check)")
    opts.add_argument("--rounds", type=int, default=None, help="global rounds (default per check)")
    opts.add_argument("--seeds", type=int, default=None, help="Monte-Carlo seeds (default per check)")
    opts.add_argument("--ray", action="store_true",
                      help="run the Monte-Carlo seeds on a local Ray started on demand "
                           "(pip install 'fedbound[ray]'); the same numbers as in-process")
    opts.add_argument("--ray-address", default=None, metavar="ADDR",
                      help="run the Monte-Carlo seeds on the Ray cluster at ADDR")
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    parser.set_defaults(func=verify_command)
