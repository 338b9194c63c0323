"""The page of ``fedbound demo``: one self-contained HTML file (inline CSS, no script, no network
resource) that shows every table and plot of the tour, readable without Python.

Small builders that return HTML text, every value escaped (:func:`html.escape`): :func:`cell` (a
number or a text for a table), :func:`paragraph`, :func:`table`, :func:`figure` (an ``<img>`` of a
PNG file beside the page, by relative path), :func:`section` and :func:`page` (header, table of
contents, the sections in order). Nothing here computes: the numbers come from the tour
(:mod:`fedbound.cli.demo_cmd`).

Tables fit the page: a table wider than the page scrolls inside its own box, and a long cell (a
list of variants) folds onto several lines. Numbers keep the digits that matter
(:func:`fedbound.readout.number`: a contraction of 0.99999995 shows as ``1 - 5.0e-08``).
"""
from __future__ import annotations

import html
from typing import Iterable, Sequence

from fedbound.readout import number as readout_number

CSS = """
body { font-family: system-ui, sans-serif; max-width: 70rem; margin: 2rem auto; padding: 0 1rem;
       color: #1b1b1b; line-height: 1.45; }
header { border-bottom: 2px solid #345; margin-bottom: 1rem; }
nav ol { columns: 2; }
section { border-top: 1px solid #ccd; margin-top: 2rem; padding-top: 0.5rem; }
div.scroll { max-width: 100%; overflow-x: auto; margin: 0.8rem 0; }
table { border-collapse: collapse; font-size: 0.9rem; }
th, td { border: 1px solid #ccd; padding: 0.2rem 0.5rem; text-align: left; vertical-align: top;
         max-width: 26rem; overflow-wrap: anywhere; }
th { background: #eef; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
caption { caption-side: top; text-align: left; font-weight: 600; padding-bottom: 0.2rem; }
figure { margin: 1rem 0; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: 0.9rem; color: #444; }
code { background: #f4f4f8; padding: 0 0.2rem; }
.fails { color: #a00; font-weight: 600; }
.holds { color: #060; }
"""


def esc(value: object) -> str:
    """``value`` as escaped text."""
    return html.escape(str(value), quote=True)


def number(value: object) -> str:
    """A value for a table: integers as such, floats with 4 significant digits (the digits that
    matter near 1: :func:`fedbound.readout.number`), inf and nan by name, None as a dash, booleans
    as yes / no, anything else as its text."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return readout_number(value, 4)
    return str(value)


def cell(value: object) -> str:
    """One ``<td>``: numbers right-aligned, the verdict words coloured."""
    text = number(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f'<td class="num">{esc(text)}</td>'
    word = text.split(" ")[0]
    cls = {"fails": "fails", "violated": "fails", "holds": "holds"}.get(word)
    return f'<td class="{cls}">{esc(text)}</td>' if cls else f"<td>{esc(text)}</td>"


def paragraph(text: str) -> str:
    return f"<p>{esc(text)}</p>"


def code(text: str) -> str:
    """A command line, as a paragraph of code."""
    return f"<p><code>{esc(text)}</code></p>"


def table(header: Sequence[str], rows: Iterable[Sequence[object]], caption: str | None = None) -> str:
    """A table with a header row and one row per item of ``rows`` (values through :func:`cell`), in
    a box that scrolls when the table is wider than the page."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "\n".join("<tr>" + "".join(cell(v) for v in row) + "</tr>" for row in rows)
    title = f"<caption>{esc(caption)}</caption>" if caption else ""
    return (f'<div class="scroll"><table>{title}\n<tr>{head}</tr>\n{body}\n</table></div>')


def figure(src: str, caption: str) -> str:
    """An image ``src`` (a path relative to the page) with its caption."""
    return (f'<figure><img src="{esc(src)}" alt="{esc(caption)}">'
            f"<figcaption>{esc(caption)}</figcaption></figure>")


def section(id: str, title: str, parts: Sequence[str]) -> str:
    """``<section id=...>`` with an ``<h2>`` title and the given HTML parts."""
    return f'<section id="{esc(id)}">\n<h2>{esc(title)}</h2>\n' + "\n".join(parts) + "\n</section>"


def page(title: str, intro: Sequence[str], sections: Sequence[tuple[str, str, Sequence[str]]]) -> str:
    """The whole page: a header (``title`` and the ``intro`` parts), a table of contents linking
    every section, then the sections ((id, title, parts) each)."""
    toc = "".join(f'<li><a href="#{esc(i)}">{esc(t)}</a></li>' for i, t, _ in sections)
    body = "\n".join(section(i, t, parts) for i, t, parts in sections)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            f"<header><h1>{esc(title)}</h1>\n" + "\n".join(intro) + "</header>\n"
            f"<nav><h2>Contents</h2><ol>{toc}</ol></nav>\n{body}\n</body>\n</html>\n")


__all__ = ["esc", "number", "cell", "paragraph", "code", "table", "figure", "section", "page"]
