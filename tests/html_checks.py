"""Checks of what a notebook shows (issue 33 item 3), shared by tests/test_display.py and
tests/test_notebook_display.py: HTML that parses with html.parser into a well-formed tree (every
element closed in order, no script), LaTeX that is balanced and read by matplotlib's mathtext."""
from __future__ import annotations

import base64
import re
from html.parser import HTMLParser

from matplotlib.mathtext import MathTextParser

#: elements without an end tag
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
PNG = b"\x89PNG\r\n\x1a\n"
_MATHTEXT = MathTextParser("path")


class _Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.text, self.images = [], [], [], []

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.errors.append("a <script> element")
        if tag == "img":
            self.images.append(dict(attrs).get("src", ""))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):   # <img .../>: opens and closes itself
        if tag == "img":
            self.images.append(dict(attrs).get("src", ""))

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse_html(markup: str) -> tuple[str, list[str]]:
    """The visible text of ``markup`` and the sources of its images; AssertionError unless it is a
    well-formed tree of elements (each closed, in order) without a script."""
    assert isinstance(markup, str) and markup.strip(), "no markup"
    tree = _Tree()
    tree.feed(markup)
    tree.close()
    assert not tree.errors, tree.errors[:3]
    assert not tree.stack, f"unclosed elements: {tree.stack}"
    return " ".join("".join(tree.text).split()), tree.images


def png_images(sources: list[str]) -> list[bytes]:
    """The inline PNG images among ``sources`` (data: URLs), decoded; each must be a PNG."""
    out = []
    for src in sources:
        assert src.startswith("data:image/png;base64,"), src[:40]
        data = base64.b64decode(src.split(",", 1)[1], validate=True)
        assert data.startswith(PNG)
        out.append(data)
    return out


def balanced(latex: str) -> bool:
    """Braces balanced (escaped ones aside) and every \\left closed by a \\right."""
    depth = 0
    for char in re.sub(r"\\[{}]", "", latex):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0 and len(re.findall(r"\\left\b", latex)) == len(re.findall(r"\\right\b", latex))


def check_latex(latex: str, render: bool = True) -> list[str]:
    """The formulas of a ``_repr_latex_`` string (display math, ``$$ ... $$``, the formulas
    separated by \\qquad); each balanced and, with ``render``, read by mathtext unless it holds an
    environment (a matrix, cases: MathJax reads those, mathtext does not)."""
    assert latex.startswith("$$") and latex.endswith("$$") and len(latex) > 4, latex[:80]
    parts = latex[2:-2].split(r" \qquad ")
    for part in parts:
        assert part and balanced(part), part[:200]
        if render and r"\begin" not in part:
            _MATHTEXT.parse(f"${part}$")
    return parts
