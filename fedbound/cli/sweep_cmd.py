"""``fedbound sweep SPEC.json --out DIR``: run a grid of runs (algorithms x options x seeds) into a
resumable SQLite results store; ``fedbound sweep report DIR``: the table and plots of a sweep.

Examples::

    fedbound sweep spec.json --out DIR            # in-process, a progress bar over cells
    fedbound sweep spec.json --out DIR --ray      # on a local Ray started on demand
    fedbound sweep spec.json --out DIR --ray-address ADDR   # on an existing Ray cluster
    fedbound sweep report DIR --metric loss_gap   # mean and 95% CI over seeds per configuration

The SPEC format: :mod:`fedbound.sweep.spec`. Rerunning the same command after an interruption
(Ctrl-C, a killed process, a lost Ray worker) resumes: finished cells are skipped. A different SPEC
against an existing DIR is refused unless ``--extend`` (same task, network and rounds: its new cells
are added); ``--overwrite`` starts DIR afresh. The report writes DIR/report-METRIC-rounds.png and
DIR/report-METRIC-floats.png. Ray is an optional extra: ``pip install 'fedbound[ray]'``.
"""
from __future__ import annotations

from fedbound.cli.commands import SUMMARIES

import json

from fedbound.errors import require
from fedbound.jsonable import jsonable

REPORT = "report"


def sweep_command(args) -> int:
    if args.spec == REPORT:
        return _report(args)
    from fedbound.sweep import load, run_sweep, store
    from fedbound.outputs import output_folder, status

    require(args.folder is None, f"fedbound sweep SPEC.json takes its folder as --out, got the extra "
                                 f"argument {args.folder!r} (the report is `fedbound sweep report DIR`)")
    require(args.out is not None, "fedbound sweep SPEC.json needs --out DIR (the results folder)")
    spec = load(args.spec)
    folder = output_folder(args)
    if folder.path.is_dir() and not args.overwrite:
        require(store.exists(folder.path) or status(folder.path) is None,
                f"--out {str(folder.path)!r} holds another fedbound output, not a sweep; pass "
                "--overwrite to replace its files, or choose another folder")
    out = folder.create()
    summary = run_sweep(spec, out, extend=args.extend, ray=args.ray, ray_address=args.ray_address,
                        progress=True, overwrite=args.overwrite, device=args.device)
    db = str(out / store.DB_NAME)
    if args.json:
        print(json.dumps(jsonable({"database": db, **vars(summary)}), indent=1, allow_nan=False))
    else:
        print(f"sweep: {summary.cells} cells ({summary.skipped} finished before, {summary.computed} "
              f"run now, {summary.diverged} diverged) in {db}")
    return 0


def _report(args) -> int:
    from fedbound.sweep import report

    require(args.folder is not None, "fedbound sweep report needs the sweep folder: "
                                     "fedbound sweep report DIR")
    require(args.out is None and not args.extend and not args.ray and args.ray_address is None,
            "fedbound sweep report DIR takes --metric and --json only (it writes its plots into DIR)")
    rows = report.summarize(args.folder, args.metric)
    paths = report.plots(rows, args.metric, args.folder)
    if args.json:
        shown = [{k: row[k] for k in ("algorithm", "options", "sigma", "seeds", "diverged",
                                      "pending", "final")} for row in rows]
        print(json.dumps(jsonable({"metric": args.metric, "configurations": shown, "plots": paths},
                                  nonfinite="null"), indent=1, allow_nan=False))
    else:
        print(report.table(rows, args.metric))
        print(f"wrote {', '.join(paths.values())}")
    return 0


def register(subparsers) -> None:
    from fedbound.sweep.report import REPORT_METRICS

    parser = subparsers.add_parser(
        "sweep", help=SUMMARIES["sweep"],
        description=__doc__.split("\n\n")[0].replace("``", ""),
        epilog='SPEC example: {"algorithm": ["fedavg", "fedprox"], "task": {"name": "lsq", "n": 30, '
               '"d": 20}, "rounds": 50, "grid": {"lr": [0.01, 0.05], "proximal_mu": 0.1, "seed": [0, 1, 2], '
               '"zip": {"local_steps": [1, 5], "clients_per_round": [30, 10]}}} (lists are crossed, '
               'a zip group pairs its lists, scalars are fixed; fedbound/sweep/spec.py)')
    parser.add_argument("spec", metavar="SPEC.json",
                        help="the sweep spec (JSON), or the word 'report' followed by DIR")
    parser.add_argument("folder", nargs="?", default=None, metavar="DIR",
                        help="with 'report': the sweep folder to report on")
    parser.add_argument("--out", default=None, metavar="DIR", help="results folder of the sweep")
    parser.add_argument("--extend", action="store_true",
                        help="add the cells of a changed SPEC to the sweep in --out")
    parser.add_argument("--ray", action="store_true", help="run the cells on a local Ray started on demand")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="where each worker's task lives and its runs compute (default cpu)")
    parser.add_argument("--ray-address", default=None, metavar="ADDR",
                        help="run the cells on the Ray cluster at ADDR")
    parser.add_argument("--metric", default="loss_gap", choices=REPORT_METRICS,
                        help="report: the metric of the table and plots (default loss_gap)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary to stdout")
    parser.set_defaults(func=sweep_command, resume=True)
