"""The documentation site (issue 33 item 4: "a test that builds the documentation with warnings as
errors and runs its code examples and the README's").

The site is built once, as ``make docs`` builds it (Sphinx, ``-W``), into a temporary folder. The
build itself runs every example: MyST-NB executes each ``{code-cell}`` of the hand-written pages in
a Jupyter kernel (an error fails the build), and each ``fedbound ...`` line of a ``{fedbound-cli}``
block runs while its page is read (a non-zero exit status or a warning is a build warning, an error
under ``-W``: docs/_ext/fedbound_docs.py). The tests below then check that nothing escaped: every
fenced block of a page is of an executed kind or named here with the test that runs its lines, the
executed cells have their outputs in the HTML, every registered paper, result, command, flag, public
name and notebook has its place on the site, and every README block is run by
tests/test_readme_examples.py or named with the test that runs it.

The build takes 2-4 minutes on 2 busy cores (about 80 s of CPU: the kernels of 13 pages, the
audits of the papers at 1000 samples per claim unless fedbound's cache has them, the CLI examples),
hence ``slow``; it still runs in CI.
"""
from __future__ import annotations

import html
import importlib
import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: folders of pages generated while building (git ignores them)
GENERATED = ("papers", "api", "gallery", "_build")
#: the pages written by hand
PAGES = sorted(p for p in DOCS.rglob("*.md") if p.relative_to(DOCS).parts[0] not in GENERATED)
FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```", re.S | re.M)

#: lines of the pages' plain (not executed) blocks, each with the test that runs it instead
NOT_RUN_HERE = {
    "make demo": "tests/cli/test_demo_cli.py runs `fedbound demo`",
    "make test": "the test suite itself",
    "make docs": "this file builds the site as `make docs` does",
    "pip install torch==2.13.0": "the Makefile's setup, which every `make` target runs",
    "pip install -e .": "the Makefile's setup, which every `make` target runs",
    ".venv/bin/python -m sphinx -W -b html docs docs/_build/html": "this file (the same build)",
    '[project.entry-points."fedbound.plugins"]': "tests/extend/test_plugin_package.py installs a "
                                                 "plugin package with this entry point",
    'nesterov = "fedbound_nesterov"': "tests/extend/test_plugin_package.py (the same)",
}
#: README lines that are neither `fedbound` commands nor JSON, with the test that runs each
README_NOT_RUN_HERE = {
    "make demo": "tests/cli/test_demo_cli.py runs `fedbound demo`",
    "make test": "the test suite itself",
    "pip install -e mine": "tests/extend/test_plugin_package.py pip-installs the generated plugin "
                           "(test_readme_examples puts it on PYTHONPATH and FEDBOUND_PLUGINS)",
    "cd mine && pytest tests": "tests/extend/test_plugin_package.py::test_the_generated_tests_pass",
}


def _text(path: Path) -> str:
    """The visible text of an HTML page (tags removed, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))


def _lines(block: str) -> list[str]:
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def build_site(out: Path) -> Path:
    """The site built into ``out`` with warnings as errors."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                                     os.environ.get("PYTHONPATH")]))}
    start = time.perf_counter()
    build = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
                            str(DOCS), str(out)], capture_output=True, text=True, env=env,
                           timeout=1800)
    seconds = time.perf_counter() - start
    log = f"{build.stdout[-4000:]}\n{build.stderr[-8000:]}"
    assert build.returncode == 0, f"the site does not build with -W ({seconds:.0f} s):\n{log}"
    print(f"documentation built in {seconds:.0f} s")
    return out


@pytest.mark.slow
def test_the_site(tmp_path):
    """One test, so that the site is built once (pytest-xdist would build it once per worker for
    a fixture shared by several tests): the build, then each check below on its pages."""
    out = build_site(tmp_path / "html")
    for check in (every_example_of_the_pages_runs, one_page_per_job_and_the_guide,
                  one_page_per_paper_with_its_citation_results_and_verdicts,
                  the_cli_reference_has_every_command_and_flag,
                  the_api_reference_has_every_public_name, the_gallery_has_every_notebook):
        check(out)


def every_example_of_the_pages_runs(out: Path) -> None:
    """Each fenced block of a hand-written page is executed while building (a ``{code-cell}`` by
    MyST-NB, a ``{fedbound-cli}`` by the extension) or each of its lines is in NOT_RUN_HERE; the
    executed ones show in the HTML: every cell, the output of every cell that prints, every
    command line with what it printed; no output warns of a deprecated spelling (a command's
    warning is a build error already, a cell's only prints)."""
    kinds = {}
    for page in PAGES:
        source = page.read_text(encoding="utf-8")
        built = out / page.relative_to(DOCS).with_suffix(".html")
        cells = clis = 0
        for language, block in FENCE.findall(source):
            kinds[language] = kinds.get(language, 0) + 1
            if language == "{code-cell}":
                cells += 1
            elif language == "{fedbound-cli}":
                clis += 1
                text = _text(built)
                for line in _lines(block):
                    if line.startswith("fedbound "):
                        assert f"$ {line}" in text, f"{page.name}: `{line}` is not on the page"
            elif language not in ("{toctree}", "{fedbound-cli-reference}"):
                unexplained = [line for line in _lines(block) if line not in NOT_RUN_HERE]
                assert not unexplained, f"{page.name}: a {language or 'plain'} block that is not " \
                                        f"run: {unexplained}"
        assert "is deprecated" not in _text(built), \
            f"{page.name}: an example uses a deprecated spelling (its output warns)"
        if cells:
            page_html = built.read_text(encoding="utf-8")
            printing = sum("print(" in b for lang, b in FENCE.findall(source) if lang == "{code-cell}")
            assert page_html.count('class="cell docutils container"') == cells, page.name
            assert page_html.count('class="cell_output docutils container"') >= printing, \
                f"{page.name}: a cell that prints shows no output (was the page executed?)"
    assert kinds.get("{code-cell}", 0) >= 30 and kinds.get("{fedbound-cli}", 0) >= 15, kinds


def one_page_per_job_and_the_guide(out: Path) -> None:
    """A page per job of the issue, each with its Python entry and its command line; the guide
    writes each piece of an extension as code."""
    jobs = {"bound": "evaluate", "stepsize": "max_step", "rounds": "rounds_to_eps", "plan": "plan(",
            "run": "run(", "audit": "run_audit", "verify": "check.run", "pep": "certify(",
            "sweep": "sweep.evaluate", "testing": "assert_matches_theory"}
    for page, call in jobs.items():      # each with its command line, but testing (pytest's)
        source = (DOCS / "jobs" / f"{page}.md").read_text(encoding="utf-8")
        assert call in source and ("{fedbound-cli}" in source or page == "testing"), page
        assert (out / "jobs" / f"{page}.html").exists()
    guide = (DOCS / "extending.md").read_text(encoding="utf-8")
    for piece in ("register_algorithm(", "register_result(", "def constants(task, network",
                  "Claim(", "register_paper(", "register_check(", "register_pep_method(",
                  "assert_matches_theory("):
        assert piece in guide, piece
    assert "worst case" in _text(out / "extending.html")


def one_page_per_paper_with_its_citation_results_and_verdicts(out: Path) -> None:
    """Each registered paper's page: its citation, each of its results (id and title) and the
    audit's verdicts."""
    from fedbound.papers import PAPERS
    from fedbound.theory import results

    for paper in PAPERS:
        text = _text(out / "papers" / f"{paper.name}.html")
        if paper.citation is not None:
            c = paper.citation
            assert c.title in text and str(c.year) in text and all(a in text for a in c.authors)
            assert not c.arxiv or f"arXiv:{c.arxiv}" in text
        for result in results():
            if result.id.split(".")[0] == paper.name:
                assert result.id in text and result.title in text, (paper.name, result.id)
        assert re.search(r"Audit: \d+ claims, \d+ hold, \d+ fail", text), paper.name
        for claim in ("holds", "fails"):
            assert claim in text or paper.name == "pep"


def the_cli_reference_has_every_command_and_flag(out: Path) -> None:
    """Every command and subcommand, and every flag that --help shows, on the reference page."""
    import argparse

    from fedbound.cli.main import _parsers, build_parser

    text = _text(out / "cli.html")
    for parser in _parsers(build_parser([])):
        assert parser.prog in text, parser.prog
        for action in parser._actions:
            if action.help != argparse.SUPPRESS and not isinstance(action, argparse._HelpAction):
                for flag in action.option_strings:
                    assert flag in text, (parser.prog, flag)


def the_api_reference_has_every_public_name(out: Path) -> None:
    """Every name of each package's ``__all__`` documented on its page, or linked from it."""
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from fedbound_docs import API_MODULES
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    for name in API_MODULES:
        page = (out / "api" / f"{name}.html").read_text(encoding="utf-8")
        for member in getattr(importlib.import_module(name), "__all__", ()):
            assert f'id="{name}.{member}"' in page or f">{member}<" in page, (name, member)


def the_gallery_has_every_notebook(out: Path) -> None:
    """Every executed notebook of notebooks/ has its page."""
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    for nb in notebooks:
        assert (out / "gallery" / f"{nb.stem}.html").exists(), nb.name


def test_every_readme_block_is_run():
    """Every fenced block of the README is run by tests/test_readme_examples.py (its `fedbound`
    command lines and JSON files; its Python blocks once that file runs them, issue 33 item 2) or
    each of its lines is in README_NOT_RUN_HERE with the test that runs it."""
    spec = importlib.util.spec_from_file_location("readme_examples",
                                                  ROOT / "tests" / "test_readme_examples.py")
    readme = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(readme)
    blocks = FENCE.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    assert {language for language, _ in blocks} <= {"bash", "json", "python"}
    assert sum(language == "json" for language, _ in blocks) == len(readme.JSON_BLOCKS)
    for language, block in blocks:
        if language == "bash":
            for line in _lines(block):
                assert line in readme.COMMANDS or line in README_NOT_RUN_HERE, line
    python = [block for language, block in blocks if language == "python"]
    if python and not hasattr(readme, "PYTHON_BLOCKS"):
        pytest.skip(f"the README's {len(python)} Python block(s) are run by "
                    "test_readme_examples.test_readme_python_runs of issue 33 item 2 (another "
                    "branch), not on this one")
    assert [b.strip() for b in python] == [b.strip() for b in getattr(readme, "PYTHON_BLOCKS", [])]
