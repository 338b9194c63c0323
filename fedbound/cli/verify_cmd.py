"""``fedbound verify PAPER [CHECK]``: a paper's theory against measured runs, one line per check and
variant (``--json`` for machine-readable output); without CHECK, every check of the paper.

The checks are the entries of :data:`fedbound.verify.registry.CHECKS` (``fedbound list checks``),
each with its own options (the flags below; a flag the chosen check does not take is an error).
SD-GT's (papers/sdgt.md 4.2-4.6, 7.4): fixed-point, server-recursion, linear-rate, thm3-bound,
lemmas, noise-floor, thm1-bound, thm2-bound; a paper's theorem checks
(:func:`fedbound.verify.registry.theorem_check`) run its algorithm's Monte-Carlo seeds against the
bound, with the run's constants mapped by the paper's adapter. The old form ``verify CHECK`` (an
SD-GT check) still works and warns.

Verification runs in float64 on the tasks each check takes (quadratic, lsq, lsq-convex by
default, or --data FILE.npz). The Monte-Carlo seeds run through the sweep API: in-process, or on
Ray with --ray (a local Ray) or --ray-address ADDR (a cluster), with the same numbers.
Exit status: 0 when no check is violated, 3 when one is (a counterexample;
:data:`fedbound.cli.commands.EXIT_VIOLATED`), 2 on bad input, 1 only for an internal error. A run
outside a theorem's conditions prints "not applicable: CONDITION", never "holds".
"""
from __future__ import annotations

from fedbound.cli.commands import EXIT_VIOLATED, SUMMARIES

import contextlib
import json

from fedbound.cli.flags import add_flags, dest_of, flag_table, given
from fedbound.cli.problem import add_problem_arguments, network_options, task_options
from fedbound.deprecation import deprecated
from fedbound.errors import ValidationError, require
from fedbound.jsonable import jsonable
from fedbound.validate import one_of

def _checks():
    from fedbound.verify.registry import CHECKS

    return CHECKS


def _chosen(args) -> list:
    """The checks the command names (PAPER [CHECK]; the old ``verify CHECK`` of SD-GT warns)."""
    from fedbound.papers import PAPERS
    from fedbound.verify.registry import of_paper

    CHECKS = _checks()
    paper, check = args.paper, args.check
    if check is None and "." in paper and paper in CHECKS:      # verify fednova.thm1-quadratic
        paper, check = paper.split(".", 1)
    if check is None and f"sdgt.{paper}" in CHECKS and paper not in PAPERS:
        deprecated(f"fedbound verify {paper}", f"fedbound verify sdgt {paper}")
        paper, check = "sdgt", paper
    papers = sorted({c.paper for c in CHECKS.entries()})
    one_of("paper with checks (fedbound verify PAPER)", paper, papers)
    if check is None:
        return of_paper(paper)
    if check.startswith(f"{paper}."):       # the check's full name, as `fedbound list checks` shows it
        check = check[len(paper) + 1:]
    names = [c.check_name for c in of_paper(paper)]
    one_of(f"check of {paper}", check, names)
    return [CHECKS.get(f"{paper}.{check}")]


def verify_command(args) -> int:
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)        # small dense problems: threads only add contention
    with threadpool_limits(1):
        return _verify(args)


def _verify(args) -> int:
    from fedbound.sweep.executor import Executor, using
    from fedbound.verify.registry import verify_problem

    checks = _chosen(args)
    on_ray = args.ray or args.ray_address is not None
    taken = flag_table(checks)
    for flag in flag_table(_checks().entries()):
        if getattr(args, dest_of(flag), None) is not None and flag not in taken:
            raise ValidationError(f"{flag} does not apply to verify "
                                  f"{' '.join(filter(None, (args.paper, args.check)))}; its flags "
                                  f"are {', '.join(taken) or 'none'}")
    problem, outcomes = None, []
    for check in checks:
        options = check.check(given(args, check, flag_table([check]), what=f"verify {check.name}"),
                              flags=True)
        require(not on_ray or not check.deterministic,
                f"{check.name} runs one deterministic seed: --ray and --ray-address apply to the "
                f"Monte-Carlo checks")
        one_of(f"--task of verify {check.name}", args.task, check.tasks)
        if problem is None:
            problem = verify_problem(args.task, task_options(args), network_options(args))
        runner = using(Executor(ray=args.ray, address=args.ray_address)) if on_ray and not \
            check.deterministic else contextlib.nullcontext()
        with runner:
            setting, results = check.run(problem, **options)
        outcomes.append((check, setting, results))
    if args.json:
        rows = [{"paper": c.paper, "check": c.check_name, "setting": s,
                 "results": [r.to_dict() for r in rs]} for c, s, rs in outcomes]
        out = rows[0] if args.check is not None or len(rows) == 1 else \
            {"paper": checks[0].paper, "checks": rows}
        print(json.dumps(jsonable(out, nonfinite="named"), indent=1, allow_nan=False))
    else:
        for check, setting, results in outcomes:
            described = ", ".join(f"{k} = {v}" for k, v in setting.items())
            print(f"{check.check_name} ({check.paper}): {described}")
            for c in results:
                applies = c.details.get("theorem_applies", c.details.get("conditions_all_hold"))
                note = ""
                if c.status != "not applicable" and isinstance(applies, bool):
                    note = "  [conditions hold]" if applies else \
                        "  [outside the result's step-size conditions]"
                print("  " + c.summary() + note)
                reading = c.details.get("reading")
                if reading is not None and reading.reference is not None:
                    print(f"    reading: {reading.words()}")
    return EXIT_VIOLATED if any(c.violated for _, _, rs in outcomes for c in rs) else 0


def register(subparsers) -> None:
    CHECKS = _checks()
    papers = sorted({c.paper for c in CHECKS.entries()})
    parser = subparsers.add_parser(
        "verify", help=SUMMARIES["verify"],
        description=__doc__.split("\n\n")[0].replace("``", ""))
    parser.add_argument("paper", metavar="PAPER", help=f"one of: {', '.join(papers)}")
    parser.add_argument("check", metavar="CHECK", nargs="?", default=None, help="; ".join(
        f"{c.name}: {c.summary}" for c in CHECKS.entries()) + " (a check's name with or without its "
        "paper: `verify fednova thm1-quadratic`, `verify fednova fednova.thm1-quadratic`; default: all "
        "of the paper's)")
    tasks = tuple(dict.fromkeys(t for c in CHECKS.entries() for t in c.tasks))
    add_problem_arguments(parser, tasks=tasks)
    add_flags(parser.add_argument_group("check options"), flag_table(CHECKS.entries()))
    ray = parser.add_argument_group("Monte-Carlo on Ray")
    ray.add_argument("--ray", action="store_true",
                     help="run the Monte-Carlo seeds on a local Ray started on demand "
                          "(pip install 'fedbound[ray]'); the same numbers as in-process")
    ray.add_argument("--ray-address", default=None, metavar="ADDR",
                     help="run the Monte-Carlo seeds on the Ray cluster at ADDR")
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    parser.set_defaults(func=verify_command)
