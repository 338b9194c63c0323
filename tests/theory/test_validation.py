"""Bad input to the theory API (issue 8, theory part): wrong kinds are InputTypeError naming the
constant, NaN and out-of-domain values ValidationError with the range, unknown names
UnknownNameError with a did-you-mean, values outside a result's assumptions an error naming the
assumption, never a silent inf/NaN answer; an error about a constant says what it means. The hypothesis tests enumerate every registered result,
variant and constant, so they cover papers added later."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fedbound.errors import FedboundError, InputTypeError, UnknownNameError, ValidationError
from fedbound.theory import get, results
from fedbound.theory import symbols as S

THM2 = dict(K=5, L=1.0, p=0.64, q=0.5, R=1.0, T=1000, n=10, sigma=1.0, gamma=1e-4)


def valid(result, names) -> dict:
    """A point inside every constant's domain for ``result`` (its assumptions included)."""
    out = {}
    for name in names:
        d = result.domain(name)[0]
        if d.integer:
            out[name] = 3
        elif d.contains(1.0):
            out[name] = 1.0
        else:
            high = d.high if math.isfinite(d.high) else d.low + 2
            out[name] = d.low + 0.5 * (high - d.low)
    if "gamma" in out:
        out["gamma"] = 1e-4
    return out


# -- the examples of issue 8 -------------------------------------------------------------------------
@pytest.mark.parametrize("method,kwargs,name", [
    ("evaluate", {"L": "abc"}, "L"), ("evaluate", {"L": None}, "L"), ("evaluate", {"K": True}, "K"),
    ("max_step", {"K": 1 + 1j}, "K"), ("bound", {"sigma": [1.0, "x"]}, "sigma"),
    ("bound", {"p": np.array([0.5, 0.6 + 1j])}, "p"),
])
def test_wrong_kinds_are_input_type_errors_naming_the_constant(method, kwargs, name):
    with pytest.raises(InputTypeError, match=rf"^{name} must be"):
        getattr(get("sdgt.thm2"), method)(**{**THM2, **kwargs})


@pytest.mark.parametrize("kwargs,pattern", [
    ({"L": math.nan}, "L must be a finite real number, got nan"),
    ({"L": [1.0, math.nan]}, r"L must be a number, got nan at index \(1,\)"),
    ({"L": math.inf}, r"L .* must be in \(0, inf\), got inf"),
    ({"n": 2.5}, r"n .* must be an integer >= 1, got 2.5"),
    ({"p": 0.0}, r"p .* must be in \(0, 1\], got 0"),
])
def test_nan_and_out_of_domain_values_are_validation_errors_with_the_range(kwargs, pattern):
    with pytest.raises(ValidationError, match=pattern):
        get("sdgt.thm2").evaluate(**{**THM2, **kwargs})


def test_a_misspelled_constant_is_an_unknown_name_with_did_you_mean():
    with pytest.raises(UnknownNameError, match=r"unknown constant 'gama' for sdgt.thm2; did you mean 'gamma'"):
        get("sdgt.thm2").evaluate(**{**THM2, "gama": 1})
    with pytest.raises(UnknownNameError, match="did you mean 'sigma'"):
        get("sdgt.thm2").max_step(K=5, L=1, p=0.5, q=0.5, sigm=1)


def test_a_constant_of_the_paper_that_the_variant_does_not_use_is_accepted():
    """Chosen policy: one setting (L, mu, K, gamma, p, q, n, sigma, ...) serves every result of
    SD-GT, so constants of the paper's scope that a variant does not use are ignored; names outside
    the scope are errors."""
    lemma1 = get("sdgt.lemma1")
    assert "mu" not in lemma1.constants()
    lemma1.max_step(K=2, L=1.0, mu=0.5, p=0.5)
    with pytest.raises(ValidationError, match="mu must be <= L"):
        lemma1.max_step(K=2, L=1.0, mu=2.0)   # still validated


@pytest.mark.parametrize("rid", ["sdgt.thm3", "sdgt.cor3"])
def test_mu_zero_is_outside_the_strongly_convex_results(rid):
    result = get(rid)
    c = valid(result, result.constants())
    with pytest.raises(ValidationError, match=r"assumes A4 with mu > 0 .*mu must be in \(0, inf\), got 0"):
        result.evaluate(**{**c, "mu": 0.0})
    if result.variant().conditions:
        with pytest.raises(ValidationError, match="mu > 0"):
            result.max_step(**{**c, "mu": 0.0})


@pytest.mark.parametrize("eps", [math.nan, 0.0, -1.0, math.inf, "0.1", None])
def test_rounds_to_eps_needs_a_finite_positive_eps(eps):
    c = {k: v for k, v in THM2.items() if k != "T"}
    with pytest.raises(FedboundError, match="eps"):
        get("sdgt.thm2").rounds_to_eps(eps, **c)


def test_an_undefined_point_is_an_error_not_nan():
    """0/0 from valid constants (here an overflow to inf - inf) is reported, never returned."""
    c = valid(get("sdgt.thm3"), get("sdgt.thm3").constants("rederived"))
    with pytest.raises(ValidationError, match=r"undefined \(nan"):
        get("sdgt.thm3").evaluate("rederived", **{**c, "L": 1e300})


# -- every registered result, variant and constant ---------------------------------------------------
CASES = [(r.id, v, nm) for r in results() for v in r.variants for nm in r.constants(v)]
METHODS = ("evaluate", "bound", "max_step", "rounds_to_eps", "exact")


def bad_values(domain) -> st.SearchStrategy:
    """Values of the wrong kind or outside ``domain`` (never a valid value)."""
    kinds = st.one_of(st.text(max_size=3), st.complex_numbers(min_magnitude=1e-3, allow_nan=False),
                      st.booleans(), st.none(), st.just([1.0, "a"]), st.just(b"1"))
    outside = [math.nan, math.inf, -math.inf, [1.0, math.nan]]
    if math.isfinite(domain.low):
        outside += [domain.low - 1.0, domain.low - 1e-9] + ([domain.low] if domain.low_open else [])
    if math.isfinite(domain.high):
        outside += [domain.high + 1.0] + ([domain.high] if domain.high_open else [])
    if domain.integer:
        outside += [domain.low + 1.5 if math.isfinite(domain.low) else 0.5]
    return st.one_of(kinds, st.sampled_from(outside).filter(
        lambda x: not np.all(domain.contains(np.asarray(x, dtype=float)))))


def call(result, method, variant, constants):
    if method == "rounds_to_eps":   # a constant named eps is the target accuracy itself
        target = constants.pop("eps", 0.1)
        return result.rounds_to_eps(target, variant, **constants)
    if method == "exact":
        return result.exact("bound" if result.variant(variant).bound is not None else
                            next(iter(result.variant(variant).expressions())), variant, **constants)
    return getattr(result, method)(variant, **constants)


@settings(max_examples=400)
@given(st.sampled_from(CASES).flatmap(lambda case: st.tuples(
    st.just(case), bad_values(get(case[0]).domain(case[2])[0]), st.sampled_from(METHODS))))
def test_bad_values_of_every_constant_raise_a_fedbound_error_naming_it(drawn):
    (rid, variant, name), value, method = drawn
    result = get(rid)
    constants = {**valid(result, result.constants(variant)), name: value}
    with pytest.raises(FedboundError) as info:
        call(result, method, variant, constants)
    assert name in str(info.value) or method in ("bound", "max_step", "rounds_to_eps"), str(info.value)


@settings(max_examples=120)
@given(st.sampled_from(CASES).flatmap(lambda case: st.tuples(
    st.just(case), st.floats(-12, 12).map(lambda e: 10.0 ** e), st.sampled_from(METHODS[:3]))))
def test_valid_values_never_give_nan(drawn):
    """Any value inside a constant's domain gives numbers (inf allowed where documented, e.g. the
    floor of Theorem 3 when rho(A) >= 1) or a FedboundError, never NaN or another exception."""
    (rid, variant, name), scale, method = drawn
    result = get(rid)
    domain = result.domain(name)[0]
    constants = valid(result, result.constants(variant))
    x = constants[name] * scale if not domain.integer else max(1, round(constants[name] * scale))
    if domain.contains(x):
        constants[name] = x
    try:
        out = call(result, method, variant, constants)
    except FedboundError:
        return
    arrays = [out.bound, *out.caps.values(), *out.extras.values(), *out.terms.values()] \
        if method == "evaluate" else list(out) if method == "max_step" else [out]
    for a in arrays:
        if a is not None and np.asarray(a).dtype.kind == "f":
            assert not np.any(np.isnan(a)), (rid, variant, name, x, method)


def test_rounds_to_eps_beyond_exact_float_integers_terminates():
    """Above 2^53 floats no longer split every integer gap: the bisection stops, it does not hang."""
    thm2 = get("sdgt.thm2")
    c = dict(K=5, L=1.0, p=0.64, q=0.5, R=1e30, n=10, sigma=0.0)
    c["gamma"] = float(thm2.max_step(**c)[0])
    T = thm2.rounds_to_eps(1e-3, t_max=2.0 ** 200, **c)
    assert 2.0 ** 53 < T < 2.0 ** 200 and thm2.bound(**c, T=T) <= 1e-3
    assert np.isinf(thm2.rounds_to_eps(1e-3, **c))   # beyond the default t_max = 2^60


def test_errors_about_a_constant_say_what_it_means():
    thm3 = get("sdgt.thm3")
    with pytest.raises(ValidationError, match=r"needs constant\(s\) K \(local steps \(D2D rounds\) per "
                                              r"global round\), Lyap1 \(Theorem 3: initial Lyapunov value"):
        thm3.bound(L=1.0)
    with pytest.raises(ValidationError, match=r"mu must be <= L, got mu=2 > L=1; mu \(strong-convexity "
                                              r"constant \(0 <= mu <= L\)\), L \(smoothness constant\)"):
        thm3.bound(mu=2.0, L=1.0)
    with pytest.raises(ValidationError, match=r"assumes A4 with mu > 0 \(strongly convex\): mu must be in "
                                              r"\(0, inf\), got 0; mu \(strong-convexity constant"):
        thm3.bound(mu=0.0)
    with pytest.raises(ValidationError, match=r"p \(sampling measure min_s\(1 - beta_s\^2\) of SD-GT\) must "
                                              r"be in \(0, 1\], got 2"):
        thm3.bound(p=2.0)
    with pytest.raises(ValidationError, match=r"missing tau_i \(local steps tau_i of each client"):
        get("fednova.thm1").bound(p_i=[0.5, 0.5])
    with pytest.raises(ValidationError, match=r"tau_eff \(effective number of local steps"):
        get("fednova.thm1").bound(p_i=[0.5, 0.5], tau_i=[1, 2], tau_eff=2.0)
    assert S.explain("K", "sdgt") == "K (local steps (D2D rounds) per global round)"
    assert S.explain("nonsense", "sdgt") == "nonsense"


def test_constants_of_unequal_lengths_are_named():
    """Per-element constants of lengths that do not broadcast (K of 2, p of 3) are one error naming
    both, never numpy's broadcasting ValueError (issue 31)."""
    with pytest.raises(ValidationError, match=r"broadcast together.*K \(2,\), p \(3,\)"):
        get("sdgt.thm3").evaluate("main", L=1, mu=0.1, K=[2, 3], p=[0.5, 0.6, 0.7], q=0.5, n=30,
                                  sigma=0, gamma=1e-6, T=100, Lyap1=1)
    ev = get("sdgt.thm3").evaluate("main", L=1, mu=0.1, K=[2, 3], p=[0.5], q=0.5, n=30, sigma=0,
                                   gamma=1e-6, T=100, Lyap1=1)   # a length-1 array broadcasts
    assert np.shape(ev.bound) == (2,)
