"""The theory engine over every registered result: provenance, exact agreement of the compiled
numbers with sympy, domain errors, max_step, rounds_to_eps, rate_exponents, vectorization.

The generic tests iterate over ``fedbound.theory.results()``, so they cover every result of every
paper module (including the ones written after this file).
"""
import math
import pathlib
import re
import zlib

import numpy as np
import pytest
import sympy as sp

from fedbound.errors import ValidationError
from fedbound.theory import get, results
from fedbound.theory import symbols as S
from fedbound.theory.statement import compile_relation

TESTS = pathlib.Path(__file__).resolve().parents[1]
SEEDS = pathlib.Path("/work/shared/seeds")
VARIANTS = [(r.id, v) for r in results() for v in r.variants]


def random_constants(names, rng: np.random.Generator, size=None, result=None) -> dict:
    """Values inside each constant's domain for ``result`` (default: an SD-GT result; its
    assumptions included), log-uniform on half-lines, order relations respected, and only
    instances the result admits (its relations, issue 22): inadmissible draws are drawn again."""
    result = result or get("sdgt.thm2")
    out = _draw(names, rng, size, result)
    tests = [compile_relation(r) for r in result.relations]
    for _ in range(1000):
        ok, _ = result.admissible(out)
        if np.all(ok):
            return out
        for test in tests:     # draw again the constants of each broken relation, where it breaks
            if not test.names <= set(out):
                continue
            with np.errstate(all="ignore"):
                good = np.asarray(test(out), dtype=bool)
            if np.all(good):
                continue
            again = _draw(sorted(test.names), rng, size, result)
            for k in test.names:
                out[k] = np.where(good, out[k], again[k]) if np.ndim(out[k]) else again[k]
    raise AssertionError(f"no admissible constants of {result.id} drawn in 1000 tries")


def _draw(names, rng: np.random.Generator, size, result) -> dict:
    out = {}
    for name in names:
        d = result.domain(name)[0]
        if d.integer:
            low = math.floor(d.low) + 1 if d.low_open else math.ceil(d.low)
            high = low + 19 if math.isinf(d.high) else int(d.high)
            out[name] = rng.integers(max(low, 0), high + 1, size).astype(float)
        elif math.isinf(d.high):
            out[name] = d.low + 10.0 ** rng.uniform(-2, 1, size) if math.isfinite(d.low) else \
                rng.uniform(-10, 10, size)
        else:
            out[name] = rng.uniform(d.low + 1e-3 * (d.high - d.low), d.high, size)
    short = {S.constant(nm, result.scope).key: nm for nm in out}
    for small, large in S.ORDER_RELATIONS:
        small, large = short.get(small), short.get(large)
        if small in out and large in out:
            out[small], out[large] = np.minimum(out[small], out[large]), np.maximum(out[small], out[large])
    return out


# -- catalogue -------------------------------------------------------------------------------------
@pytest.mark.parametrize("result", results(), ids=lambda r: r.id)
def test_every_result_has_provenance_and_a_test(result):
    prov = result.provenance
    assert (SEEDS / prov.seed).is_file() or not SEEDS.exists()
    assert prov.equation and re.fullmatch(r"[0-9, \-]+", prov.lines), prov
    assert result.title and result.statement and result.variants
    for v in result.variants.values():
        assert v.description, (result.id, v.name)
    mentioned = any(f'"{result.id}"' in path.read_text() for path in TESTS.rglob("test_*.py"))
    assert mentioned, f"no test under tests/ mentions {result.id!r}"


@pytest.mark.parametrize("rid", [r.id for r in results() if len(r.variants) > 1])
def test_variants_of_a_result_disagree_somewhere(rid):
    """Two variants with identical numbers everywhere would be one variant twice."""
    result = get(rid)
    names = list(result.variants)
    needed = sorted({c for v in names for c in result.constants(v)})
    c = random_constants(needed, np.random.default_rng(1), size=64, result=result)
    evs = {v: result.evaluate(v, **{k: c[k] for k in result.constants(v)}) for v in names}
    for a in names:
        for b in names[names.index(a) + 1:]:
            keys = [k for k in ("bound", *evs[a].extras) if k == "bound" or k in evs[b].extras]
            differ = False
            for k in keys:
                x = evs[a].bound if k == "bound" else evs[a].extras[k]
                y = evs[b].bound if k == "bound" else evs[b].extras[k]
                if x is not None and y is not None and not np.allclose(x, y, rtol=1e-9, equal_nan=True):
                    differ = True
                    break
            differ = differ or any(not np.allclose(evs[a].caps[n], evs[b].caps[n])
                                   for n in set(evs[a].caps) & set(evs[b].caps))
            differ = differ or set(evs[a].caps) != set(evs[b].caps)
            assert differ, f"{rid}: variants {a} and {b} agree on every shared quantity"


# -- exact agreement -------------------------------------------------------------------------------
@pytest.mark.parametrize("rid,variant", VARIANTS, ids=[f"{r}:{v}" for r, v in VARIANTS])
def test_compiled_numbers_agree_with_exact_sympy(rid, variant):
    """Every expression (bound, caps, extras, terms) of every variant, at random constants, to 1e-12
    relative (derived-only keys have no expression and are skipped)."""
    result = get(rid)
    v = result.variant(variant)
    rng = np.random.default_rng(zlib.crc32(f"{rid}:{variant}".encode()))
    for _ in range(2):
        c = {k: float(x) for k, x in random_constants(v.constants(), rng, result=result).items()}
        for key in v.expressions():
            fn, names = v.compiled(key)
            with np.errstate(all="ignore"):
                numeric = np.asarray(fn(*(c[nm] for nm in names)), dtype=float).ravel()
            exact = result.exact(key, variant, **c)
            entries = list(exact) if isinstance(exact, sp.MatrixBase) else [exact]
            for x, e in zip(numeric, entries):
                e = complex(sp.N(e, 30))
                if np.isfinite(x) and e.imag == 0:
                    assert abs(x - e.real) <= 1e-12 * abs(e.real), (rid, variant, key, c, x, e)
                else:  # both non-finite (inf, nan) or complex (a real formula outside its range)
                    assert not (np.isfinite(e.real) and e.imag == 0), (rid, variant, key, c, x, e)


# -- domains ---------------------------------------------------------------------------------------
THM2 = dict(K=5, L=1.0, p=0.64, q=0.5, R=1.0, T=1000, n=10, sigma=1.0, gamma=1e-4)


@pytest.mark.parametrize("rid,bad,pattern", [
    ("sdgt.thm2", {"p": 1.5}, r"p .* must be in \(0, 1\], got 1.5"),
    ("sdgt.thm2", {"K": 2.5}, r"K .* must be an integer >= 1, got 2.5"),
    ("sdgt.thm2", {"sigma": -1.0}, r"sigma .* must be in \[0, inf\), got -1"),
    ("sdgt.thm2", {"q": 0.0}, r"q .* must be in \(0, 1\], got 0"),
    ("sdgt.lemma2", {"mu": 2.0, "L": 1.0}, r"mu must be <= L, got mu=2 > L=1"),
    ("sdgt.thm1", {"c2": 1.5}, r"c2 .* must be in \(2, inf\), got 1.5"),
    ("sdgt.thm1", {"D": 0.3}, r"D .* must be in \(0, 0.25\], got 0.3"),
])
def test_out_of_domain_constants_raise_a_one_line_validation_error(rid, bad, pattern):
    result = get(rid)
    c = random_constants(result.constants(), np.random.default_rng(0), result=result)
    c.update(bad)
    with pytest.raises(ValidationError, match=pattern) as info:
        result.evaluate(**c)
    assert "\n" not in str(info.value)


def test_a_missing_constant_is_named():
    c = dict(THM2)
    del c["R"]
    with pytest.raises(ValidationError, match=r"needs constant\(s\) R"):
        get("sdgt.thm2").bound(**c)


# -- max_step, rounds_to_eps, rate_exponents -------------------------------------------------------
@pytest.mark.parametrize("variant", ["printed", "rederived"])
def test_max_step_is_the_smallest_cap_and_names_it(variant):
    thm2 = get("sdgt.thm2")
    c = random_constants(["K", "L", "p", "q"], np.random.default_rng(2), size=200)
    gamma, binding = thm2.max_step(variant, **c)
    caps = thm2.evaluate(variant, **c, R=1.0, T=10, n=1, sigma=0.0, gamma=1.0).caps
    stacked = np.stack([caps[n] for n in caps])
    np.testing.assert_array_equal(gamma, stacked.min(axis=0))
    names = np.array(list(caps))
    chosen = np.array([b.replace(" (strict)", "") for b in binding])
    np.testing.assert_array_equal(chosen, names[stacked.argmin(axis=0)])
    strict = {c.name for c in thm2.variant(variant).conditions if c.strict}
    assert all(b.endswith("(strict)") == (b.replace(" (strict)", "") in strict) for b in binding)


def test_rounds_to_eps_is_the_smallest_T_with_bound_below_eps():
    thm2 = get("sdgt.thm2")
    rng = np.random.default_rng(3)
    c = {"K": rng.integers(1, 20, 100).astype(float), "L": rng.uniform(0.1, 10, 100),
         "p": rng.uniform(0.05, 1, 100), "q": rng.uniform(0.05, 1, 100), "R": rng.uniform(0.1, 10, 100),
         "n": rng.integers(1, 100, 100).astype(float), "sigma": rng.uniform(0, 1, 100)}
    c["gamma"] = thm2.max_step(**c)[0]
    floor = thm2.bound(**c, T=2.0 ** 70)
    eps = floor * rng.uniform(1.01, 100, 100)
    T = thm2.rounds_to_eps(eps, **c)
    assert np.all(np.isfinite(T)) and np.all(T >= 1) and np.all(T == np.round(T))
    assert np.all(thm2.bound(**c, T=T) <= eps)
    above = T > 1
    assert np.all(thm2.bound(**{k: v[above] for k, v in c.items()}, T=T[above] - 1) > eps[above])
    unreachable = thm2.rounds_to_eps(floor * 0.5, **c)
    assert np.all(np.isinf(unreachable))


def test_rate_exponents_of_theorem2_in_T():
    exponents = get("sdgt.thm2").rate_exponents("printed")
    assert sorted(exponents.values()) == [-1, 0, 0, 0]
    assert [t for t, x in exponents.items() if x == -1] == ["2*R/(K*T*gamma)"]
    rederived = get("sdgt.thm2").rate_exponents("rederived")
    assert sorted(rederived.values()) == [-1, -1, 0, 0, 0]


def test_rate_exponents_of_lemma7_in_T():
    exponents = get("sdgt.lemma7").rate_exponents()
    assert sorted(exponents.values()) == [sp.Rational(-1), sp.Rational(-2, 3), sp.Rational(-1, 2)]


# -- vectorization ---------------------------------------------------------------------------------
@pytest.mark.parametrize("rid,variant", VARIANTS, ids=[f"{r}:{v}" for r, v in VARIANTS])
def test_vectorized_evaluation_equals_the_scalar_loop(rid, variant):
    result = get(rid)
    c = random_constants(result.constants(variant), np.random.default_rng(4), size=6, result=result)
    ev = result.evaluate(variant, **c)
    for i in range(6):
        one = result.evaluate(variant, **{k: v[i] for k, v in c.items()})
        for key in ("bound", *one.extras, *one.caps, *one.terms):
            source = ({"bound": (one.bound, ev.bound)} | {k: (one.extras[k], ev.extras[k]) for k in one.extras}
                      | {k: (one.caps[k], ev.caps[k]) for k in one.caps}
                      | {k: (one.terms[k], ev.terms[k]) for k in one.terms})
            scalar, vector = source[key]
            if scalar is None:
                assert vector is None
                continue
            np.testing.assert_allclose(scalar, np.asarray(vector)[i], rtol=1e-13, equal_nan=True,
                                       err_msg=f"{rid}:{variant}:{key}")
    if result.variant(variant).conditions:
        gamma, binding = result.max_step(variant, **c)
        for i in range(6):
            g1, b1 = result.max_step(variant, **{k: v[i] for k, v in c.items()})
            assert g1 == pytest.approx(gamma[i], rel=1e-13) and b1 == binding[i]
