"""A referee's report of a paper's audit (``fedbound audit PAPER --report DIR``, issue 22).

:func:`write_report` writes into ``DIR``: ``report.md`` (Markdown) and ``report.html`` (the same,
one self-contained page with the plots embedded, readable without Python), ``report.json`` (every
:class:`~fedbound.theory.audit_report.ClaimReport`) and ``plots/CLAIM.png`` for each scaling check.
Per claim, grouped by severity (worst first): the statement, the result it tests with its seed
equation and lines, kind, verdict, severity, the conditions (repairs) the verdict depends on, the
worst ratio over the whole domain and inside the regime of use, the counterexample (or the closest
point), the relations broken by excluded samples, and for a scaling check the fitted exponent with
its interval and a plot of q(t)/t^a against the variable. Every file is written atomically.
"""
from __future__ import annotations

import base64
import html
import io
import os
from pathlib import Path

from fedbound.outputs import atomic_path, write_json, write_text
from fedbound.theory.audit_report import ClaimReport, format_ratio, format_value
from fedbound.theory.audit_report import SEVERITIES
from fedbound.theory.registry import RESULTS

#: what each severity means, for the report's legend
MEANINGS = {
    "holds": "no admissible counterexample found (evidence, not proof)",
    "typo": "fails as printed; a corrected reading holds",
    "constant": "fails by a bounded factor: a constant is wrong",
    "condition": "the step condition admits steps for which the conclusion fails",
    "rate": "the ratio grows with T, n or 1/eps: the claimed order is wrong",
    "vacuous": "the bound exceeds a trivial bound throughout the regime of use",
}


def _source(report: ClaimReport) -> str:
    if report.result_id in RESULTS:
        p = RESULTS.get(report.result_id).provenance
        return f"{report.result_id} ({report.variant}): seed {p.seed}, {p.equation}, lines {p.lines}"
    return f"{report.result_id} ({report.variant})"


def _point(values: dict | None) -> str:
    return ", ".join(f"{k} = {format_value(v)}" for k, v in (values or {}).items()) or "-"


def _plot(report: ClaimReport) -> bytes | None:
    """PNG of a scaling check: q(t)/t^a against t (log axes)."""
    if not report.scaling:
        return None
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    s = report.scaling
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(s["grid"], s["ratio"], "o-")
    ax.set_xscale("linear" if s["linear"] else "log")
    ax.set_yscale("log")
    ax.set_xlabel(s["variable"])
    claimed = f"{s['claimed']:.3g}^{s['variable']}" if s["linear"] else f"{s['variable']}^{s['claimed']:g}"
    ax.set_ylabel(f"q / {claimed}")
    ax.set_title(f"{report.claim}: fitted {s['fitted']:.3g} [{s['interval'][0]:.3g}, "
                 f"{s['interval'][1]:.3g}]", fontsize=9)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()


def _entry(report: ClaimReport) -> list[tuple[str, str]]:
    rows = [("statement", report.statement), ("source", _source(report)), ("kind", report.kind),
            ("verdict", report.verdict), ("severity", report.severity),
            ("conditions", "; ".join(report.conditions) or "none"),
            ("worst ratio (domain)", format_ratio(report)),
            ("counterexample" if report.verdict == "fails" else "closest point", _point(report.worst))]
    if report.regime:
        rows.append(("regime of use", report.regime))
        rows.append(("worst ratio (regime)", "no point" if report.interior_ratio is None
                     else format_value(report.interior_ratio)))
    if report.growth:
        rows.append(("growth of the ratio", ", ".join(f"{k}^{v:.2f}" for k, v in report.growth.items())))
    if report.scaling:
        s = report.scaling
        rows.append(("scaling", f"{s['variable']}: claimed {s['claimed']:g} ({s['relation']}), fitted "
                                f"{s['fitted']:.4g}, {100 * s['confidence']:g}% interval "
                                f"[{s['interval'][0]:.4g}, {s['interval'][1]:.4g}] over "
                                f"{s['base_points']} instances"))
    if report.monte_carlo:
        m = report.monte_carlo
        rows.append(("Monte Carlo", f"mean {m['mean']:.4g}, {100 * m['confidence']:g}% interval "
                                    f"[{m['interval'][0]:.4g}, {m['interval'][1]:.4g}] over "
                                    f"{m['realizations']} realizations; bound {m['bound']:.4g}"))
    if report.n_inadmissible:
        rows.append(("excluded samples", f"{report.n_inadmissible} broke {', '.join(report.inadmissible)}"))
    return rows


def write_report(paper: str, reports: list[ClaimReport], directory: str | os.PathLike, *,
                 how: str = "") -> dict[str, Path]:
    """Write the report of ``paper`` into ``directory`` (module doc); returns {format: path}."""
    directory = Path(directory)
    (directory / "plots").mkdir(parents=True, exist_ok=True)
    groups = [(s, [r for r in reports if r.severity == s]) for s in reversed(SEVERITIES)]
    groups = [(s, rs) for s, rs in groups if rs]
    counts = ", ".join(f"{len(rs)} {s}" for s, rs in groups)
    md = [f"# Audit of {paper}", "", f"{len(reports)} claims: {counts}." + (f" {how}" if how else ""), "",
          "| severity | meaning |", "|---|---|", *(f"| {s} | {MEANINGS[s]} |" for s, _ in groups), ""]
    body = [f"<h1>Audit of {html.escape(paper)}</h1>",
            f"<p>{len(reports)} claims: {html.escape(counts)}. {html.escape(how)}</p>",
            "<table>" + "".join(f"<tr><td><b>{s}</b></td><td>{html.escape(MEANINGS[s])}</td></tr>"
                                for s, _ in groups) + "</table>"]
    for severity, group in groups:
        md += [f"## {severity} ({len(group)})", ""]
        body.append(f"<h2>{severity} ({len(group)})</h2>")
        for report in group:
            rows = _entry(report)
            md += [f"### {report.claim}", "", "| | |", "|---|---|",
                   *(f"| {k} | {v.replace('|', '/')} |" for k, v in rows)]
            body.append(f"<h3>{html.escape(report.claim)}</h3><table>" + "".join(
                f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in rows) + "</table>")
            png = _plot(report)
            if png is not None:
                name = f"plots/{report.claim.replace('/', '_')}.png"
                with atomic_path(directory / name) as tmp:
                    tmp.write_bytes(png)
                md += ["", f"![{report.claim}]({name})"]
                body.append(f'<img alt="{html.escape(report.claim)}" '
                            f'src="data:image/png;base64,{base64.b64encode(png).decode()}">')
            md.append("")
    style = ("body{font-family:sans-serif;max-width:60em;margin:auto}td{padding:2px 8px;"
             "vertical-align:top}table{border-collapse:collapse}tr:nth-child(even){background:#f4f4f4}")
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>Audit of {html.escape(paper)}"
            f"</title><style>{style}</style></head><body>{''.join(body)}</body></html>")
    return {"markdown": write_text(directory / "report.md", "\n".join(md) + "\n"),
            "html": write_text(directory / "report.html", page),
            "json": write_json(directory / "report.json", [r.to_dict() for r in reports])}
