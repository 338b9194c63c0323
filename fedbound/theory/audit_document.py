"""A referee's report of a paper's audit (``fedbound audit PAPER --report DIR``, issue 22).

:func:`write_report` writes into ``DIR``: ``report.md`` (Markdown) and ``report.html`` (the same,
one self-contained page with the plots embedded, readable without Python), ``report.json`` (every
:class:`~fedbound.theory.audit_report.ClaimReport`) and ``plots/CLAIM.png`` for each scaling check.
The document leads with what backs the verdicts: how many claims are proved, proved on the box,
refuted, not refuted, statistical and numeric (:mod:`fedbound.theory.certify.evidence`); ``audit
all --report DIR`` also writes ``DIR/index.md``/``index.html`` with these counts per paper
(:func:`write_index`). Per claim, grouped by severity (worst first): the statement, the result it tests with its seed
equation and lines, kind, verdict, severity, the conditions (repairs) the verdict depends on, the
worst ratio over the whole domain and inside the regime of use, the counterexample (or the closest
point), the relations broken by excluded samples, and for a scaling check the fitted exponent with
its interval and a plot of q(t)/t^a against the variable, then its evidence and certificate (the
method; the solver, domain and unsat query's hash; the box and boxes; the exact counterexample,
sides and ratio; the points sampled; the interval; the tolerance). Every file is written atomically.
"""
from __future__ import annotations

import base64
import html
import io
import os
from pathlib import Path

from fedbound.outputs import atomic_path, write_json, write_text
from fedbound.errors import FedboundError
from fedbound.readout import number, ratio_words
from fedbound.theory.audit_report import ClaimReport, format_ratio, format_value, sort_by_size
from fedbound.theory.audit_report import SEVERITIES
from fedbound.theory.certify.evidence import EVIDENCE, counts
from fedbound.theory.certify.evidence import MEANINGS as MEANING_OF_EVIDENCE
from fedbound.theory.registry import RESULTS

#: what each severity means, for the report's legend
MEANINGS = {
    "holds": "no admissible counterexample: proved, or only not refuted by sampling (its evidence says which)",
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


def _exact(number: dict | None) -> str:
    """An exact number of a certificate: its exact form where short, else its decimal one."""
    if not number:
        return "-"
    exact = number.get("exact")
    return exact if exact is not None and len(exact) <= 40 else (number.get("decimal") or "-")[:22]


def _certificate(report: ClaimReport) -> list[tuple[str, str]]:
    """What backs the verdict, row by row (module doc of :mod:`fedbound.theory.certify.evidence`)."""
    c, kind = report.certificate, report.evidence
    rows = [("evidence", f"{kind}: {MEANING_OF_EVIDENCE[kind]}"), ("method", str(c.get("method", "")))]
    if "query_sha256" in c:
        rows += [("solver", f"{c['solver']}, {c['branches']} branch(es), integers {c['integers']}"),
                 ("domain", str(c["domain"])),
                 ("unsat query", f"SHA-256 {c['query_sha256']}, {c['query_bytes']} bytes (report.json)")]
    if "boxes" in c:
        box = "; ".join(f"{k} in [{v[0]}, {v[1]}]" + (" integer" if len(v) > 2 else "")
                        for k, v in c["box"].items())
        rows += [("box", box), ("boxes", f"{c['boxes']} ({c['faces']} faces by monotonicity, "
                                          f"{c['exact_points']} points decided exactly)")]
    for key in ("counterexample", "witness"):
        if key in c:
            point = c[key]
            rows += [(f"{key} (exact)", ", ".join(f"{k} = {_exact(v)}" for k, v in point["constants"].items())),
                     ("exact sides", f"lhs = {_exact(point['lhs'])}, rhs = {_exact(point['rhs'])}"
                                     + (f" ({point['part']})" if "part" in point else "")),
                     ("exact ratio", f"{_exact(point['ratio'])} = {point['ratio'].get('decimal', '')[:22]}")]
    if "closest_exact" in c:
        rows.append(("closest point (exact)", f"ratio {c['closest_exact']['ratio'].get('decimal', '')[:22]} "
                                              f"over {c.get('exact_points', 0)} points re-evaluated exactly"))
    if kind in ("not-refuted", "numeric") and "points" in c:
        rows.append(("points", f"{c['points']} evaluated, the worst found by {c.get('found_by', '')}"))
    if "interval" in c and kind == "statistical":
        lo, hi = c["interval"]
        rows.append(("interval", f"[{lo:.4g}, {hi:.4g}] at {100 * c['confidence']:g}% confidence"))
    if "tolerance" in c and kind != "statistical":
        rows.append(("tolerance", str(c["tolerance"])))
    if "float_verdict" in c:
        rows.append(("float verdict", f"{c['float_verdict']} (decided otherwise in exact arithmetic)"))
    if "exact" in c:
        rows.append(("exact evaluation", str(c["exact"])))
    return rows


def _entry(report: ClaimReport) -> list[tuple[str, str]]:
    rows = [("statement", report.statement), ("source", _source(report)), ("kind", report.kind),
            ("verdict", report.verdict), ("severity", report.severity),
            ("conditions", "; ".join(report.conditions) or "none"),
            ("worst ratio (domain)", f"{report.size_words()} ({format_ratio(report)})"),
            ("counterexample" if report.verdict == "fails" else "closest point", _point(report.worst))]
    if report.regime:
        rows.append(("regime of use", report.regime))
        rows.append(("worst ratio (regime)", "no point" if report.interior_ratio is None
                     else ratio_words(report.interior_ratio)))
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
    if report.severity == "vacuous":
        rows += _anatomy(report)
    return rows + (_certificate(report) if report.evidence else [])


def _anatomy(report: ClaimReport) -> list[tuple[str, str]]:
    """Why a vacuous bound is so large: the bound of the claim's result and variant evaluated at the
    counterexample, its dominant additive term and share, and the constants it is most sensitive to
    (d log B / d log c, :meth:`~fedbound.theory.evaluation.Evaluation.anatomy`)."""
    if report.result_id not in RESULTS:
        return []
    result = RESULTS.get(report.result_id)
    try:
        variant = report.variant if report.variant in result.variants else None
        names = set(result.variant(variant).constants())
        anatomy = result.evaluate(variant, **{k: v for k, v in report.worst.items() if k in names}).anatomy()
    except FedboundError as exc:
        return [("anatomy at the counterexample", f"not evaluated: {exc}")]
    top = ", ".join(f"{name} ({number(slope, 3)})" for name, slope in anatomy.ranked()[:4])
    return [("anatomy at the counterexample",
             f"dominant term {anatomy.dominant.label} ({number(100 * anatomy.at(anatomy.dominant.share), 3)}% "
             f"of the bound); most sensitive to {top} (d log B / d log c)")]


def _counts_table(reports: dict[str, list[ClaimReport]]) -> tuple[list[str], str]:
    """The evidence counts per paper (and in all) as Markdown lines and an HTML table."""
    papers = {**{p: counts([r.evidence for r in rs]) for p, rs in reports.items()},
              **({"all": counts([r.evidence for rs in reports.values() for r in rs])}
                 if len(reports) > 1 else {})}
    head = ["paper", "claims", *EVIDENCE]
    rows = [[p, str(sum(c.values())), *(str(c[k]) for k in EVIDENCE)] for p, c in papers.items()]
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
          *("| " + " | ".join(r) + " |" for r in rows)]
    html_ = ("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
             + "".join("<tr>" + "".join(f"<td>{html.escape(x)}</td>" for x in r) + "</tr>" for r in rows)
             + "</table>")
    return md, html_


def _evidence_legend(present: list[str]) -> tuple[list[str], str]:
    md = ["| evidence | meaning |", "|---|---|", *(f"| {k} | {MEANING_OF_EVIDENCE[k]} |" for k in present)]
    body = "<table>" + "".join(f"<tr><td><b>{k}</b></td><td>{html.escape(MEANING_OF_EVIDENCE[k])}</td></tr>"
                               for k in present) + "</table>"
    return md, body


def write_report(paper: str, reports: list[ClaimReport], directory: str | os.PathLike, *,
                 how: str = "") -> dict[str, Path]:
    """Write the report of ``paper`` into ``directory`` (module doc); returns {format: path}."""
    directory = Path(directory)
    (directory / "plots").mkdir(parents=True, exist_ok=True)
    groups = [(s, [r for r in reports if r.severity == s]) for s in reversed(SEVERITIES)]
    groups = [(s, rs) for s, rs in groups if rs]
    severities = ", ".join(f"{len(rs)} {s}" for s, rs in groups)
    table_md, table_html = _counts_table({paper: reports})
    present = [k for k in EVIDENCE if any(r.evidence == k for r in reports)]
    legend_md, legend_html = _evidence_legend(present)
    md = [f"# Audit of {paper}", "", "What backs each verdict:", "", *table_md, "", *legend_md, "",
          f"{len(reports)} claims: {severities}." + (f" {how}" if how else ""), "",
          "| severity | meaning |", "|---|---|", *(f"| {s} | {MEANINGS[s]} |" for s, _ in groups), ""]
    body = [f"<h1>Audit of {html.escape(paper)}</h1>", "<p>What backs each verdict:</p>", table_html,
            legend_html, f"<p>{len(reports)} claims: {html.escape(severities)}. {html.escape(how)}</p>",
            "<table>" + "".join(f"<tr><td><b>{s}</b></td><td>{html.escape(MEANINGS[s])}</td></tr>"
                                for s, _ in groups) + "</table>"]
    for severity, group in groups:
        md += [f"## {severity} ({len(group)})", ""]
        body.append(f"<h2>{severity} ({len(group)})</h2>")
        for report in sort_by_size(group):
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
    return {"markdown": write_text(directory / "report.md", "\n".join(md) + "\n"),
            "html": write_text(directory / "report.html", _page(f"Audit of {paper}", body)),
            "json": write_json(directory / "report.json", [r.to_dict() for r in reports])}


def _page(title: str, body: list[str]) -> str:
    style = ("body{font-family:sans-serif;max-width:60em;margin:auto}td,th{padding:2px 8px;"
             "vertical-align:top}table{border-collapse:collapse}tr:nth-child(even){background:#f4f4f4}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{style}</style></head><body>{''.join(body)}</body></html>")


def write_index(reports: dict[str, list[ClaimReport]], directory: str | os.PathLike) -> dict[str, Path]:
    """``fedbound audit all --report DIR``: ``index.md`` and ``index.html`` leading with the
    evidence counts per paper (proved, proved-on-box, refuted, not-refuted, statistical, numeric),
    linking each paper's report (``PAPER/report.html``); ``index.json`` the counts."""
    directory = Path(directory)
    table_md, table_html = _counts_table(reports)
    legend_md, legend_html = _evidence_legend(list(EVIDENCE))
    md = ["# Audit of every paper", "", "What backs each verdict, per paper:", "", *table_md, "",
          *legend_md, "", *(f"- [{p}]({p}/report.md): {len(rs)} claims" for p, rs in reports.items()), ""]
    body = ["<h1>Audit of every paper</h1>", "<p>What backs each verdict, per paper:</p>", table_html,
            legend_html, "<ul>" + "".join(f'<li><a href="{html.escape(p)}/report.html">{html.escape(p)}'
                                          f"</a>: {len(rs)} claims</li>" for p, rs in reports.items()) + "</ul>"]
    data = {p: counts([r.evidence for r in rs]) for p, rs in reports.items()}
    data["all"] = counts([r.evidence for rs in reports.values() for r in rs])
    return {"markdown": write_text(directory / "index.md", "\n".join(md) + "\n"),
            "html": write_text(directory / "index.html", _page("Audit of every paper", body)),
            "json": write_json(directory / "index.json", data)}
