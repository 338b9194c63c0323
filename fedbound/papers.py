"""The papers whose claims are audited (``fedbound audit PAPER``), as entries of the one registry
(:mod:`fedbound.registry`).

A :class:`PaperAudit` names a paper (the scope of its results: ``sdgt``, ``fednova``, ...), says in
one line what is audited, cites its seed text and the paper itself (:class:`Citation`: title,
authors, year, venue, arXiv id; ``fedbound list papers`` and the documentation show it) and gives
its checkable claims (``claims()``). Each
audit module registers its paper where its claims are defined (``fedbound/theory/<paper>/audit.py``;
``fedbound/pep/audit.py`` registers ``pep``, the papers' bounds against worst cases certified by
performance estimation); :mod:`fedbound.theory.audit` runs them by name.

The registry lives on the ground floor, beside :mod:`fedbound.registry`, because its entries come
from two floors: the theory and, above it, the certificates, and the floor that runs the audits
(theory) cannot name the one above it. The first look-up imports both packages
(:class:`~fedbound.registry.Registry`), so a new paper is one audit module that registers itself.

    >>> from fedbound.papers import PAPERS
    >>> PAPERS.get("sdgt").seed             # doctest: +SKIP
    '003_3166d581b98362e1.txt'
    >>> print(Citation("A paper", ("Ada Lovelace", "Alan Turing"), 1950, "a venue", "1234.56789"))
    Ada Lovelace, Alan Turing. A paper. a venue, 1950. arXiv:1234.56789
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from fedbound.errors import require
from fedbound.registry import Entry, Registry


@dataclass(frozen=True)
class Citation:
    """Which paper a :class:`PaperAudit` audits: ``title``, ``authors`` (in the paper's order),
    ``year`` (of the version the seed text is), ``venue`` and ``arxiv`` (the arXiv identifier,
    such as ``"2007.07481"``; "" where the paper has none)."""

    title: str
    authors: tuple[str, ...]
    year: int
    venue: str
    arxiv: str = ""

    def __post_init__(self):   # the types are the guard's (fedbound.guard); the values here
        require(self.title.strip() != "", f"a citation needs a title, got {self.title!r}")
        require(len(self.authors) > 0 and all(a.strip() != "" for a in self.authors),
                f"a citation's authors are a non-empty tuple of names, got {self.authors!r}")
        require(1900 <= self.year <= 2100,
                f"a citation's year is an integer in [1900, 2100], got {self.year!r}")

    @property
    def url(self) -> str:
        """The paper's arXiv page ("" without an arXiv id)."""
        return f"https://arxiv.org/abs/{self.arxiv}" if self.arxiv else ""

    def __str__(self) -> str:
        arxiv = f" arXiv:{self.arxiv}" if self.arxiv else ""
        return f"{', '.join(self.authors)}. {self.title}. {self.venue}, {self.year}.{arxiv}"


@dataclass(frozen=True, repr=False)
class PaperAudit(Entry):
    """A paper's audit: ``name`` (the paper's scope, the id prefix of its results), a one-line
    ``summary``, the ``seed`` text it cites ("" where the claims come from several papers),
    ``claims()`` (its checkable claims, :class:`fedbound.theory.claim.Claim` or any object with an
    ``audit(seed)`` method), ``evaluated_by``: how each claim is evaluated when not by sampling
    (None: random samples, the extremes of the domain and an adversarial search), and ``adapter``:
    the module that maps a run of the algorithms its theorems cover to their constants (its
    ``ALGORITHMS`` and ``constants(task, network, algorithm, options)``,
    :mod:`fedbound.theory.adapters`; None for a paper without runs, such as ``pep``) and
    ``citation``: the paper (:class:`Citation`; None where the claims are not one paper's)."""

    name: str
    summary: str
    seed: str
    claims: Callable[[], Sequence]
    evaluated_by: str | None = None
    adapter: str | None = None
    citation: Citation | None = None

    def __post_init__(self):
        super().__post_init__()
        require(callable(self.claims), f"paper {self.name}: claims must be callable")
        require(self.adapter is None or (isinstance(self.adapter, str) and all(
            part.isidentifier() for part in self.adapter.split("."))),
            f"paper {self.name}: adapter must be a module name (such as 'mypkg.adapter'), got "
            f"{self.adapter!r}")


PAPERS: Registry[PaperAudit] = Registry("paper", PaperAudit,
                                        packages=("fedbound.theory", "fedbound.pep"))
register = PAPERS.register

__all__ = ["Citation", "PaperAudit", "PAPERS", "register"]
