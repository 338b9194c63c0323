"""Build the executed notebooks from their percent-format sources.

Each reproduction is written once, as ``notebooks/<name>.py`` with ``# %%`` cell separators
(``# %% [markdown]`` for text cells). This script turns a source into ``<name>.ipynb``, executes it
with the current interpreter's kernel and stores the outputs (plots included)::

    .venv/bin/python notebooks/build.py                  # every notebook, full CPU scale
    .venv/bin/python notebooks/build.py fig08 --scale small

The scale reaches the notebook as the environment variable ``FEDBOUND_SCALE`` ("full" or "small");
CI executes every source at "small" scale (tests/test_notebooks.py) without writing anything back.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys

import nbformat
from nbclient import NotebookClient

HERE = pathlib.Path(__file__).resolve().parent


def sources() -> list[pathlib.Path]:
    return sorted(p for p in HERE.glob("*.py") if p.name != "build.py")


def to_notebook(source: pathlib.Path) -> nbformat.NotebookNode:
    """Split a percent-format script into notebook cells."""
    cells, kind, lines = [], "code", []

    def flush():
        text = "\n".join(lines).strip("\n")
        if text:
            if kind == "markdown":
                text = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#")
                                 for line in text.splitlines())
                cells.append(nbformat.v4.new_markdown_cell(text))
            else:
                cells.append(nbformat.v4.new_code_cell(text))

    for line in source.read_text().splitlines():
        if line.startswith("# %%"):
            flush()
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        else:
            lines.append(line)
    flush()
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def execute(source: pathlib.Path, scale: str, timeout: int = 1800,
            cwd: pathlib.Path = HERE) -> nbformat.NotebookNode:
    """Execute a source as a notebook in ``cwd`` and return it with its outputs."""
    nb = to_notebook(source)
    os.environ["FEDBOUND_SCALE"] = scale
    os.environ.pop("MPLBACKEND", None)  # the kernel's inline backend embeds the plots
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="prefixes of notebook names (default: all)")
    parser.add_argument("--scale", choices=["full", "small"], default="full")
    args = parser.parse_args(argv)
    chosen = [s for s in sources() if not args.names or any(s.stem.startswith(n) for n in args.names)]
    for source in chosen:
        print(f"executing {source.name} at {args.scale} scale", file=sys.stderr)
        nbformat.write(execute(source, args.scale), source.with_suffix(".ipynb"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
