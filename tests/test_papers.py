"""The papers whose claims are audited, as entries of the one registry (fedbound/papers.py): each
audit module registers its paper where its claims are defined, ``run_audit`` and ``fedbound audit``
find every registered paper (one registered in a test too) by name."""
import json
import subprocess
import sys

import pytest

from fedbound.cli.main import main
from fedbound.deprecation import FedboundDeprecationWarning
from fedbound.errors import FedboundError, UnknownNameError, ValidationError
from fedbound.papers import PAPERS, PaperAudit
from fedbound.theory.audit import claims_of, papers, run_audit, run_audits

BUILT_IN = ("afga", "fedada2", "fednova", "pep", "sdgt")


def test_each_audit_module_registers_its_paper():
    assert sorted(PAPERS.names()) == list(BUILT_IN) == papers("all")
    for name in BUILT_IN:
        where = "fedbound.pep.audit" if name == "pep" else f"fedbound.theory.{name}.audit"
        assert PAPERS.origin(name) == where and PAPERS.get(name).summary
    from fedbound.theory.sdgt.common import PAPER
    assert PAPERS.get("sdgt").seed == PAPER.seed and PAPERS.get("pep").seed == ""
    assert PAPERS.get("pep").evaluated_by and PAPERS.get("sdgt").evaluated_by is None


def test_a_paper_registered_twice_or_without_claims_is_an_error():
    with pytest.raises(ValidationError, match="already registered.*fedbound.theory.sdgt.audit"):
        PAPERS.register(PaperAudit("sdgt", "again", "", list))
    with pytest.raises(FedboundError, match=r"claims must be a callable \(function\), got \(\)"):
        PaperAudit("toy", "no claims", "", ())


def test_unknown_paper_names_the_known_ones():
    with pytest.raises(UnknownNameError, match="no audit for paper 'sdg'; did you mean 'sdgt'.*"
                                               "known: afga, fedada2, fednova, pep, sdgt"):
        claims_of("sdg")


def test_a_registered_paper_is_audited_by_name(register_temporarily, capsys):
    """A paper registered from outside fedbound (a plugin, here the test) is run like a built-in."""
    first = claims_of("sdgt")[:1]
    register_temporarily(PAPERS, PaperAudit("toy", "one claim of SD-GT", "", lambda: first))
    assert "toy" in papers("all") and [r.claim for r in run_audit("toy", samples=50, iterations=0)] == \
        [first[0].id]
    assert list(run_audits("toy", samples=50, iterations=0)) == ["toy"]
    assert main(["audit", "toy", "--samples", "50", "--iterations", "0", "--json"]) == 0
    assert [r["claim"] for r in json.loads(capsys.readouterr().out)] == [first[0].id]


def test_the_old_dict_of_papers_warns():
    import fedbound.theory.audit as audit

    with pytest.warns(FedboundDeprecationWarning, match="fedbound.theory.audit.PAPERS is deprecated"):
        assert audit.PAPERS is PAPERS


def test_the_theory_imports_nothing_of_the_floors_above():
    """Every module of fedbound.theory (what the first look-up of a result imports) imports
    nothing of the floors above the theory (the certificates, the algorithms, ...); only the
    registry of papers, on the ground floor, names the certificates' package."""
    code = ("import sys\n"
            "from fedbound.theory import results\n"
            "results()\n"
            "print(sorted({'.'.join(m.split('.')[:2]) for m in sys.modules if m.startswith('fedbound.')}))\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    loaded = set(eval(res.stdout.strip().splitlines()[-1]))
    assert "fedbound.theory" in loaded and "fedbound.papers" in loaded
    assert not loaded & {"fedbound.pep", "fedbound.algorithms", "fedbound.verify", "fedbound.control",
                         "fedbound.sweep", "fedbound.cli"}, loaded


def test_each_paper_is_cited_with_title_authors_year_and_arxiv_id(capsys):
    """The four papers name themselves (issue 33): title, authors, year, venue and the arXiv id
    where there is one, in the registry, in `fedbound list papers` and its JSON."""
    import re

    cited = {name: PAPERS.get(name).citation for name in BUILT_IN}
    assert cited["pep"] is None and all(cited[name] for name in ("afga", "fedada2", "fednova", "sdgt"))
    assert {name: c.arxiv for name, c in cited.items() if c} == {
        "afga": "", "fedada2": "2410.18117", "fednova": "2007.07481", "sdgt": "2409.17430"}
    assert cited["fednova"].authors[0] == "Jianyu Wang" and cited["sdgt"].year == 2024
    for c in filter(None, cited.values()):
        assert c.title and c.authors and re.fullmatch(r"(\d{4}\.\d{5})?", c.arxiv)
        assert c.url == (f"https://arxiv.org/abs/{c.arxiv}" if c.arxiv else "")
    assert main(["list", "papers"]) == 0
    text = capsys.readouterr().out
    assert "Tackling the Objective Inconsistency Problem" in text and "arXiv:2409.17430" in text
    assert main(["list", "papers", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["fednova"]["year"] == 2020 and rows["fednova"]["arxiv"] == "2007.07481"
    assert rows["afga"]["arxiv"] is None and rows["pep"]["title"] is None
    assert rows["sdgt"]["authors"] == ["Evan Chen", "Shiqiang Wang", "Christopher G. Brinton"]


@pytest.mark.parametrize("fields, message", [
    (("", ("A",), 2020, "v"), "needs a title"),
    (("T", (), 2020, "v"), "authors are a non-empty tuple"),
    (("T", ("A",), 20, "v"), r"year is an integer in \[1900, 2100\], got 20"),
])
def test_a_bad_citation_is_one_line(fields, message):
    from fedbound.papers import Citation

    with pytest.raises(FedboundError, match=message):
        Citation(*fields)
    with pytest.raises(FedboundError, match="citation must be a fedbound Citation or None"):
        PaperAudit("toy", "one claim", "", list, citation="a title")
