r"""The report of a sweep: per configuration (a cell without its seed), the mean of a metric over
the finished seeds with a 95% Student-t interval (:func:`fedbound.stats.mean_ci`), as a
table of the final round and as curves against rounds and against communicated floats (uploads +
downloads + D2D floats, cumulative, averaged over the seeds), one line per configuration with its
interval shaded.

The metrics that cannot be negative (:data:`NONNEGATIVE_METRICS`: f - f*, squared distance and
gradient norm) get intervals within [0, inf), the method named in the table's header;
fewer than :data:`fedbound.stats.FEW_SAMPLES` seeds are marked "few". The curves use a log axis
when their means are positive and span a decade (:func:`fedbound.readout.log_axis`).
"""
from __future__ import annotations

import os

import json
from pathlib import Path

import numpy as np

from fedbound.readout import log_axis, number
from fedbound.stats import FEW_SAMPLES, STUDENT_T, CLIPPED, mean_ci
from fedbound.errors import require
from fedbound.sweep.store import METRICS, Store, exists
from fedbound.validate import one_of

#: metrics a report can show
REPORT_METRICS = METRICS[:-1]
#: the metrics that cannot be negative: their intervals stay within [0, inf)
NONNEGATIVE_METRICS = ("loss_gap", "dist2", "grad_norm2")
FLOATS = ("upload_floats", "download_floats", "d2d_floats")


def summarize(folder: str | os.PathLike, metric: str = "loss_gap", confidence: float = 0.95) -> list[dict]:
    """The configurations of the sweep stored in ``folder`` (:func:`configurations`)."""
    require(exists(folder), f"{folder!s} holds no sweep database (run `fedbound sweep SPEC.json --out "
                            f"{folder!s}` first)")
    store = Store(folder, create=False)
    try:
        cells = [(c["config"], c["status"], store.rounds(c["id"]) if c["status"] == "done" else None)
                 for c in store.cells()]
    finally:
        store.close()
    require(cells, f"{folder!s} holds a sweep database without cells (the sweep stopped before it "
                   "recorded them): rerun the sweep")
    return configurations(cells, metric, confidence)


def summarize_collected(collected: list, metric: str = "loss_gap", confidence: float = 0.95) -> list[dict]:
    """The configurations of the in-memory results of :func:`fedbound.sweep.collect`."""
    return configurations([(cell.config, result.status, result.columns) for cell, result in collected],
                          metric, confidence)


def configurations(cells: list, metric: str = "loss_gap", confidence: float = 0.95) -> list[dict]:
    """One dict per configuration of ``cells`` ((config JSON, status, per-round columns or None)),
    in cell order: ``algorithm``, ``options``, ``sigma``, ``seeds`` (finished), ``diverged``,
    ``pending``, ``final`` (Estimate dict of the last round's metric) and the curves ``rounds``,
    ``floats``, ``mean``, ``low``, ``high`` (None without finished seeds)."""
    metric = one_of("metric", metric, REPORT_METRICS)
    groups: dict[str, list] = {}
    for config, status, columns in cells:
        groups.setdefault(config, []).append((status, columns))
    rows = []
    for config, members in groups.items():
        raw = json.loads(config)
        series = [columns for status, columns in members if status == "done"]
        lengths = {len(columns[metric]) for columns in series}
        require(0 not in lengths and len(lengths) <= 1,
                f"the finished seeds of {config} have {sorted(lengths)} rounds: a store whose finished "
                "cells lack their rounds is damaged; rerun the sweep into a new folder")
        statuses = [status for status, _ in members]
        row = {"algorithm": raw["algorithm"], "options": raw["options"], "sigma": raw["sigma"],
               "seeds": len(series), "diverged": statuses.count("diverged"),
               "pending": statuses.count("pending"), "final": None,
               "rounds": None, "floats": None, "mean": None, "low": None, "high": None}
        if series:
            values = np.stack([s[metric] for s in series])
            est = mean_ci(values, confidence, nonnegative=metric in NONNEGATIVE_METRICS) \
                if np.all(np.isfinite(values)) else None
            row["final"] = None if est is None else est[-1].to_dict()
            row["rounds"] = np.arange(values.shape[1])
            row["floats"] = np.mean([sum(s[f] for f in FLOATS) for s in series], axis=0)
            if est is not None:
                row.update(mean=est.mean, low=est.low, high=est.high)
        rows.append(row)
    return rows


def _label(row: dict) -> str:
    options = ", ".join(f"{k}={v}" for k, v in sorted(row["options"].items()))
    noise = f", sigma={row['sigma']}" if row["sigma"] else ""
    return f"{row['algorithm']}({options}{noise})"


def table(rows: list[dict], metric: str) -> str:
    """The rows as a text table: configuration, seeds ("few" below FEW_SAMPLES), final mean and its
    95% interval, the interval's method in the header and a note on few seeds."""
    width = max([len("configuration")] + [len(_label(row)) for row in rows])
    method = CLIPPED if metric in NONNEGATIVE_METRICS else STUDENT_T
    lines = [f"{'configuration':{width}s} {'seeds':>9s} {'div':>4s} {metric + ' mean':>14s}  "
             f"95% CI ({method})"]
    for row in rows:
        f = row["final"]
        shown = (f"{number(f['mean']):>14s}  [{number(f['low'])}, {number(f['high'])}]"
                 if f is not None else f"{'-':>14s}")
        seeds = f"{row['seeds']}{' (few)' if f is not None and f['few'] else ''}"
        lines.append(f"{_label(row):{width}s} {seeds:>9s} {row['diverged']:4d} {shown}")
    if any(row["final"] is not None and row["final"]["few"] for row in rows):
        lines.append(f"few: fewer than {FEW_SAMPLES} seeds; the interval's width rests on a standard "
                     f"deviation estimated from so few values")
    return "\n".join(lines)


AXES = {"rounds": "round", "floats": "communicated floats (uploads + downloads + D2D)"}


def figure(rows: list[dict], metric: str, axis: str):
    """The curves of ``metric`` against ``axis`` ("rounds" or "floats"), one line per configuration
    with its interval shaded; a log axis where the means are positive and span a decade."""
    from matplotlib.figure import Figure

    axis = one_of("axis", axis, AXES)
    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    shown = [row for row in rows if row["mean"] is not None]
    for row in shown:
        line, = ax.plot(row[axis], row["mean"], label=_label(row))
        ax.fill_between(row[axis], row["low"], row["high"], color=line.get_color(), alpha=0.2)
    if shown and log_axis(np.concatenate([row["mean"] for row in shown])):
        ax.set_yscale("log", nonpositive="clip")
    ax.set_xlabel(AXES[axis])
    ax.set_ylabel(f"{metric} (mean over seeds, 95% CI)")
    if ax.lines:
        ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    return fig


def plots(rows: list[dict], metric: str, folder: str | os.PathLike) -> dict[str, str]:
    """``report-<metric>-rounds.png`` and ``report-<metric>-floats.png`` in ``folder`` (written
    atomically, :func:`figure`); returns their paths."""
    from fedbound.outputs import atomic_path

    paths = {}
    for axis in AXES:
        path = Path(folder) / f"report-{metric}-{axis}.png"
        with atomic_path(path) as tmp:
            figure(rows, metric, axis).savefig(tmp, dpi=100, format="png")
        paths[axis] = str(path)
    return paths


__all__ = ["summarize", "summarize_collected", "configurations", "table", "figure", "plots",
           "REPORT_METRICS", "NONNEGATIVE_METRICS"]
