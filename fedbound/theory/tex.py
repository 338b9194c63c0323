r"""The papers' notation in LaTeX: every declared constant written as the papers write it
(:func:`tex_name`), and any sympy expression with its constants so named (:func:`tex`).

A constant is written from its short name and the name its declaration prints
(``declare(..., latex=...)``):

* a Greek letter followed by 2 is the square the papers write: FedNova's ``kappa2`` and ``beta2``
  (Assumption 3's kappa^2, beta^2), ``chi2`` (chi^2), a plugin's ``zeta2`` are
  :math:`\kappa^{2}, \beta^{2}, \chi^{2}, \zeta^{2}`, unless the meaning writes it as an index
  (FedAda2's Adam decay ``beta2``: "beta_2") or the declaration prints it otherwise (SD-GT's
  ``lambda2``, printed ``lambda_2``);
* other trailing digits and what follows an underscore are subscripts (``eta_l``:
  :math:`\eta_{l}`, ``Phi1``: :math:`\Phi_{1}`), a word of several letters upright
  (``tau_eff``: :math:`\tau_{\mathrm{eff}}`), ``tilde``/``hat``/``bar`` accents
  (``beta1_tilde``: :math:`\tilde{\beta}_{1}`), ``minus``/``plus`` superscripts (``K_minus``:
  :math:`K^{-}`), and ``eps`` is epsilon;
* a printed LaTeX name keeps its form, with the backslash of its commands
  (``mathcal{L}_1``: :math:`\mathcal{L}_1`, ``Delta_{t-1}``: :math:`\Delta_{t-1}`) and its words
  of several letters upright (``K^{max}``: :math:`K^{\mathrm{max}}`).

Relations are written ``\leq``, ``\geq`` (:data:`RELATIONS`), which matplotlib's mathtext reads too.

>>> from fedbound.theory.symbols import constant
>>> tex_name(constant("L")), tex_name(constant("gamma"))
('L', '\\gamma')
"""
from __future__ import annotations

import re
from typing import Literal

import sympy as sp
from sympy.printing.latex import greek_letters_set, translate

from fedbound.errors import UnknownNameError
from fedbound.theory import symbols as S

#: each relation of a condition in LaTeX
RELATIONS = {"<=": r"\leq", "<": "<", ">=": r"\geq", ">": ">"}
#: accents written after an underscore (``B_tilde``) and superscripts (``K_minus``)
_ACCENTS = {"tilde": r"\tilde", "hat": r"\hat", "bar": r"\bar"}
_SUPERSCRIPTS = {"minus": "-", "plus": "+"}
#: LaTeX command words a printed name may carry without their backslash (``mathcal{L}_1``)
_COMMANDS = "|".join(sorted({"mathcal", "mathbb", "hat", "tilde", "bar", "epsilon", "varepsilon",
                             *greek_letters_set, *(g.capitalize() for g in greek_letters_set)},
                            key=len, reverse=True))


def _word(word: str) -> str:
    """One word of a name: a Greek letter (or ``eps``) as its command, a single letter or a number
    as it is, a longer word upright."""
    if word == "eps":
        return r"\epsilon"
    if len(word) == 1 or word.isdigit():
        return word
    out = translate(word)
    return out if out != word else rf"\mathrm{{{word}}}"


def tex_name(constant: S.Constant) -> str:
    """The LaTeX of a declared constant in the papers' notation (module doc)."""
    printed = constant.symbol.name
    if printed != constant.name:   # a declared LaTeX form: give its commands their backslash
        fixed = re.sub(rf"(?<![\\A-Za-z])({_COMMANDS})(?=[{{_^]|$)", r"\\\1", printed)
        return re.sub(r"(?<=[_^]\{)([A-Za-z]{2,})(?=\})", r"\\mathrm{\1}", fixed)
    head, *rest = constant.name.split("_")
    letters, digits = re.fullmatch(r"([A-Za-z]*?)(\d*)", head).groups() if head else ("", "")
    base = _word(letters) if letters else digits
    sub, sup = ([digits] if digits and letters else []), []
    if letters.lower() in greek_letters_set and digits == "2" and not rest \
            and f"{letters}_2" not in constant.meaning:
        sub, sup = [], ["2"]
    for word in rest:
        if word in _ACCENTS:
            base = rf"{_ACCENTS[word]}{{{base}}}"
        elif word in _SUPERSCRIPTS:
            sup.append(_SUPERSCRIPTS[word])
        elif word:
            sub.append(_word(word))
    return base + (f"_{{{','.join(sub)}}}" if sub else "") + (f"^{{{''.join(sup)}}}" if sup else "")


def tex(expr: sp.Basic | sp.MatrixBase) -> str:
    """A sympy expression (or matrix) in LaTeX with every declared constant named by
    :func:`tex_name` (a symbol that is no declared constant keeps sympy's name)."""
    names = {}
    for sym in expr.free_symbols:
        try:
            names[sym] = tex_name(S.all_constants()[S.name_of(sym)])
        except UnknownNameError:
            continue
    return sp.latex(expr, symbol_names=names)


def relation(lhs: sp.Basic, op: Literal["<=", "<", ">=", ">"], rhs: sp.Basic) -> str:
    """``lhs op rhs`` in LaTeX (:data:`RELATIONS`)."""
    return rf"{tex(lhs)} {RELATIONS[op]} {tex(rhs)}"


__all__ = ["RELATIONS", "tex_name", "tex", "relation"]
