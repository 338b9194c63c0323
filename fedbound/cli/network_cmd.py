"""``fedbound network``: inspect gossip matrices and fog networks.

``fedbound network info`` prints the three mixing measures (AFGA's spectral_norm ||W - J||_2,
SD-GT's rho_tight = 1 - ||W - J||_2^2, spectral_gap = 1 - |lambda_2|) of one topology
(``--topology NAME --n N``), or per subnet with SD-GT's q = min rho_tight for a network of subnets
(``--subnets S --per-subnet m`` with ``--topology NAME`` or ``--rgg``, or ``--spec FILE.json``).
"""
from __future__ import annotations

from fedbound.cli.commands import SUMMARIES

import argparse
import json

from fedbound.errors import ValidationError, require
from fedbound.jsonable import jsonable
from fedbound.network import (DEFAULT_RADIUS_RANGE, REGION_SIDE, TOPOLOGIES, Network,
                              mixing_summary, topology_weights)

#: topology options that have a CLI flag (--prob, --self-weight, --cols)
_OPTIONS = ("prob", "self_weight", "cols")


def _sizes(text: str):
    """``10`` -> 10, ``10,12,8`` -> [10, 12, 8]."""
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an integer or a comma list of integers, got {text!r}") from None
    return sizes[0] if len(sizes) == 1 else sizes


def register(subparsers) -> None:
    network = subparsers.add_parser("network", help=SUMMARIES["network"],
                                    description="Inspect gossip matrices and fog networks.")
    commands = network.add_subparsers(dest="network_command", metavar="SUBCOMMAND")
    commands.required = True
    info = commands.add_parser(
        "info", help="mixing measures of a topology or a network of subnets",
        description="Mixing measures of one topology (--topology NAME --n N) or, per subnet with "
                    "q = min rho_tight, of a network (--subnets S --per-subnet m with --topology "
                    "or --rgg, or --spec FILE.json).")
    source = info.add_mutually_exclusive_group()
    source.add_argument("--topology", metavar="NAME", help=f"one of: {', '.join(TOPOLOGIES)}")
    source.add_argument("--rgg", action="store_true",
                        help="SD-GT random geometric network (default 3 subnets of 10)")
    source.add_argument("--spec", metavar="FILE",
                        help='JSON {"subnets": [{"m": 10, "topology": "ring"} or {"W": [[...]]}, ...]}')
    info.add_argument("--n", type=int, help="number of clients of a single topology")
    info.add_argument("--subnets", type=int, metavar="S", help="number of subnets")
    info.add_argument("--per-subnet", type=_sizes, metavar="m",
                      help="clients per subnet: m or m1,m2,...")
    info.add_argument("--prob", type=float, help="erdos_renyi edge probability in (0, 1]")
    info.add_argument("--self-weight", type=float, help="ring self weight in [0, 1) (default 1/3)")
    info.add_argument("--cols", type=int, help="grid columns (default ceil(sqrt(n)))")
    info.add_argument("--radius-min", type=float, default=DEFAULT_RADIUS_RANGE[0],
                      help=f"RGG minimum radius (default {DEFAULT_RADIUS_RANGE[0]})")
    info.add_argument("--radius-max", type=float, default=DEFAULT_RADIUS_RANGE[1],
                      help=f"RGG maximum radius (default {DEFAULT_RADIUS_RANGE[1]})")
    info.add_argument("--region-side", type=float, default=REGION_SIDE,
                      help=f"RGG square region side (default {REGION_SIDE})")
    info.add_argument("--seed", type=int, default=0, help="seed of random topologies (default 0)")
    info.add_argument("--json", action="store_true", help="print JSON to stdout")
    info.set_defaults(func=run_info)


def _options(args) -> dict:
    return {option: getattr(args, option) for option in _OPTIONS if getattr(args, option) is not None}


def _single_report(args) -> dict:
    require(args.subnets is None and args.per_subnet is None,
            "--n describes one topology; use --subnets with --per-subnet for a network")
    require(args.n >= 1, f"--n must be >= 1, got {args.n}")
    W = topology_weights(args.topology, args.n, seed=args.seed, **_options(args))
    return {"topology": args.topology, "n": args.n, "options": _options(args), **mixing_summary(W)}


def _network(args) -> tuple[Network, dict]:
    """The network asked for and a description of where it came from."""
    if args.spec is not None:
        require(args.subnets is None and args.per_subnet is None,
                "--spec gives the subnets; drop --subnets/--per-subnet")
        return Network.from_json(args.spec), {"spec": args.spec}
    S = 3 if args.subnets is None and args.rgg else args.subnets
    m = 10 if args.per_subnet is None and args.rgg else args.per_subnet
    require(S is not None and m is not None,
            "give --n for one topology, or --subnets S and --per-subnet m for a network")
    require(S >= 1, f"--subnets must be >= 1, got {S}")
    if args.rgg:
        radius_range = (args.radius_min, args.radius_max)
        network = Network.random_geometric(S, m, radius_range, args.seed, region_side=args.region_side)
        return network, {"topology": "rgg", "radius_range": list(radius_range),
                         "region_side": args.region_side, "seed": args.seed}
    network = Network.from_topology(args.topology, S, m, seed=args.seed, **_options(args))
    return network, {"topology": args.topology, "options": _options(args), "seed": args.seed}


def _network_report(args) -> dict:
    network, source = _network(args)
    return {**source, "S": network.S, "n": network.n, "q": network.q,
            "subnets": [mixing_summary(W) for W in network.blocks]}


def _yes(flag: bool) -> str:
    return "yes" if flag else "NO"


def _print_table(report: dict) -> None:
    if "subnets" not in report:
        print(f"topology {report['topology']}, n = {report['n']}"
              + "".join(f", {k} = {v}" for k, v in report["options"].items()))
        print(f"  spectral_norm  ||W - J||_2       {report['spectral_norm']:.6f}   (AFGA rho)")
        print(f"  rho_tight      1 - ||W - J||_2^2 {report['rho_tight']:.6f}   (SD-GT rho_s)")
        print(f"  spectral_gap   1 - |lambda_2|    {report['spectral_gap']:.6f}")
        print(f"  doubly stochastic: {_yes(report['doubly_stochastic'])}, symmetric: "
              f"{_yes(report['symmetric'])}, connected: {_yes(report['connected'])}")
        return
    source = ", ".join(f"{k} {v}" for k, v in report.items()
                       if k not in ("S", "n", "q", "subnets") and v not in ({}, None))
    print(f"network: {source}; S = {report['S']}, n = {report['n']}")
    print(f"{'subnet':>6} {'m':>5} {'rho_tight':>10} {'spectral_norm':>14} {'spectral_gap':>13}")
    for s, sub in enumerate(report["subnets"]):
        print(f"{s:>6} {sub['m']:>5} {sub['rho_tight']:>10.6f} {sub['spectral_norm']:>14.6f} "
              f"{sub['spectral_gap']:>13.6f}")
    print(f"q = min rho_tight = {report['q']:.6f}")


def run_info(args) -> int:
    if args.topology is not None and args.n is not None:
        report = _single_report(args)
    elif args.topology is not None or args.rgg or args.spec is not None:
        require(args.n is None, "--n describes one topology; use --subnets with --per-subnet")
        report = _network_report(args)
    else:
        raise ValidationError("give --topology NAME with --n N or with --subnets S --per-subnet m, "
                              "or --rgg, or --spec FILE.json")
    if args.json:
        print(json.dumps(jsonable(report), indent=2, allow_nan=False))
    else:
        _print_table(report)
    return 0
