"""The anatomy of a bound (fedbound.theory.anatomy, Evaluation.anatomy): its additive terms sum back
to the bound, the dominant one is named with its share, and the sensitivities d log B / d log c of
the symbolic derivative match central finite differences, for every registered result with a
symbolic bound, at admissible points (the inputs stored with the golden numbers)."""
import gzip
import json
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from fedbound.errors import ValidationError
from fedbound.theory import get, results
from fedbound.theory import symbols as S
from fedbound.theory.anatomy import term_groups

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "golden.json.gz"
#: relative step of the central finite difference in log c: its truncation error is O(h^2), its
#: rounding error about 1e-16 |log B| / h, both far below the 1e-6 the sensitivities are held to
H = 1e-6
#: the theorems FedAda2's demo shows, in more variants than the default
EXTRA = [("fedada2.thm20", "rederived"), ("fedada2.thm20", "norm=scalar,smooth=L2"),
         ("fedada2.cor29", "rederived")]


def _points() -> list:
    """One stored admissible point per result (its default variant) with a symbolic bound, plus the
    EXTRA variants: (result, variant, constants)."""
    stored = json.load(gzip.open(GOLDEN, "rt"))["theory"]
    wanted = {(r.id, r.default_variant) for r in results()} | set(EXTRA)
    out, seen = [], set()
    for entry in stored:
        p = entry["point"]
        key = (p["result"], p["variant"])
        if key in seen or key not in wanted:
            continue
        result = get(p["result"])
        v = result.variant(p["variant"])
        if v.bound is None or v.derived is not None or not np.all(result.admissible(p["constants"])[0]):
            continue
        seen.add(key)
        out.append(pytest.param(p["result"], p["variant"], p["constants"], id=f"{key[0]}[{key[1]}]"))
    return out


POINTS = _points()


def test_every_result_with_a_symbolic_bound_is_covered():
    covered = {p.values[0] for p in POINTS}
    symbolic = {r.id for r in results() if r.variant().bound is not None and r.variant().derived is None}
    assert len(covered) >= 0.8 * len(symbolic), sorted(symbolic - covered)


def _with_unit_steps(expr: sp.Expr, values: dict) -> sp.Expr:
    """``expr`` with each floor(a) and ceiling(a) replaced by a + (its value - a) at ``values``: the
    same value at the point and the slope 1 the anatomy gives them."""
    subs = {s: values[S.short_name(s)] for s in expr.free_symbols}

    def shifted(e):
        a = e.args[0]
        offset = float(e.xreplace(subs)) - float(a.xreplace(subs))
        return a + offset

    return expr.replace(lambda e: isinstance(e, (sp.floor, sp.ceiling)), shifted)


def _finite_difference(result, variant, values: dict, name: str) -> float:
    """d log B / d log c by central differences of the bound, floor and ceiling with slope 1 (as
    the anatomy differentiates integer constants) and their values at the point."""
    v = result.variant(variant)
    symbols = sorted(v.bound.free_symbols, key=S.short_name)
    fn = sp.lambdify(symbols, _with_unit_steps(v.bound, values), modules="numpy")

    def log_bound(scale: float) -> float:   # log |B|: a descent bound may be negative
        args = [np.asarray(values[S.short_name(s)] * (scale if S.short_name(s) == name else 1.0))
                for s in symbols]
        return float(np.log(np.abs(fn(*args))))

    return (log_bound(1 + H) - log_bound(1 - H)) / (np.log1p(H) - np.log1p(-H))


@pytest.mark.parametrize("result_id, variant, constants", POINTS)
def test_terms_sum_to_the_bound_and_sensitivities_match_finite_differences(result_id, variant, constants):
    result = get(result_id)
    ev = result.evaluate(variant, **constants)
    anatomy = ev.anatomy()
    B = float(ev.bound)
    # the groups partition the bound's terms exactly (sympy identity), their values sum to it
    parts = [p for _, group in term_groups(result.variant(variant)) for p in group]
    assert sp.Add(*parts) == result.variant(variant).bound
    values = np.array([float(t.value) for t in anatomy.terms])
    assert abs(values.sum() - B) <= 1e-12 * np.abs(values).sum()
    assert sum(float(t.share) for t in anatomy.terms) == pytest.approx(1.0, abs=1e-12 * np.abs(values).sum() / abs(B))
    assert anatomy.dominant.value == max(anatomy.terms, key=lambda t: float(t.share)).value
    # the sensitivities against finite differences, where the bound is smooth at the point
    for name, s in anatomy.sensitivities.items():
        c = float(np.asarray(ev.values[name]))
        if c == 0:
            assert float(s) == 0.0
            continue
        fd = _finite_difference(result, variant, {k: float(np.asarray(x)) for k, x in ev.values.items()}, name)
        assert abs(float(s) - fd) <= 1e-6 * max(1.0, abs(fd)), (name, float(s), fd)


def test_fedada2_theorem_20_at_the_demo_constants():
    """The issue's case: which term and which constants make Theorem 20 astronomically large."""
    c = dict(eta_l=0.1, K=3, z=1, eps=0.1, eps_s=1e-3, v0=0.0, eta=1.0, tau=1e-2, vtilde0=1e-4,
             beta1_tilde=0.0, G=25.656, L=1.0, d=5, f_gap=1.838, T=20)
    ev = get("fedada2.thm20").evaluate("printed", **c)
    anatomy = ev.anatomy()
    assert [t.label for t in anatomy.terms] == sorted(f"Psi{i}/Psi6" for i in range(1, 6)) or \
        {t.label for t in anatomy.terms} == {f"Psi{i}/Psi6" for i in range(1, 6)}
    assert anatomy.dominant.label == "Psi3/Psi6" and float(anatomy.dominant.share) > 0.99
    decades = dict(anatomy.decades())
    # eps_s enters Psi3 once, through L~ = 2 sqrt(d) G/(eta_l eps_s): S = -1 to the share of Psi3
    assert float(anatomy.sensitivities["eps_s"]) == pytest.approx(-float(anatomy.dominant.share), rel=1e-9)
    assert decades["eps_s"] == pytest.approx(3.0, rel=1e-4)
    top = [name for name, _ in anatomy.decades()[:5]]
    assert {"G", "eps_s", "eps", "d"} <= set(top)
    assert decades["eta_l"] < 0                  # a smaller client step makes the bound larger
    assert "Psi3/Psi6" in repr(anatomy) and len(repr(anatomy)) < 400


def test_a_bound_of_zero_or_a_derived_bound_is_refused_with_a_clear_error():
    with pytest.raises(ValidationError, match="no symbolic bound"):
        get("sdgt.cor3").evaluate("rederived", K=5, L=1.0, R=1.0, T=100, mu=0.1, n=10, p=0.5,
                                  q=0.5, sigma=0.1).anatomy()
    ev = get("sdgt.thm2").evaluate(K=2, L=1.0, R=0.0, T=100, gamma=1e-3, n=10, p=0.5, q=0.5, sigma=0.0)
    with pytest.raises(ValidationError, match="nonzero bound"):
        ev.anatomy()


def test_anatomy_of_an_array_of_constants_reads_the_largest_bound():
    T = np.array([10.0, 100.0, 1000.0])
    ev = get("sdgt.thm2").evaluate(K=2, L=1.0, R=1.0, T=T, gamma=1e-3, n=10, p=0.5, q=0.5, sigma=0.1)
    anatomy = ev.anatomy()
    assert anatomy.at(anatomy.bound) == float(np.max(ev.bound))
    assert np.shape(anatomy.sensitivities["T"]) == (3,)
    assert anatomy.dominant.label == "2*R/(K*T*gamma)"
