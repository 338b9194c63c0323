"""``fedbound control``: SD-GT's co-optimization controller (seed 003, problem (31)).

``fedbound control plan --spec NET.json [--H VALUE] [--lambdas l1,l2,l3] [--K-cap N]
[--variant V] [--method M] [--json]`` prints the certified integer plan: K, h_s, beta_s, p, the
objective, the energy per round, the continuous lower bound, the certificate, and the limits the
plan sits on (K = K_cap, every device sampled) with what raising each would buy
(:mod:`fedbound.control.sdgt.limits`; JSON ``active_constraints``).
"""
from __future__ import annotations

from fedbound.cli.commands import SUMMARIES

import argparse
import json
import math
import textwrap

from fedbound import validate
from fedbound.cli.flags import add_renamed
from fedbound.control.sdgt.objective import (DEFAULT_K_CAP, DEFAULT_LAMBDAS, METHOD_NAMES, VARIANTS,
                                             ControlProblem)
from fedbound.control.sdgt.spec import NetSpec, spec_from_dict
from fedbound.errors import ValidationError
from fedbound.jsonable import jsonable

_SPEC_HELP = ('JSON file {"subnets": [{"m": 10, "E": 42.0, "E_d2d": 0.4}, ...]} with subnet sizes m_s, '
              'device-server costs E_s and per-D2D-round costs E_s^D2D (optional "gamma")')


def add_controller_options(parser, method_default: str) -> None:
    """The controller's options, shared by ``control plan`` and ``run --controller``."""
    parser.add_argument("--lambdas", default=None, metavar="l1,l2,l3",
                        help="weights lambda1,lambda2,lambda3 (default %s, the paper's experiments)"
                             % ",".join(f"{v:g}" for v in DEFAULT_LAMBDAS))
    add_renamed(parser, "--K-cap", "--kcap", dest="K_cap", type=int, default=DEFAULT_K_CAP, metavar="N",
                help=f"largest number of D2D rounds K, ControlProblem(K_cap=) in Python (default "
                     f"{DEFAULT_K_CAP}, the released code's grid)")
    parser.add_argument("--variant", choices=tuple(VARIANTS), default="paper",
                        help="objective: paper (31), static (27, H = 1), cor1 (F24: K^-1/3 third term)")
    parser.add_argument("--method", choices=METHOD_NAMES, default=method_default,
                        help="continuous relaxation solver for the lower bound: gp (cvxpy DGP) or "
                             f"reduced (nested 1-D convex route); default {method_default}")


def lambdas_from(args: argparse.Namespace) -> tuple[float, float, float]:
    """``--lambdas l1,l2,l3`` as three finite positive numbers (the paper's weights if absent)."""
    if args.lambdas is None:
        return DEFAULT_LAMBDAS
    text = args.lambdas
    parts = text.split(",")
    try:
        values = tuple(float(x) for x in parts)
    except ValueError:
        raise ValidationError(f"--lambdas must be three numbers l1,l2,l3, got {text!r}") from None
    if len(values) != 3 or not all(math.isfinite(v) and v > 0 for v in values):
        raise ValidationError(f"--lambdas must be three finite numbers > 0 (l1,l2,l3), got {text!r}")
    return values


#: largest --K-cap: D2D rounds per global round beyond this are no practical plan
MAX_KCAP = 10 ** 6


def kcap_from(args: argparse.Namespace) -> int:
    """``--K-cap`` as an integer in [1, MAX_KCAP]."""
    return validate.integer("--K-cap (K_cap)", args.K_cap, low=1, high=MAX_KCAP)


def load_spec_file(path) -> NetSpec:
    """The controller's network spec from a strict-JSON file (validate.json_file: UTF-8, no
    NaN/Infinity, no oversized numbers or nesting), validated by spec_from_dict."""
    return spec_from_dict(validate.json_file("spec file", path))


def _run_plan(args: argparse.Namespace) -> int:
    spec = load_spec_file(args.spec)
    lambdas = lambdas_from(args)
    if args.H is not None and args.variant == "static":
        raise ValidationError("--H has no effect with variant 'static' (objective (27) has H = 1); "
                              f"use one of {', '.join(v for v in VARIANTS if v != 'static')}")
    problem = ControlProblem(spec, H=1.0 if args.H is None else args.H, lambdas=lambdas,
                             K_cap=kcap_from(args), variant=args.variant)
    from fedbound.control.sdgt.integer import plan  # imports cvxpy: only when a plan is made

    result = plan(problem, method=args.method)
    if args.json:
        print(json.dumps(jsonable(result.to_dict()), indent=2, allow_nan=False))
        return 0
    c = result.continuous
    print(f"SD-GT controller (31), variant {problem.variant}, H = {problem.H:g}, "
          f"lambdas = {', '.join(f'{v:g}' for v in problem.lambdas)}, K_cap = {problem.K_cap}")
    print(f"  K (D2D rounds)        {result.K}")
    print(f"  p = min 1 - beta_s^2  {result.p:.6g}")
    print(f"  objective             {result.objective:.10g}")
    print(f"  energy per round      {result.energy_per_round:.6g}")
    print(f"  {f'lower bound ({c.method})':21s} {result.lower_bound:.10g}   gap {result.gap:.3g}")
    print(f"  continuous optimum    K = {c.K:.4g}, p = {c.p:.6g} ({c.status})")
    print("  subnet     m_s    h_s    beta_s")
    for s, (m, h, b) in enumerate(zip(spec.m, result.h, result.beta)):
        print(f"  {s:6d} {int(m):7d} {h:6d}    {b:.4f}")
    cert = result.certificate
    print(f"  certificate: {cert.levels} level configurations, {cert.evaluations} objective "
          f"evaluations, search space 10^{cert.search_space_log10:.1f} integer points")
    print(f"    {cert.argument}")
    if result.limits:
        print("  active limits (the optimum sits on them):")
        for lim in result.limits:
            print(textwrap.fill(f"{lim.name}: {lim.words}", width=100, initial_indent="    ",
                                subsequent_indent="      "))
    else:
        print("  active limits: none (the optimum is inside 1 <= K <= K_cap, 1 <= h_s <= m_s)")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "control", help=SUMMARIES["control"],
        description="SD-GT's controller (31): choose the number of D2D rounds K and the per-subnet "
                    "sample counts h_s by an exact geometric program and a certified integer search.")
    actions = parser.add_subparsers(dest="control_action", metavar="ACTION")
    actions.required = True
    p = actions.add_parser(
        "plan", help="certified integer plan (K, h_s) for a network spec",
        description="Solve (31) for the network in --spec: integer K in 1..K_cap and h_s in 1..m_s, "
                    "certified optimal, with the continuous relaxation as lower bound.")
    p.add_argument("--spec", required=True, metavar="NET.json", help=_SPEC_HELP)
    p.add_argument("--H", type=float, default=None, metavar="VALUE",
                   help="H-hat for a one-off plan (objective (31) as printed, lambda1 not squared; "
                        "default 1)")
    add_controller_options(p, method_default="gp")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.set_defaults(func=_run_plan)
