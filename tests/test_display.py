"""fedbound.display (issue 33 item 3): the building blocks every notebook display is made of. User text
is escaped, tables are well-formed HTML that cut long row lists and keep the digits that matter
(fedbound.readout), plots are inline PNGs on a log axis where the values span decades, reprs are
short, and importing the module loads no matplotlib."""
import html
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

from fedbound import display
from fedbound.errors import FedboundError
from fedbound.readout import number
from html_checks import parse_html, png_images

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


@given(TEXT)
def test_escaped_text_reads_back_as_itself_and_opens_no_element(text):
    escaped = display.escape(text)
    assert "<" not in escaped and ">" not in escaped and html.unescape(escaped) == text
    shown, _ = parse_html(display.box(text, [text]).text)
    assert " ".join(text.split()) in shown


@given(st.lists(st.lists(st.one_of(TEXT, st.floats(allow_nan=False), st.integers()), min_size=2, max_size=2),
                max_size=60))
def test_a_table_is_well_formed_and_cut_with_the_count_of_the_rest(rows):
    markup = display.table(["a", "b"], rows, max_rows=10).text
    text, _ = parse_html(markup)
    assert markup.count("<tr>") == 1 + min(len(rows), 10) + (len(rows) > 10)
    if len(rows) > 10:
        assert f"... and {len(rows) - 10} more row" in text


def test_numbers_keep_the_digits_that_matter():
    assert display.shown(0.99999995) == "1 - 5.0e-08" == number(0.99999995)
    markup = display.table(["rate"], [[0.99999995]]).text
    assert "1 - 5.0e-08" in markup and 'text-align:right' in markup
    assert display.shown(np.array([0.5, 2.0])) == "[0.5, 2]"
    assert display.shown(np.r_[np.logspace(-8, 0, 9), np.nan]) == "10 values in [1e-08, 1] (1 nan)"
    assert display.shown(True) == "yes" and display.shown(None) == "-"


def test_html_cells_are_kept_and_text_cells_escaped():
    markup = display.table(["x"], [[display.Html("<b>kept</b>")], ["<b>escaped</b>"]]).text
    assert "<b>kept</b>" in markup and "&lt;b&gt;escaped&lt;/b&gt;" in markup


def test_formula_escapes_latex_for_html_and_keeps_it_for_mathjax():
    markup = display.formula(r"a < \frac{1}{2}", "a < 1/2").text
    assert markup == r'<span title="a &lt; 1/2">\(a &lt; \frac{1}{2}\)</span>'
    assert html.unescape(parse_html(markup)[0]) == r"\(a < \frac{1}{2}\)"


def test_a_plot_spanning_decades_is_on_a_log_axis_and_inline():
    x = np.arange(50.0)
    fig = display.line_figure(x, {"gap": 10.0 ** -(x / 10)}, bands={"gap": (10.0 ** -(x / 10 + 0.1), 10.0 ** -(x / 10 - 0.1))})
    assert fig.axes[0].get_yscale() == "log"
    assert display.line_figure(x, {"flat": 1.0 + x / 100}).axes[0].get_yscale() == "linear"
    # a round that was not evaluated (nan) is left out, not drawn as 0
    line = display.line_figure(x, {"gap": np.where(x % 5 == 0, 10.0 ** -x, np.nan)}).axes[0].lines[0]
    assert len(line.get_xdata()) == 10
    _, images = parse_html(display.plot(x, {"gap": 10.0 ** -(x / 10)}, xlabel="round").text)
    assert len(png_images(images)) == 1


def test_figure_refuses_what_is_no_figure():
    with pytest.raises(FedboundError, match="fig must be a matplotlib figure"):
        display.figure(object())


def test_sample_rows_keep_the_ends_and_log_spaced_rows():
    assert display.sample_rows(5) == [0, 1, 2, 3, 4]
    rows = display.sample_rows(1001)
    assert rows[0] == 0 and rows[-1] == 1000 and len(rows) <= 8 and rows == sorted(set(rows))


@given(st.lists(TEXT, max_size=30), st.dictionaries(st.from_regex(r"[a-z]{1,8}", fullmatch=True),
                                                   st.floats(allow_nan=False), max_size=20))
def test_brief_reprs_are_short(items, named):
    text = display.brief("Thing", *items, **named)
    assert len(text) <= display.REPR_LIMIT and text.startswith("Thing(") and text.endswith(")")


def test_importing_display_loads_no_matplotlib():
    code = "import sys, fedbound.display; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
