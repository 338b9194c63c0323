"""``fedbound audit``: test a paper's checkable claims over random and adversarial constants.

``fedbound audit PAPER [--samples N] [--seed S] [--iterations I] [--prove LEVEL] [--only PREFIX ...]
[--json] [--report DIR [--overwrite]]`` with PAPER a registered paper (``sdgt``, see
:data:`fedbound.papers.PAPERS`) or ``all``. For each paper it prints the claims grouped by severity
(worst first: vacuous, rate, condition, constant, typo, holds), one row per claim: claim, variant,
verdict (holds / fails, computed), violation ratio (max lhs/rhs; for a claim that holds, the closest
approach) and the worst point found (the counterexample when it fails, with the failing parts),
then its kind, the conditions it depends on and the worst ratio inside its regime of use.
``--json`` prints every :class:`fedbound.theory.audit_report.ClaimReport` (with ``severity``,
``kind``, ``conditions``, ``interior_ratio``, ...) as a list for one paper and as {paper: list} for
``all`` (with ``evidence_counts``: per paper and in all, how many verdicts are proved, proved on the
box, refuted, not refuted, statistical and numeric). ``--report DIR`` also writes the referee's report
(:mod:`fedbound.theory.audit_document`: report.md, report.html with plots, report.json; one
subfolder per paper for ``all``, and index.md/index.html with the evidence counts per paper).
Every verdict carries its evidence and certificate (issue 32, :mod:`fedbound.theory.certify`),
shown after each row; ``--prove LEVEL`` (0-3, default 1) sets how much a proof may cost.
"""
from __future__ import annotations

from fedbound.cli.commands import SUMMARIES

import argparse
import json

from fedbound import validate
from fedbound.errors import ValidationError
from fedbound.papers import PAPERS
from fedbound.theory.audit import run_audits
from fedbound.outputs import output_folder
from fedbound.theory.audit_report import evidence_line, format_by_severity
from fedbound.theory.certify.certifier import BUDGETS
from fedbound.theory.certify.evidence import counts


def _run(args: argparse.Namespace) -> int:
    if args.samples < 1:
        raise ValidationError(f"--samples must be >= 1, got {args.samples}")
    if args.iterations < 0:
        raise ValidationError(f"--iterations must be >= 0, got {args.iterations}")
    validate.seed(args.seed, "--seed")
    if not 0 <= args.prove <= max(BUDGETS):
        raise ValidationError(f"--prove must be a level in 0..{max(BUDGETS)}, got {args.prove}")
    reports = run_audits(args.paper, samples=args.samples, seed=args.seed, iterations=args.iterations,
                         only=args.only, prove=args.prove)
    if args.out is not None:
        from fedbound.theory.audit_document import write_index, write_report

        root = output_folder(args).create()
        for paper, rs in reports.items():
            written = write_report(paper, rs, root / paper if args.paper == "all" else root,
                                   how=_how(paper, args))
            if not args.json:
                print(f"report of {paper}: {written['html']}")
        if args.paper == "all":
            index = write_index(reports, root)
            if not args.json:
                print(f"evidence per paper: {index['html']}")
    if args.json:
        data = {paper: [r.to_dict() for r in rs] for paper, rs in reports.items()}
        if args.paper == "all":
            data[COUNTS_KEY] = evidence_counts(reports)
        print(json.dumps(data if args.paper == "all" else data[args.paper], indent=2))
        return 0
    for i, (paper, rs) in enumerate(reports.items()):
        if i:
            print()
        print(f"audit of {paper}: {len(rs)} claims, {_how(paper, args)}")
        print(format_by_severity(rs))
        print(evidence_line(rs))
        failing = [r for r in rs if r.verdict == "fails"]
        severities = sorted({r.severity for r in failing})
        print(f"{len(failing)} of {len(rs)} claims fail" + (f" ({', '.join(severities)})" if failing else ""))
    return 0


#: the key of ``audit all --json`` that holds the evidence counts per paper
COUNTS_KEY = "evidence_counts"


def evidence_counts(reports: dict) -> dict:
    """{paper: {evidence kind: count}} and their sum under ``"all"``."""
    out = {paper: counts([r.evidence for r in rs]) for paper, rs in reports.items()}
    out["all"] = counts([r.evidence for rs in reports.values() for r in rs])
    return out


def _how(paper: str, args: argparse.Namespace) -> str:
    return PAPERS.get(paper).evaluated_by or (f"{args.samples} random samples each plus extremes "
                                              f"and adversarial search (seed {args.seed})")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "audit", help=SUMMARIES["audit"],
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
    parser.add_argument("--prove", type=int, default=1, metavar="LEVEL",
                        help="how much each verdict's evidence may cost: 0 re-checks the audit's "
                             "worst points in exact arithmetic, 1 also tries a quick proof (z3 and "
                             "interval branch and bound, about a second per claim), 2 and 3 spend "
                             "ten and sixty times more (default 1)")
    parser.add_argument("--only", nargs="+", default=None, metavar="PREFIX",
                        help="audit only the claims whose id starts with one of these (e.g. thm3 cor3.exp)")
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")
    parser.add_argument("--report", dest="out", default=None, metavar="DIR",
                        help="also write a referee's report into DIR (report.md, report.html with "
                             "plots, report.json)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing non-empty report folder")
    parser.set_defaults(func=_run)
