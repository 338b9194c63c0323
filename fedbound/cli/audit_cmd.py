"""``fedbound audit``: test a paper's checkable claims over random and adversarial constants.

``fedbound audit PAPER [--samples N] [--seed S] [--iterations I] [--only PREFIX ...] [--json]``
with PAPER a registered paper (``sdgt``, see :data:`fedbound.papers.PAPERS`) or ``all``.
For each paper it prints one row per claim: claim, variant, verdict (holds / fails, computed),
violation ratio (max lhs/rhs; for a claim that holds, the closest approach) and the worst point
found (the counterexample when it fails, with the failing parts). ``--json`` prints the same as a
list of objects for one paper (see :class:`fedbound.theory.audit_report.ClaimReport`), and as
{paper: list} for ``all``.
"""
from __future__ import annotations

import argparse
import json

from fedbound import validate
from fedbound.errors import ValidationError
from fedbound.papers import PAPERS
from fedbound.theory.audit import run_audits
from fedbound.theory.audit_report import format_table


def _run(args: argparse.Namespace) -> int:
    if args.samples < 1:
        raise ValidationError(f"--samples must be >= 1, got {args.samples}")
    if args.iterations < 0:
        raise ValidationError(f"--iterations must be >= 0, got {args.iterations}")
    validate.seed(args.seed, "--seed")
    reports = run_audits(args.paper, samples=args.samples, seed=args.seed, iterations=args.iterations,
                         only=args.only)
    if args.json:
        data = {paper: [r.to_dict() for r in rs] for paper, rs in reports.items()}
        print(json.dumps(data if args.paper == "all" else data[args.paper], indent=2))
        return 0
    for i, (paper, rs) in enumerate(reports.items()):
        if i:
            print()
        how = PAPERS.get(paper).evaluated_by or (f"{args.samples} random samples each plus extremes "
                                                 f"and adversarial search (seed {args.seed})")
        print(f"audit of {paper}: {len(rs)} claims, {how}")
        print(format_table(rs))
        failing = [r for r in rs if r.verdict == "fails"]
        print(f"{len(failing)} of {len(rs)} claims fail")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "audit", help="audit a paper's claims (holds / fails with counterexamples)",
        description="Evaluate every checkable claim of a paper (a condition implies an inequality) "
                    "at random constants (log-uniform over wide ranges), at the extremes of the "
                    "domain and by an adversarial search maximizing lhs/rhs; report holds / fails, "
                    "the violation ratio and the worst counterexample. Verdicts are computed.")
    # the papers are those of the registry, listed by `fedbound list papers` and by the error for an
    # unknown one: listing them here would load every paper to build this parser
    parser.add_argument("paper", help="paper to audit (`fedbound list papers`: sdgt, fednova, ...), or all")
    parser.add_argument("--samples", type=int, default=20000, metavar="N",
                        help="random samples per claim (default 20000)")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    parser.add_argument("--iterations", type=int, default=40, metavar="I",
                        help="differential-evolution iterations of the adversarial search, 0 to skip "
                             "(default 40)")
    parser.add_argument("--only", nargs="+", default=None, metavar="PREFIX",
                        help="audit only the claims whose id starts with one of these (e.g. thm3 cor3.exp)")
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")
    parser.set_defaults(func=_run)
