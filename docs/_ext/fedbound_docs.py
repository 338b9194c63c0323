"""The Sphinx extension of fedbound's documentation: what the site shows about fedbound is read from
fedbound at build time, so that a renamed flag, a new result or a changed verdict reaches the pages
without editing them.

* Generated pages (:func:`generate`, on ``builder-inited``, into folders that git ignores): one page
  per registered paper (``papers/``), one API page per public package (``api/``), and the gallery
  of executed notebooks (``gallery/``, copies of ``notebooks/*.ipynb``).
* ``.. fedbound-paper:: NAME``: a paper's citation, and each of its results with its statement,
  provenance, variants in LaTeX, known issues and the audit verdicts of its claims (the audit run
  at the scale of ``fedbound_audit`` in conf.py, its reports kept in fedbound's on-disk cache,
  :mod:`fedbound.cache`, keyed by the source: a changed claim is audited again).
* ``.. fedbound-cli-reference::``: every command, subcommand and flag of ``fedbound`` with its help,
  default and choices, walked from the parser that the command line itself builds.
* ``.. fedbound-cli::``: runs each ``fedbound ...`` line of its content while the page is built
  (:func:`fedbound.cli.main.main`, in one temporary folder per page, so that a command reads what
  an earlier one wrote) and shows the command with its output. A command that exits with another
  status than ``:returncode:`` (0 by default) or prints a warning (a deprecated spelling) is a
  build warning, an error under ``-W``.

Pages written by hand hold Python as ``{code-cell}`` blocks that myst-nb executes while building
(conf.py); tests/test_docs.py builds the site with ``-W`` and checks that every example of a page
is one of the executed kinds.
"""
from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import os
import re
import shlex
import shutil
import tempfile
import types
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)
#: a line of a ``fedbound-cli`` block that writes a file: ``cat > FILE <<'EOF'`` ... ``EOF``
HEREDOC = re.compile(r"cat > (\S+) <<'EOF'")

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
#: the folders of generated pages (git ignores them; every build writes them again)
GENERATED = ("papers", "api", "gallery")
#: plain values among the public names: listed by name, without a docstring of their own
VALUES = (bool, int, float, str, bytes, tuple, list, dict, set, frozenset, type(None))
#: the packages and ground-floor modules that get an API page, in the order of the floors
API_MODULES = ("fedbound", "fedbound.errors", "fedbound.registry", "fedbound.papers",
               "fedbound.network", "fedbound.tasks", "fedbound.theory", "fedbound.algorithms",
               "fedbound.verify", "fedbound.control", "fedbound.pep", "fedbound.sweep",
               "fedbound.testing", "fedbound.extend")


# ---- generated pages ------------------------------------------------------------------------------
def _write(path: Path, text: str) -> None:
    """Write ``text`` unless the file holds it already (an unchanged page is not rebuilt)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _escape(text: str) -> str:
    """``text`` with its RST markup characters escaped."""
    return re.sub(r"([\\`*_|<>\[\]])", r"\\\1", text)


def _title(text: str) -> str:
    """An RST section title: ``text`` escaped, underlined."""
    text = _escape(text)
    return f"{text}\n{'=' * len(text)}\n"


def _paper_pages(folder: Path) -> None:
    from fedbound.papers import PAPERS

    papers = sorted(PAPERS, key=lambda p: p.name)
    index = [_title("Papers"),
             "Each paper fedbound encodes: its citation, every result with its statement, "
             "variants and known issues, and the verdicts of ``fedbound audit`` on its claims. "
             "``fedbound list papers`` lists the same registry "
             "(:data:`fedbound.papers.PAPERS`); a plugin's paper gets a page too.\n",
             ".. toctree::\n   :maxdepth: 1\n   :hidden:\n"]
    index += [f"   {p.name}" for p in papers]
    index.append("")
    for p in papers:
        c = p.citation
        cited = "" if c is None else _escape(f" — {', '.join(c.authors)} ({c.year}, {c.venue})") + (
            f", `arXiv:{c.arxiv} <{c.url}>`__" if c.arxiv else "")
        index.append(f"* :doc:`{p.name}`{cited}. Audited: {_escape(p.summary)}.")
    _write(folder / "index.rst", "\n".join(index) + "\n")
    for p in papers:
        heading = f"{p.name}: {p.citation.title}" if p.citation else f"{p.name}: {p.summary}"
        _write(folder / f"{p.name}.rst", f"{_title(heading)}\n.. fedbound-paper:: {p.name}\n")


def _api_pages(folder: Path) -> None:
    index = [_title("API reference"),
             "The public names of each package (its ``__all__``), with their docstrings. The "
             "packages are listed floor by floor: each imports only the floors above it in this "
             "list.\n", ".. toctree::\n   :maxdepth: 1\n"]
    index += [f"   {name}" for name in API_MODULES]
    _write(folder / "index.rst", "\n".join(index) + "\n")
    first: dict[int, str] = {}      # id of a documented object -> where it is documented
    for name in API_MODULES:
        module = importlib.import_module(name)
        public = getattr(module, "__all__", None) or [
            n for n, v in vars(module).items() if not n.startswith("_")
            and getattr(v, "__module__", None) == name]
        again = {}
        for member in public:
            obj = getattr(module, member)
            if isinstance(obj, VALUES):
                continue        # values are not identities: documented wherever they are listed
            if id(obj) in first:
                again[member] = first[id(obj)]
            else:
                first[id(obj)] = f"{name}.{member}"
        # one directive per public name (autodoc's own member discovery reads dir(), which does not
        # list the names a package loads on first use, PEP 562)
        text = f"{_title(name)}\n.. automodule:: {name}\n"
        modules = [m for m in public if isinstance(getattr(module, m), types.ModuleType)]
        values = []
        for member in public:
            if member in again or member in modules:
                continue
            obj = getattr(module, member)
            if inspect.isclass(obj):
                text += f"\n.. autoclass:: {name}.{member}\n   :members:\n"
            elif inspect.isroutine(obj):
                text += f"\n.. autofunction:: {name}.{member}\n"
            elif isinstance(obj, VALUES):
                values.append(member)
            else:
                text += f"\n.. autodata:: {name}.{member}\n   :no-value:\n"
        if values:      # a dict or a number has no docstring of its own (autodoc would show dict's)
            text += "\nValues public here (their meaning is in the module's source): " + ", ".join(
                f"``{m}``" for m in values) + ".\n"
        if modules:
            text += "\nModules public here: " + ", ".join(
                f":py:mod:`{m} <{getattr(module, m).__name__}>`" for m in modules) + ".\n"
        if again:
            text += "\nAlso public here, documented where they are first listed: " + ", ".join(
                f":py:obj:`{m} <{where}>`" for m, where in again.items()) + ".\n"
        _write(folder / f"{name}.rst", text)


def _gallery(folder: Path) -> None:
    sources = sorted((ROOT / "notebooks").glob("*.ipynb"))
    index = [_title("Gallery"),
             "The notebooks of ``notebooks/``, executed with their plots: reproductions of the "
             "papers' figures and a user's own algorithm and theorem. Each is written once as a "
             "percent-format ``.py`` source and executed into the ``.ipynb`` shown here by "
             "``notebooks/build.py``; the test suite executes every source at small scale "
             "(``tests/test_notebooks.py``).\n",
             ".. toctree::\n   :maxdepth: 1\n"]
    index += [f"   {nb.stem}" for nb in sources]
    _write(folder / "index.rst", "\n".join(index) + "\n")
    for nb in sources:
        target = folder / nb.name
        if not target.exists() or target.read_bytes() != nb.read_bytes():
            shutil.copyfile(nb, target)
    for stale in folder.glob("*.ipynb"):
        if not (ROOT / "notebooks" / stale.name).exists():
            stale.unlink()


def generate(app) -> None:
    """Write the generated pages into the source folder (module doc)."""
    src = Path(app.srcdir)
    _paper_pages(src / "papers")
    _api_pages(src / "api")
    _gallery(src / "gallery")


def outdated(app, env, added, changed, removed):
    """Every page is read again when fedbound's source changed since the last build (the pages
    show what fedbound computes: a cached page would show the old numbers)."""
    from fedbound import cache

    fingerprint = cache.fingerprint()
    if getattr(env, "fedbound_fingerprint", None) == fingerprint:
        return []
    env.fedbound_fingerprint = fingerprint
    return sorted(env.found_docs - set(added) - set(changed) - set(removed))


# ---- small node builders --------------------------------------------------------------------------
def _para(*parts) -> nodes.paragraph:
    """A paragraph of text and ``("code", text)`` / ``("strong", text)`` pieces."""
    p = nodes.paragraph()
    for part in parts:
        if isinstance(part, tuple):
            kind, text = part
            p += nodes.literal(text, text) if kind == "code" else nodes.strong(text, text)
        else:
            p += nodes.Text(part)
    return p


def _rst_text(text: str) -> nodes.paragraph:
    """A paragraph of plain text whose ````literal```` spans (the docstrings' and help texts'
    markup) are shown as code."""
    parts = re.split(r"``(.+?)``", text)
    return _para(*((("code", part) if i % 2 else part) for i, part in enumerate(parts) if part))


def _fields(rows) -> nodes.field_list:
    out = nodes.field_list()
    for name, value in rows:
        body = value if isinstance(value, nodes.Node) else _para(str(value))
        out += nodes.field("", nodes.field_name(name, name), nodes.field_body("", body))
    return out


def _table(header, rows, widths) -> nodes.table:
    table = nodes.table(classes=["fedbound-table"])
    group = nodes.tgroup(cols=len(header))
    table += group
    for w in widths:
        group += nodes.colspec(colwidth=w)
    head = nodes.thead()
    group += head
    head += nodes.row("", *(nodes.entry("", _para(h)) for h in header))
    body = nodes.tbody()
    group += body
    for row in rows:
        body += nodes.row("", *(nodes.entry("", c if isinstance(c, nodes.Node) else _para(str(c)))
                                for c in row))
    return table


def _section(docname: str, key: str, title, *children) -> nodes.section:
    section = nodes.section(ids=[nodes.make_id(f"{docname}-{key}")], names=[nodes.fully_normalize_name(key)])
    heading = nodes.title()
    for part in title if isinstance(title, (list, tuple)) else [title]:
        heading += part if isinstance(part, nodes.Node) else nodes.Text(part)
    section += heading
    for child in children:
        section += child
    return section


def _math(latex: str, docname: str) -> nodes.math_block:
    return nodes.math_block(latex, latex, docname=docname, number=None, label=None, nowrap=False)


# ---- the paper pages ------------------------------------------------------------------------------
def audit_reports(paper: str, samples: int, iterations: int, seed: int) -> list[dict]:
    """The audit of ``paper`` (:func:`fedbound.theory.audit.run_audit`) as JSON rows, from
    fedbound's on-disk cache when this source was audited at this scale before."""
    from fedbound import cache
    from fedbound.jsonable import jsonable
    from fedbound.theory.audit import run_audit

    key = cache.key_of(paper, str(samples), str(iterations), str(seed))
    rows = cache.read_json("docs-audit", key)
    if rows is None:
        logger.info(f"auditing {paper} ({samples} samples per claim, {iterations} search iterations)")
        rows = [jsonable(r.to_dict(), nonfinite="named")
                for r in run_audit(paper, samples=samples, seed=seed, iterations=iterations)]
        cache.store_json("docs-audit", key, rows)
    return rows


def _ratio(value) -> str:
    """The worst lhs/rhs, 3 significant digits (non-finite values come named, as text)."""
    return f"{value:.3g}" if isinstance(value, (int, float)) else str(value)


def _claims_table(rows) -> nodes.table:
    return _table(("claim", "variant", "kind", "verdict", "evidence", "severity", "worst lhs/rhs",
                   "what it says"),
                  [(_para(("code", r["claim"])), r["variant"], r["kind"],
                    _para(("strong", r["verdict"])), r.get("evidence", ""), r["severity"],
                    _ratio(r.get("violation_ratio")), r["statement"])
                   for r in rows], (15, 8, 8, 6, 8, 7, 7, 41))


class PaperDirective(SphinxDirective):
    """``.. fedbound-paper:: NAME`` (module doc)."""

    required_arguments = 1

    def run(self):
        from fedbound.papers import PAPERS
        from fedbound.theory import results

        name = self.arguments[0]
        paper = PAPERS.get(name)
        scale = self.config.fedbound_audit
        reports = audit_reports(name, **scale)
        docname = self.env.docname
        out = []
        c = paper.citation
        rows = []
        if c is not None:
            rows += [("Title", c.title), ("Authors", ", ".join(c.authors)), ("Year", c.year),
                     ("Venue", c.venue)]
            if c.arxiv:
                link = nodes.reference(f"arXiv:{c.arxiv}", f"arXiv:{c.arxiv}", refuri=c.url)
                rows.append(("arXiv", nodes.paragraph("", "", link)))
        rows += [("Audited", paper.summary)]
        if paper.seed:
            rows.append(("Seed text", _para(("code", paper.seed))))
        if paper.adapter:
            rows.append(("Adapter", _para(("code", paper.adapter), " maps a run to the constants")))
        rows.append(("Registered by", _para(("code", PAPERS.origin(name)))))
        out.append(_fields(rows))

        from fedbound.theory.certify.evidence import counts as evidence_counts

        counts: dict[str, int] = {}
        for r in reports:
            counts[r["severity"]] = counts.get(r["severity"], 0) + 1
        failing = sum(r["verdict"] == "fails" for r in reports)
        backed = evidence_counts([r.get("evidence", "") for r in reports])
        out.append(_para(
            f"Audit: {len(reports)} claims, {len(reports) - failing} hold, {failing} fail (by "
            "severity: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + "). "
            "What backs the verdicts: " + ", ".join(f"{v} {k}" for k, v in backed.items() if v) + ". "
            f"Computed while this page was built, at {scale['samples']} samples per claim and "
            f"{scale['iterations']} adversarial search iterations (seed {scale['seed']}); ",
            ("code", f"fedbound audit {name}"),
            " runs the full scale and prints counterexamples. Evidence: 'proved' on the whole "
            "admissible domain (a decision procedure), 'proved-on-box' on the sampled box (interval "
            "branch and bound), 'refuted' by a counterexample checked in exact arithmetic, "
            "'not-refuted' when only sampled, 'statistical' for fitted orders and Monte-Carlo means, "
            "'numeric' for solver outputs and floats within a tolerance."))

        mine = [r for r in results() if r.id.split(".")[0] == name]
        by_result: dict[str, list] = {}
        for r in reports:
            by_result.setdefault(r["result_id"], []).append(r)
        for result in mine:
            out.append(self._result(result, by_result.pop(result.id, []), docname))
        if by_result:
            others = [r for rows_ in by_result.values() for r in rows_]
            out.append(_section(docname, f"{name}-other-claims", "Claims on results of other papers",
                                _para("Claims of this audit about results registered elsewhere "
                                      "(", ("code", ", ".join(sorted(by_result))), ")."),
                                _claims_table(others)))
        return out

    def _result(self, result, claims, docname):
        body = [_para(result.statement)]
        rows = [("Source", str(result.provenance))]
        if result.assumptions:
            rows.append(("Assumptions", "; ".join(result.assumptions)))
        rows.append(("Constants", ", ".join(result.all_constants())))
        body.append(_fields(rows))
        variants = nodes.bullet_list()
        for vname in result.variants:
            variant = result.variant(vname)
            item = nodes.list_item("", _para(("strong", vname), f": {variant.description}"
                                             if variant.description else ""))
            latex = result.latex(vname)
            if latex.strip():
                item += _math(latex, docname)
            variants += item
        body += [_para(("strong", "Variants"), " (", ("code", f"fedbound bound {result.id} "
                                                              "--variant NAME"), ")"), variants]
        if result.known_issues:
            flags = nodes.bullet_list()
            for flag in result.known_issues:
                flags += nodes.list_item("", _para(("strong", flag.id), f": {flag.text}"))
            body += [_para(("strong", "Known issues"), " (the flags of the paper notes)"), flags]
        if claims:
            body += [_para(("strong", "Audit"), f" ({len(claims)} claims)"), _claims_table(claims)]
        else:
            body.append(_para(("strong", "Audit"), ": no claim of the audit is about this result."))
        return _section(docname, result.id, [nodes.literal(result.id, result.id), f": {result.title}"],
                        *body)


# ---- the CLI reference ----------------------------------------------------------------------------
def _subparsers(parser):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, sub, helps.get(name)


def _arguments(parser) -> list[tuple]:
    import argparse

    formatter = parser._get_formatter()
    rows = []
    for a in parser._actions:
        if a.help == argparse.SUPPRESS or isinstance(a, (argparse._SubParsersAction,
                                                         argparse._HelpAction)):
            continue
        if a.option_strings:
            flag = ", ".join(a.option_strings)
            if a.nargs != 0:
                flag += " " + formatter._format_args(a, formatter._get_default_metavar_for_optional(a))
        else:
            flag = formatter._format_args(a, formatter._get_default_metavar_for_positional(a))
        text = formatter._expand_help(a) if a.help else ""
        default = "" if a.default in (None, False, argparse.SUPPRESS) or a.nargs == 0 or \
            not a.option_strings or a.default == [] else repr(a.default)
        rows.append((flag, text, default))
    return rows


class CliReferenceDirective(SphinxDirective):
    """``.. fedbound-cli-reference::`` (module doc)."""

    def run(self):
        from fedbound.cli.main import build_parser

        parser = build_parser([])
        docname = self.env.docname
        out = [_para("Every command reads its flags from the registries: this page is the parser "
                     "that ", ("code", "fedbound"), " builds, walked while the site was built; ",
                     ("code", "fedbound COMMAND --help"), " prints the same text.")]
        out.append(self._parser(parser, "fedbound", None, docname))
        return out

    def _parser(self, parser, prog, summary, docname):
        body = []
        if summary:
            body.append(_rst_text(summary))
        if parser.description and parser.description != summary:
            body.append(_rst_text(parser.description))
        usage = parser.format_usage().strip()
        body.append(nodes.literal_block(usage, usage, language="text"))
        rows = _arguments(parser)
        if rows:
            body.append(_table(("argument", "meaning", "default"),
                               [(_para(("code", f)), _rst_text(t), _para(("code", d)) if d else "")
                                for f, t, d in rows], (28, 60, 12)))
        for name, sub, help_ in _subparsers(parser):
            body.append(self._parser(sub, f"{prog} {name}", help_, docname))
        return _section(docname, prog.replace(" ", "-"), nodes.literal(prog, prog), *body)


# ---- commands run while building ------------------------------------------------------------------
class CliDirective(SphinxDirective):
    """``.. fedbound-cli::`` with one ``fedbound ...`` command per line (module doc); ``:head: N``
    shows the first N lines of each output; ``:returncode: N`` is the expected exit status."""

    has_content = True
    option_spec = {"head": directives.nonnegative_int, "returncode": directives.nonnegative_int}

    def run(self):
        folders = self.env.__dict__.setdefault("fedbound_cli_folders", {})
        folder = folders.get(self.env.docname)
        if folder is None or not Path(folder).is_dir():
            folder = folders[self.env.docname] = tempfile.mkdtemp(prefix="fedbound-docs-")
        expected = self.options.get("returncode", 0)
        shown, lines = [], iter(self.content)
        for line in lines:
            if not line.strip():
                continue
            heredoc = HEREDOC.fullmatch(line.strip())
            if heredoc:     # a file that the next commands read, written as a shell would
                body = []
                for more in lines:
                    if more.strip() == "EOF":
                        break
                    body.append(more)
                else:
                    raise self.error(f"{line!r}: no closing EOF line")
                (Path(folder) / heredoc.group(1)).write_text("\n".join(body) + "\n")
                shown.append("\n".join([f"$ {line}", *body, "EOF"]))
                continue
            shown.append(self._command(line, folder, expected))
        block = "\n\n".join(shown)
        return [nodes.literal_block(block, block, language="console", classes=["fedbound-cli"])]

    def _command(self, line: str, folder: str, expected: int) -> str:
        """Run ``line`` in ``folder``; the command and its output (a build warning if it failed)."""
        from fedbound.cli.main import main

        argv = shlex.split(line)
        if argv[0] != "fedbound":
            raise self.error(f"fedbound-cli runs fedbound commands, got {line!r}")
        stdout, stderr = io.StringIO(), io.StringIO()
        here = os.getcwd()
        os.chdir(folder)
        try:
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                code = main(argv[1:])
        finally:
            os.chdir(here)
        err = stderr.getvalue()
        if code != expected:
            logger.warning(f"`{line}` exited {code} (expected {expected}): {err.strip()[-600:]}",
                           location=(self.env.docname, self.lineno))
        if "warning" in err.lower():
            logger.warning(f"`{line}` printed a warning: {err.strip()[-600:]}",
                           location=(self.env.docname, self.lineno))
        text = stdout.getvalue().rstrip("\n")
        lines = text.splitlines()
        head = self.options.get("head")
        if head is not None and len(lines) > head:
            text = "\n".join(lines[:head] + [f"... ({len(lines) - head} more lines)"])
        return f"$ {line}\n{text}" if text else f"$ {line}"


def _forget_folder(app, env, docname) -> None:
    """A page read again runs its commands again in a fresh folder (no output of the last build)."""
    folder = env.__dict__.get("fedbound_cli_folders", {}).pop(docname, None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


def _forget_folders(app, exception) -> None:
    for docname in list(app.env.__dict__.get("fedbound_cli_folders", {})):
        _forget_folder(app, app.env, docname)


def setup(app):
    app.add_config_value("fedbound_audit", {"samples": 1000, "iterations": 0, "seed": 0}, "env")
    app.connect("builder-inited", generate)
    app.connect("env-get-outdated", outdated)
    app.connect("env-purge-doc", _forget_folder)
    app.connect("build-finished", _forget_folders)
    app.add_directive("fedbound-paper", PaperDirective)
    app.add_directive("fedbound-cli-reference", CliReferenceDirective)
    app.add_directive("fedbound-cli", CliDirective)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
