r"""How a fedbound object shows itself in a notebook: the one set of building blocks every result
object's ``_repr_html_``, ``_repr_latex_`` and ``__repr__`` is made of, so that a theorem, an
evaluation, a plan, a trajectory, an audit and a certificate look alike and none writes its own
markup.

* :func:`escape`: text as HTML (every piece of user text goes through it: a constant's meaning, a
  plugin's statement, an option's value);
* :class:`Html`: markup that displays itself (what a method such as
  :meth:`fedbound.theory.evaluation.Evaluation.html` returns);
* :func:`cell` and :func:`shown`: a value as a reader reads it, numbers through
  :mod:`fedbound.readout` (``1 - 5.0e-08``, never ``1``), an array as its size and range;
* :func:`table` (wide tables scroll inside their box, long ones are cut with the count of the rest),
  :func:`fields` (name / value pairs), :func:`details` (a folded part), :func:`box` (the frame of
  one object), :func:`formula` (LaTeX inside HTML, typeset by the notebook's MathJax);
* :func:`figure`, :func:`line_figure` and :func:`plot`: a matplotlib figure as an inline PNG, and
  the one line plot the objects use (a log axis where the values span decades,
  :func:`fedbound.readout.log_axis`); matplotlib is imported only when a figure is drawn;
* :func:`sample_rows`: the rows of a long series a small table shows (first, log-spaced, last);
* :func:`brief`: a short ``__repr__``, :func:`clip`: any text cut to :data:`REPR_LIMIT` characters.

Nothing here computes: a display reads what an object holds (no run, audit or solve is started by
showing an object).

>>> table(["constant", "value"], [["L", 1.0], ["rate", 0.99999995]]).text.count("<tr")
3
>>> "1 - 5.0e-08" in shown(0.99999995), escape("<b> & 'x'")
(True, '&lt;b&gt; &amp; &#x27;x&#x27;')
>>> brief("Plan", K=49, h=(10, 10), objective=0.123456789)
'Plan(K=49, h=(10, 10), objective=0.123457)'
"""
from __future__ import annotations

import base64
import html
import io
import numbers
from typing import Annotated, Mapping, Sequence

import numpy as np

from fedbound.argtypes import Count, Measured, NonNegativeInt, Range
from fedbound.errors import InputTypeError
from fedbound.readout import log_axis, number

#: the longest ``__repr__`` of a result object (:func:`brief` cuts there)
REPR_LIMIT = 400
#: rows a table shows before it says how many more there are
MAX_ROWS = 40
#: entries of an array shown in full (a longer one is shown as its size and range)
MAX_ENTRIES = 6
#: the frame of one object
_BOX = ("border:1px solid #c8c8c8;border-radius:4px;padding:6px 10px;margin:4px 0;"
        "max-width:100%;overflow-x:auto")
_TABLE = "border-collapse:collapse;font-size:90%;margin:4px 0"
_CELL = "border-bottom:1px solid #e4e4e4;padding:2px 8px;vertical-align:top"
#: values of a plot: real, NaN where there is none (a round whose metrics were not evaluated)
Series = Measured


class Html:
    """Markup that a notebook displays as HTML (``_repr_html_``); ``str()`` is the markup."""

    def __init__(self, text: str):
        self.text = str(text)

    def _repr_html_(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Html({len(self.text)} characters)"


def escape(text: object) -> str:
    """``text`` (any object, as ``str()`` writes it) with the characters HTML gives a meaning to
    (<, >, &, quotes) escaped."""
    return html.escape(str(text), quote=True)


def _is_number(value) -> bool:
    """A real number (a 0-d numeric array too), not a bool."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        return True
    return isinstance(value, (numbers.Real, np.number)) and not isinstance(value, (bool, np.bool_))


def shown(value: object, digits: Annotated[int, Range(1, 17)] = 6) -> str:
    """``value`` as text a reader reads: a number with the digits that matter
    (:func:`fedbound.readout.number`), a bool as yes/no, an array of up to :data:`MAX_ENTRIES`
    entries in full and a longer one as ``N values in [min, max]`` (NaN entries counted apart),
    a tensor as its array, anything else as ``str()``."""
    if value is None:
        return "-"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if _is_number(value):
        return number(float(value), digits)
    if hasattr(value, "detach") and hasattr(value, "cpu"):   # a torch tensor, without importing torch
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        if value.ndim == 0:
            return shown(value.item(), digits)
        flat = value.ravel()
        if flat.size <= MAX_ENTRIES:
            return "[" + ", ".join(shown(v, digits) for v in flat.tolist()) + "]"
        finite = flat[np.isfinite(flat)] if flat.dtype.kind == "f" else flat
        nan = int(np.count_nonzero(np.isnan(flat))) if flat.dtype.kind == "f" else 0
        shape = "x".join(map(str, value.shape))
        if finite.size == 0:
            return f"{shape} values, none finite"
        rest = f" ({nan} nan)" if nan else ""
        return f"{shape} values in [{number(float(finite.min()), 4)}, {number(float(finite.max()), 4)}]{rest}"
    if isinstance(value, (list, tuple)) and len(value) <= MAX_ENTRIES and all(
            _is_number(v) or isinstance(v, str) for v in value):
        inner = ", ".join(shown(v, digits) if _is_number(v) else str(v) for v in value)
        return f"({inner}{',' if len(value) == 1 else ''})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, (list, tuple)):
        return shown(np.asarray(value, dtype=float), digits) if all(_is_number(v) for v in value) \
            else f"{len(value)} entries"
    return str(value)


def cell(value: object, digits: Annotated[int, Range(1, 17)] = 6) -> str:
    """One table cell's content: :class:`Html` as it is, anything else :func:`shown` (with
    ``digits`` significant digits) and escaped."""
    return value.text if isinstance(value, Html) else escape(shown(value, digits))


def table(header: Sequence[str], rows: Sequence[Sequence[object]], *, caption: str = "",
          max_rows: Count = MAX_ROWS, digits: Annotated[int, Range(1, 17)] = 6) -> Html:
    """A table: ``header`` (text), ``rows`` of cells (:func:`cell` with ``digits`` significant
    digits: numbers right-aligned); more than ``max_rows`` rows are cut, with a last row saying how
    many were left out. The table scrolls inside its box when it is wider than the page."""
    head = "".join(f'<th style="{_CELL};text-align:left">{escape(h)}</th>' for h in header)
    body = []
    for row in list(rows)[:max_rows]:
        cells = "".join(
            f'<td style="{_CELL};text-align:{"right" if _is_number(v) else "left"}">{cell(v, digits)}</td>'
            for v in row)
        body.append(f"<tr>{cells}</tr>")
    left = len(rows) - max_rows
    if left > 0:
        body.append(f'<tr><td colspan="{max(len(header), 1)}" style="{_CELL}"><em>... and {left} more '
                    f'row{"s" if left > 1 else ""}</em></td></tr>')
    title = f"<caption style=\"text-align:left\">{escape(caption)}</caption>" if caption else ""
    return Html(f'<div style="overflow-x:auto;max-width:100%"><table style="{_TABLE}">{title}'
                f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


def fields(pairs: Sequence[tuple[str, object]]) -> Html:
    """Name / value pairs as a two-column table without a header (values through :func:`cell`)."""
    rows = "".join(f'<tr><th style="{_CELL};text-align:left;font-weight:normal;color:#555;white-space:nowrap">'
                   f'{escape(name)}</th><td style="{_CELL}">{cell(value)}</td></tr>'
                   for name, value in pairs)
    return Html(f'<div style="overflow-x:auto;max-width:100%"><table style="{_TABLE}">{rows}</table></div>')


def paragraph(text: object) -> Html:
    """``text`` (escaped; :class:`Html` as it is) as a paragraph."""
    return Html(f'<p style="margin:4px 0">{cell(text) if isinstance(text, Html) else escape(text)}</p>')


def details(summary: str, parts: Sequence[Html | str], *, expanded: bool = False) -> Html:
    """``parts`` folded under the line ``summary`` (open when ``expanded``); a str part is text."""
    inner = "".join(p.text if isinstance(p, Html) else paragraph(p).text for p in parts)
    return Html(f"<details{' open' if expanded else ''}><summary>{escape(summary)}</summary>"
                f"{inner}</details>")


def box(title: str, parts: Sequence[Html | str], *, subtitle: str = "") -> Html:
    """One object's frame: its ``title`` in bold, a ``subtitle`` beside it, then ``parts`` (a str
    part is text)."""
    head = f"<strong>{escape(title)}</strong>" + (f" <span style=\"color:#555\">{escape(subtitle)}</span>"
                                                  if subtitle else "")
    inner = "".join(p.text if isinstance(p, Html) else paragraph(p).text for p in parts)
    return Html(f'<div class="fedbound" style="{_BOX}"><div>{head}</div>{inner}</div>')


def formula(latex: str, text: str = "") -> Html:
    r"""LaTeX inside HTML, ``\( ... \)``, typeset by the notebook's MathJax; ``text`` (the same in
    plain text) is shown where the mouse rests on it."""
    tip = f' title="{escape(text)}"' if text else ""
    return Html(f"<span{tip}>\\({escape(latex)}\\)</span>")


def latex_block(parts: Sequence[str]) -> str:
    """LaTeX formulas ``parts`` as one ``_repr_latex_`` string: display math, the parts side by
    side with a space between them."""
    return "$$" + r" \qquad ".join(p for p in parts if p) + "$$"


def figure(fig: object, alt: str = "figure") -> Html:
    """A matplotlib figure as an inline PNG image (base64), closed afterwards."""
    if not callable(getattr(fig, "savefig", None)):
        raise InputTypeError(f"fig must be a matplotlib figure, got {type(fig).__name__}")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return Html(f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}"/>')


def line_figure(x: Series, series: Mapping[str, Series], *, xlabel: str = "", ylabel: str = "",
                bands: Mapping[str, tuple[Series, Series]] | None = None, title: str = ""):
    """A matplotlib figure (not pyplot's: no global state, no GUI backend) with a line of each of
    ``series`` (name -> values, one per entry of ``x``) and optional shaded ``bands`` (name ->
    (low, high)): non-finite points are left out (a round whose metrics were not evaluated), the y
    axis is logarithmic where the plotted values are positive and span a decade or more
    (:func:`fedbound.readout.log_axis`). matplotlib is imported here, on first use."""
    from matplotlib.figure import Figure

    xs = np.asarray(x, dtype=float)
    fig = Figure(figsize=(5.0, 2.8), dpi=90)
    ax = fig.add_subplot()
    values = []
    for name, ys in series.items():
        ys = np.broadcast_to(np.asarray(ys, dtype=float), xs.shape)
        ok = np.isfinite(ys) & np.isfinite(xs)
        if not np.any(ok):
            continue
        ax.plot(xs[ok], ys[ok], label=name, marker="." if np.count_nonzero(ok) < 30 else None)
        values.append(ys[ok])
        if bands and name in bands:
            low, high = (np.broadcast_to(np.asarray(b, dtype=float), xs.shape) for b in bands[name])
            fine = ok & np.isfinite(low) & np.isfinite(high)
            ax.fill_between(xs[fine], low[fine], high[fine], alpha=0.25)
            values += [high[fine], low[fine][low[fine] > 0]]
    if values and log_axis(np.concatenate(values)):
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=10)
    if len(series) > 1:
        ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def plot(x: Series, series: Mapping[str, Series], *, xlabel: str = "", ylabel: str = "",
         bands: Mapping[str, tuple[Series, Series]] | None = None, title: str = "") -> Html:
    """:func:`line_figure` as an inline PNG (:func:`figure`)."""
    return figure(line_figure(x, series, xlabel=xlabel, ylabel=ylabel, bands=bands, title=title),
                  alt=title or ylabel or "plot")


def sample_rows(length: NonNegativeInt, count: Annotated[int, Range(2)] = 8) -> list[int]:
    """At most ``count`` indices of a series of ``length`` entries for a small table: the first,
    the last and log-spaced ones between (rounds 0, 1, 2, 5, 13, ... of a run)."""
    if length <= count:
        return list(range(length))
    inner = np.unique(np.round(np.geomspace(1, length - 1, count - 1)).astype(int))
    return sorted({0, length - 1, *inner.tolist()})


def settings(*items: object, **named: object) -> str:
    """``item, key=value, ...`` with values as :func:`shown` writes them (strings quoted; booleans
    and None as Python writes them): the inside of a :func:`brief` repr."""
    def one(v):
        return repr(v) if v is None or isinstance(v, (str, bool, np.bool_)) else shown(v)
    return ", ".join([one(v) for v in items] + [f"{k}={one(v)}" for k, v in named.items()])


def brief(name: str, *items: object, **named: object) -> str:
    """A short ``__repr__``: ``Name(item, key=value, ...)`` (:func:`settings`), cut at
    :data:`REPR_LIMIT` characters."""
    return clip(f"{name}({settings(*items, **named)})")


def clip(text: str, limit: Annotated[int, Range(8)] = REPR_LIMIT) -> str:
    """``text`` cut to at most ``limit`` characters, its last character (a closing bracket) kept
    after `` ...``."""
    return text if len(text) <= limit else text[:limit - 5] + " ..." + text[-1]


__all__ = ["Html", "escape", "shown", "cell", "table", "fields", "paragraph", "details", "box", "formula",
           "latex_block", "figure", "line_figure", "plot", "sample_rows", "settings", "brief", "clip", "REPR_LIMIT", "MAX_ROWS", "MAX_ENTRIES"]
