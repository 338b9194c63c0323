"""The papers' notation in LaTeX (fedbound.theory.tex, Result.latex, issue 33 item 3): the squares the
papers mean (kappa^2, beta^2, chi^2) where fedbound's names end in 2, indices where they are indices;
every result's LaTeX includes its bound (SD-GT Theorem 3's, which a hook computes, too); every
formula of every variant is balanced, and those of each result's default variant are read by
matplotlib's mathtext (the environments of sympy's matrices and cases, which mathtext does not read,
are left to MathJax)."""
import pytest
import sympy as sp
from matplotlib.mathtext import MathTextParser

from fedbound.theory import get, results
from fedbound.theory import symbols as S
from fedbound.theory.result import Provenance, Result, Variant
from fedbound.theory.sdgt.thm3 import FLOOR_TEX
from fedbound.theory.tex import tex, tex_name
from html_checks import balanced

RESULTS = results()
PARSER = MathTextParser("path")


@pytest.mark.parametrize("key,written", [
    ("fednova.kappa2", r"\kappa^{2}"), ("fednova.beta2", r"\beta^{2}"), ("fednova.chi2", r"\chi^{2}"),
    ("fedada2.beta2", r"\beta_{2}"),          # Adam's second-moment decay beta_2: an index
    ("sdgt.lambda2", r"\lambda_2"),           # the controller's weight lambda_2, printed so
    ("sdgt.c2", r"c_{2}"), ("afga.C2", r"C_{2}"),
    ("fednova.tau_eff", r"\tau_{\mathrm{eff}}"), ("afga.eta_l", r"\eta_{l}"), ("fedada2.Phi1", r"\Phi_{1}"),
    ("fedada2.beta1_tilde", r"\tilde{\beta}_{1}"), ("fedada2.K_minus", "K^{-}"),
    ("afga.eps_ams", r"\epsilon_{\mathrm{ams}}"), ("sdgt.Lyap1", r"\mathcal{L}_1"),
    ("sdgt.Delta_prev", r"\Delta_{t-1}"), ("sdgt.Kmax", r"K^{\mathrm{max}}"), ("eps", r"\epsilon"),
])
def test_constants_in_the_papers_notation(key, written):
    assert tex_name(S.all_constants()[key]) == written


def test_fednova_theorem_1_writes_kappa_and_beta_squared():
    latex = get("fednova.thm1").latex("sufficient")
    assert r"\kappa^{2}" in latex and r"\beta^{2}" in latex
    assert r"\kappa_{2}" not in latex and r"\beta_{2}" not in latex
    # sympy's own rendering of the same expression wrote the indices the papers do not mean
    assert r"\kappa_{2}" in sp.latex(get("fednova.thm1").variant("printed").bound)


def test_a_plugin_constant_named_like_a_square_is_one():
    """A user's ``zeta2`` (the plugin template's heterogeneity at the optimum) reads as zeta^2."""
    zeta2 = S.declare("zeta2", S.NONNEGATIVE, "heterogeneity at the optimum, sum_i p_i ||grad f_i(x*)||^2",
                      scope="texplugin")
    try:
        assert tex(zeta2 * S.L) == r"L \zeta^{2}"
    finally:
        S._REGISTRY.pop("texplugin.zeta2")
        S._BY_SYMBOL.pop(zeta2)


def test_sdgt_theorem_3_latex_includes_its_bound():
    """The bound (98), (1 - mu K gamma/4)^T Lyap_1 + ||(I - A)^{-1} b||_1, is computed by a hook (no
    sympy expression): its LaTeX is the variant's bound_shown, before the step conditions."""
    for variant in ("main", "appendix", "rederived"):
        latex = get("sdgt.thm3").latex(variant)
        assert latex.startswith(r"\mathcal{L}_1 \left(- \frac{K \gamma \mu}{4} + 1\right)^{T} + " + FLOOR_TEX)
        assert latex.count(r"\gamma \leq") == 5
    assert FLOOR_TEX in get("sdgt.cor3").latex("rederived")


@pytest.mark.parametrize("result", RESULTS, ids=lambda r: r.id)
def test_every_results_latex_includes_its_bound_and_is_balanced(result):
    for name in result.variants:
        v = result.variants[name]
        formulas = v.formulas()
        latex = result.latex(name)
        assert latex, f"{result.id} ({name}) writes no formula"
        if v.bound is not None or v.bound_shown:
            assert formulas["bound"] and latex.startswith(formulas["bound"][0])
        if v.bound is not None:
            assert formulas["bound"][0] == tex(v.bound)
        assert len(formulas["conditions"]) == len(v.conditions)
        assert len(formulas["predicates"]) == len(v.predicates)
        for part in (f for kind in formulas.values() for f in kind):
            assert balanced(part), part
        assert v._repr_latex_() == "$$" + r" \qquad ".join(f for k in formulas.values() for f in k) + "$$"


def test_a_variant_that_computes_its_bound_states_how_it_is_written():
    """A variant without a sympy bound but with a ``derived`` hook has its bound computed by the hook
    (fedbound.theory.evaluation): every built-in one writes it (bound_shown)."""
    computed = [(r.id, name) for r in RESULTS for name in r.variants
                if r.variants[name].bound is None and r.variants[name].derived is not None]
    assert ("sdgt.thm3", "appendix") in computed and ("sdgt.cor3", "rederived") in computed
    assert all(get(rid).variants[name].bound_shown for rid, name in computed)


@pytest.mark.parametrize("result", RESULTS, ids=lambda r: r.id)
def test_the_default_variants_formulas_render_with_mathtext(result):
    for part in (f for kind in result.variant().formulas().values() for f in kind):
        if r"\begin" in part:    # a matrix or cases: MathJax reads it, mathtext does not
            continue
        PARSER.parse(f"${part}$")


def test_a_result_without_bound_or_conditions_is_written_by_its_extras():
    latex = get("fednova.fedprox").latex()
    assert latex.startswith(r"\mathrm{a1} = ") and r"\mathrm{C} = " in latex


def test_html_escapes_a_users_text():
    K, L = S.resolve("K", "sdgt").symbol, S.L
    mine = Result("mine.claim", "<b>bold</b> & title", "<script>alert(1)</script>",
                  Provenance("a<b>.pdf", "(1)", "1"), ("x < y",),
                  [Variant("printed", "<i>desc</i>", bound=K * L)], scope="sdgt")
    html = mine._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; title" in html and "a&lt;b&gt;.pdf" in html
    assert "&lt;i&gt;desc&lt;/i&gt;" in html and "x &lt; y" in html
