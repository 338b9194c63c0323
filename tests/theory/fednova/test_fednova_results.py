"""FedNova's registered results (fednova.*): each checked against an independent computation from
papers/fednova.md (the generic engine tests in tests/theory/test_engine.py add exact-sympy agreement,
vectorization and domain checks for all of them)."""
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.theory import get
from fedbound.theory import symbols as S
from fedbound.theory.fednova import accumulation as acc
from fedbound.theory.fednova.fedavg_fedprox import best_alpha, exact_fedprox_bound
from fedbound.local_solver import LocalSolver
from fedbound.verify.quadratic_rounds import QuadraticProblem, fixed_point, limit_fixed_point


def sym(name):
    return S.constant(name, "fednova").symbol


THM1_EXTRA = dict(Delta=2.0, T=500, L=1.5, sigma=0.3, kappa2=0.7, beta2=1.4)


# Theorem 1 ---------------------------------------------------------------------------------------

def test_thm1_bound_97_and_its_conditions():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    c = dict(acc.theorem_constants(p, [acc.accumulation_vector("momentum", t, rho=0.5) for t in (1, 2, 5, 10)]),
             **THM1_EXTRA)
    del c["w"], c["chi2"], c["tau_bar"]
    thm1 = get("fednova.thm1")
    eta, binding = thm1.max_step("printed", **{k: c[k] for k in ("L", "tau_eff", "C", "beta2")})
    cap98 = 1 / (2 * c["L"] * c["tau_eff"])
    cap99 = math.sqrt(1 / ((2 * c["beta2"] + 1) * 4 * c["L"] ** 2 * c["C"]))
    assert eta == pytest.approx(min(cap98, cap99), rel=1e-14)
    assert binding == ("(98)" if cap98 < cap99 else "(99)")
    ev = thm1.evaluate("printed", **c, eta=float(eta))
    assert ev.all_conditions_hold and ev.extras["D"] <= 1 / (2 * c["beta2"] + 1) * (1 + 1e-12)
    g, L, s2 = float(eta), c["L"], c["sigma"] ** 2
    typed = (4 * c["Delta"] / (g * c["tau_eff"] * c["T"]) + 4 * g * L * s2 * c["A"] / 4
             + 6 * g ** 2 * L ** 2 * s2 * c["B"] + 12 * g ** 2 * L ** 2 * c["kappa2"] * c["C"])
    assert ev.bound == pytest.approx(typed, rel=1e-13)
    # (101) is more conservative than (98)-(99) and implies them
    eta101, _ = thm1.max_step("sufficient", **{k: c[k] for k in ("L", "tau_eff", "a1_max", "beta2")})
    assert eta101 <= eta
    assert thm1.evaluate("printed", **c, eta=float(eta101)).all_conditions_hold
    assert not thm1.evaluate("printed", **c, eta=float(eta) * 1.001).all_conditions_hold


def test_thm1_sched_is_97_at_the_sqrt_schedule_and_T_min_makes_it_admissible():
    thm1, sched = get("fednova.thm1"), get("fednova.thm1_sched")
    eta = sched.variant("printed").extras["eta"]
    difference = thm1.variant("printed").bound.subs(sym("eta"), eta) - sched.variant("printed").bound
    assert sp.simplify(difference) == 0
    c = dict(THM1_EXTRA, tau_eff=7.0, A=1.3, B=4.0, C=30.0, a1_max=8.0, m=10, tau_bar=6.0)
    ev = sched.evaluate(**c)
    for key, names in (("T_min_98_99", ("L", "tau_eff", "C", "beta2")),
                       ("T_min_101", ("L", "tau_eff", "a1_max", "beta2"))):
        variant = "printed" if key == "T_min_98_99" else "sufficient"
        T_min = float(ev.extras[key])
        for T, admissible in ((math.ceil(T_min * (1 + 1e-9)), True), (math.floor(T_min * 0.99), False)):
            at_T = sched.evaluate(**{**c, "T": T})
            holds = thm1.evaluate(variant, **{**c, "T": T}, eta=float(at_T.extras["eta"])).all_conditions_hold
            predicate = {"T_min_98_99": "eta satisfies (98)-(99)", "T_min_101": "eta satisfies (101)"}[key]
            assert bool(holds) == admissible == bool(at_T.predicates[predicate]), (key, T)
    assert sorted(sched.rate_exponents().values()) == [-1, -1, sp.Rational(-1, 2), sp.Rational(-1, 2)]


def test_thm1_round_91_is_below_89_under_the_conditions():
    rnd = get("fednova.thm1_round")
    rng = np.random.default_rng(0)
    c = {"L": rng.uniform(0.1, 10, 200), "tau_eff": rng.uniform(1, 100, 200), "C": rng.uniform(0, 1e4, 200),
         "beta2": 1 + rng.uniform(0, 10, 200), "A": rng.uniform(0.5, 3, 200), "B": rng.uniform(0, 100, 200),
         "m": rng.integers(1, 50, 200).astype(float), "sigma": rng.uniform(0, 3, 200),
         "kappa2": rng.uniform(0, 3, 200), "grad_sq": rng.uniform(0, 5, 200)}
    eta = rnd.max_step("printed", **{k: c[k] for k in ("L", "tau_eff", "C", "beta2")})[0]
    eta = eta * rng.uniform(1e-3, 1, 200)
    unsimplified = rnd.evaluate("unsimplified", **c, eta=eta)
    assert np.all(unsimplified.all_conditions_hold)
    assert np.all(unsimplified.bound <= rnd.bound("printed", **c, eta=eta) + 1e-12)


# Theorem 2, Lemma 3 ------------------------------------------------------------------------------

def test_thm2_explicit_is_10_with_eps_opt_from_97():
    thm2 = get("fednova.thm2")
    c = dict(THM1_EXTRA, tau_eff=7.0, A=1.3, B=4.0, C=30.0, m=10, chi2=0.4, eta=1e-3)
    eps = get("fednova.thm1").bound("printed", **{k: v for k, v in c.items() if k != "chi2"})
    ev = thm2.evaluate("explicit", **c)
    assert ev.bound == pytest.approx(2 * (0.4 * (1.4 - 1) + 1) * eps + 2 * 0.4 * 0.7, rel=1e-13)
    assert ev.bound == pytest.approx(thm2.bound("printed", eps_opt=eps, chi2=0.4, beta2=1.4, kappa2=0.7))
    assert ev.extras["floor"] == pytest.approx(0.56)


@settings(max_examples=40)
@given(seed=st.integers(0, 2 ** 32 - 1), m=st.integers(2, 5), d=st.integers(1, 3), beta_factor=st.floats(1.0, 4.0),
       identity=st.booleans())
def test_lemma3_on_random_quadratics(seed, m, d, beta_factor, identity):
    """(103) and (110) at random x, with beta^2, kappa^2 computed at w (sec. 4.12)."""
    rng = np.random.default_rng(seed)
    if identity:
        H = np.broadcast_to(np.eye(d), (m, d, d))
    else:
        Q = rng.standard_normal((m, d, d))
        H = Q @ np.swapaxes(Q, 1, 2) + 0.1 * np.eye(d)
    b = rng.standard_normal((m, d))
    p, w = rng.dirichlet(np.ones(m)), rng.dirichlet(np.ones(m)) * 0.98 + 0.02 / m
    beta2_min, _ = acc.beta2_kappa2_quadratic(w, H, b)
    beta2, kappa2 = acc.beta2_kappa2_quadratic(w, H, b, beta2=beta2_min * beta_factor + (beta_factor - 1))
    if not np.isfinite(kappa2):
        return
    chi2 = float(acc.chi2(p, w))
    lemma3 = get("fednova.lemma3")
    for x in rng.standard_normal((20, d)) * 3:
        grads = np.einsum("nij,nj->ni", H, x - b)
        gF, gFt = p @ grads, w @ grads
        ev = lemma3.evaluate(chi2=chi2, beta2=beta2, kappa2=kappa2, grad_sq=float(gFt @ gFt))
        scale = 1e-9 * (1 + ev.bound)
        assert (gF - gFt) @ (gF - gFt) <= ev.bound + scale
        assert gF @ gF <= ev.extras["grad_F_bound"] + scale


# Lemma 4 -----------------------------------------------------------------------------------------

def test_lemma4_numbers_and_the_exact_fedavg_limit():
    """tau = (1, 3), a = 1: w = (1/4, 3/4), lim ||grad F||^2 = 0.25 = chi^2 kappa^2 with chi^2 = 1/3,
    kappa^2 = 3/4 (corrected); the paper's pair (2/3, 3/8) has the same product (notes sec. 4.5)."""
    lemma4 = get("fednova.lemma4")
    corrected = lemma4.evaluate("corrected", tau_1=1, tau_2=3, a=1.0)
    printed = lemma4.evaluate("printed", tau_1=1, tau_2=3, a=1.0)
    assert corrected.extras["chi2"] == pytest.approx(1 / 3) and corrected.extras["kappa2"] == pytest.approx(0.75)
    assert printed.extras["chi2"] == pytest.approx(2 / 3) and printed.extras["kappa2"] == pytest.approx(0.375)
    assert corrected.bound == pytest.approx(0.25) and printed.bound == pytest.approx(0.25)
    # the exact eta -> 0 FedAvg fixed point of App. A (quadratic_rounds), and its finite-eta version
    problem = QuadraticProblem.build(np.ones((2, 1, 1)), np.array([[1.0], [-1.0]]))
    x_limit = limit_fixed_point(problem, [1, 3], LocalSolver(0.1))
    grad_F = problem.p @ (x_limit - problem.b[:, 0])                 # F = (F_1 + F_2)/2, H_i = 1
    assert grad_F ** 2 == pytest.approx(corrected.extras["limit_grad_sq"], rel=1e-14)
    assert grad_F ** 2 == pytest.approx(0.25, rel=1e-14)
    near = [fixed_point(problem, [1, 3], LocalSolver(lr))["fixed_point"][0] for lr in (1e-3, 1e-5)]
    assert abs(near[1] - x_limit[0]) < abs(near[0] - x_limit[0]) < 1e-3
    # kappa^2 and chi^2 at FedAvg's implicit weights, from their definitions
    _, w = acc.implicit_weights(problem.p, np.array([1.0, 3.0]))
    assert acc.chi2(problem.p, w) == pytest.approx(corrected.extras["chi2"])
    _, kappa2 = acc.beta2_kappa2_quadratic(w, problem.H, problem.b, beta2=1.0)
    assert kappa2 == pytest.approx(corrected.extras["kappa2"], rel=1e-12)
    # FedNova is consistent in the limit: grad F = 0
    assert limit_fixed_point(problem, [1, 3], LocalSolver(0.1), "normalized")[0] == pytest.approx(0.0, abs=1e-15)


@given(t1=st.integers(1, 200), t2=st.integers(1, 200), a=st.floats(1e-2, 1e2))
def test_lemma4_limit_equals_chi2_kappa2_in_both_variants(t1, t2, a):
    lemma4 = get("fednova.lemma4")
    for variant in ("printed", "corrected"):
        ev = lemma4.evaluate(variant, tau_1=t1, tau_2=t2, a=a)
        assert ev.bound == pytest.approx(float(ev.extras["limit_grad_sq"]), rel=1e-12, abs=1e-300)


# Corollary 1, FedProx, Corollary 2 --------------------------------------------------------------

def test_cor1_is_thm1_with_the_fedavg_closed_forms():
    taus = np.array([2, 3, 7, 12])
    p = np.full(4, 0.25)
    closed = acc.fedavg_closed_forms(p, taus)
    c = dict(Delta=1.0, T=300, L=2.0, sigma=0.5, kappa2=0.2, beta2=1.5, m=4,
             tau_bar=float(taus.mean()), tau_var=float(taus.var()), tau_max=int(taus.max()))
    cor1 = get("fednova.cor1")
    ev = cor1.evaluate("explicit", **c, eta=1e-3)
    assert ev.extras["B"] == pytest.approx(closed["B"], rel=1e-13) and ev.extras["C"] == closed["C"]
    assert closed["A"] == pytest.approx(1.0) and closed["tau_eff"] == pytest.approx(c["tau_bar"])
    thm1 = get("fednova.thm1").evaluate("printed", Delta=1.0, T=300, L=2.0, sigma=0.5, kappa2=0.2, beta2=1.5,
                                        m=4, tau_eff=closed["tau_eff"], A=closed["A"],
                                        B=closed["B"], C=closed["C"], eta=1e-3)
    assert ev.bound == pytest.approx(thm1.bound, rel=1e-13)
    assert ev.caps == pytest.approx(thm1.caps, rel=1e-13)
    sched = cor1.evaluate("sqrt_schedule", **c)
    at_eta = cor1.evaluate("explicit", **c, eta=float(sched.extras["eta"]))
    assert sched.bound == pytest.approx(at_eta.bound, rel=1e-13)


def test_fedprox_127_131_printed_forms_and_the_limits_132():
    v = get("fednova.fedprox").variant("printed")
    alpha, tau = sym("alpha"), sym("tau")
    r = 1 - alpha
    printed = {"a1": (1 - r ** tau) / alpha, "a2sq": (1 - r ** (2 * tau)) / (1 - r ** 2)}
    printed["C"] = printed["a1"] * (printed["a1"] - 1)
    fedavg = {"a1": tau, "a2sq": tau, "C": tau * (tau - 1)}
    for key in ("a1", "a2sq", "C"):
        expr = sp.expand_func(v.extras[key])
        for t in (1, 2, 7):
            assert sp.simplify((expr - printed[key]).subs(tau, t)) == 0, key
            assert sp.limit(expr.subs(tau, t), alpha, 0) == fedavg[key].subs(tau, t), key   # (132)
    ev = get("fednova.fedprox").evaluate(alpha=np.array([1e-12, 0.05, 1.0]), tau=9)
    closed = acc.closed_form_norms("prox", 9, alpha=np.array([1e-12, 0.05, 1.0]))
    np.testing.assert_allclose(ev.extras["a1"], closed[0], rtol=1e-13)
    np.testing.assert_allclose(ev.extras["a2sq"], closed[1], rtol=1e-13)
    np.testing.assert_allclose(ev.extras["C"], closed[0] * (closed[0] - 1), rtol=1e-10)


def test_cor2_printed_alpha_misses_the_derivative_zero_by_the_factor_2():
    cor2 = get("fednova.cor2")
    c = dict(m=30, tau_bar=1500.0, T=1e6)
    printed, rederived = cor2.evaluate("printed", **c), cor2.evaluate("rederived", **c)
    scale = c["tau_bar"] / math.sqrt(c["m"] * c["tau_bar"] * c["T"])
    assert printed.extras["derivative_138"] == pytest.approx(-scale, rel=1e-12)
    assert abs(rederived.extras["derivative_138"]) <= 1e-12 * scale
    assert rederived.extras["alpha_star"] / printed.extras["alpha_star"] == pytest.approx(2 ** (1 / 3))
    assert rederived.bound < printed.bound
    for variant in ("printed", "rederived"):                                     # (133)
        assert set(cor2.rate_exponents(variant).values()) == {sp.Rational(-2, 3), sp.Rational(-1, 2)}


def test_cor2_best_alpha_of_the_exact_bound_scales_as_T_to_the_minus_one_sixth():
    """notes sec. 4.8 check: m = 30, tau in {1000, 2000}, L = sigma^2 = kappa^2 = Delta = 1; the slope of
    log alpha* in log T is about -1/6 on T in [1e3, 1e12] (the notes measured -0.163 to -0.166)."""
    taus = np.repeat([1000, 2000], 15)
    p = np.full(30, 1 / 30)
    Ts = np.logspace(3, 12, 10)
    alphas = np.array([best_alpha(p, taus, T) for T in Ts])
    slopes = np.diff(np.log(alphas)) / np.diff(np.log(Ts))
    assert np.all((slopes > -0.175) & (slopes < -0.155)), slopes
    assert np.polyfit(np.log(Ts), np.log(alphas), 1)[0] == pytest.approx(-1 / 6, abs=0.005)
    for alpha, T in zip(alphas[::3], Ts[::3]):          # a minimum: both neighbours are worse
        values = exact_fedprox_bound(alpha * np.array([0.99, 1.0, 1.01]), p, taus, T)
        assert values[1] <= values[0] and values[1] <= values[2]


# Theorem 3, Corollary 3 --------------------------------------------------------------------------

def test_thm3_with_fixed_vectors_is_thm1_at_w_equal_p():
    p = np.array([0.3, 0.7])
    vectors = [acc.accumulation_vector("sgd", t) for t in (2, 5)]
    a1, a2, last = acc.norms(vectors)
    tau_eff = float(p @ a1)
    rounds = acc.time_averaged_abc(p, np.tile(a1, (4, 1)), np.tile(a2, (4, 1)), np.tile(last, (4, 1)), tau_eff)
    A, B, C = acc.abc(p, a1, a2, last, tau_eff)
    common = dict(Delta=1.0, T=100, L=1.0, sigma=0.2, kappa2=0.3, beta2=1.2, m=2, tau_eff=tau_eff,
                  a1_max=float(a1.max()), eta=0.01)
    thm3 = get("fednova.thm3").evaluate(**common, A_tilde=rounds["A_tilde"], B_tilde=rounds["B_tilde"],
                                        C_tilde=rounds["C_tilde"])
    thm1 = get("fednova.thm1").evaluate("sufficient", **common, A=A, B=B, C=C)
    assert thm3.bound == pytest.approx(thm1.bound, rel=1e-14)
    assert sorted(thm3.caps.values()) == pytest.approx(sorted(thm1.caps.values()))
    eta = get("fednova.thm3_sched").variant("printed").extras["eta"]
    difference = get("fednova.thm3").variant("printed").bound.subs(sym("eta"), eta) - \
        get("fednova.thm3_sched").variant("printed").bound
    assert sp.simplify(difference) == 0


def test_cor3_sched_rederived_is_182_at_eta_and_printed_is_off_by_tau_tilde():
    cor3, sched = get("fednova.cor3"), get("fednova.cor3_sched")
    eta = sched.variant("rederived").extras["eta"]
    assert sp.simplify(cor3.variant("printed").bound.subs(sym("eta"), eta) - sched.variant("rederived").bound) == 0
    gap = sched.variant("rederived").bound - sched.variant("printed").bound
    tau_eff, tau_tilde = sym("tau_eff"), sym("tau_tilde")
    second = 8 * S.L * (S.sigma ** 2 + 3 * sym("kappa2")) * tau_eff / sp.sqrt(sym("q") * tau_tilde * S.T)
    assert sp.simplify(gap - second * (1 - 1 / tau_tilde)) == 0
    c = dict(L=1.0, tau_eff=30.0, q=5, beta2=2.0, C=870.0)
    eta_max, binding = cor3.max_step(**c)
    assert eta_max == pytest.approx(min(1 / 60, 1 / (12 * 30 * (1 + 2 / 5)),
                                        1 / (2 * math.sqrt(870 * 25))), rel=1e-14)
    assert binding == "6 tau_eff eta L (1 + beta^2/q) <= 1/2"


@settings(max_examples=25)
@given(seed=st.integers(0, 2 ** 32 - 1), m=st.integers(2, 5), d=st.integers(1, 3), identity=st.booleans())
def test_fedavg_exact_limit_is_below_the_theorem2_floor(seed, m, d, identity):
    """notes sec. 4.4 check (b) on the exact engine: FedAvg's eta -> 0 fixed point (quadratic_rounds) has
    grad F~ = 0, so ||grad F||^2 <= chi^2 kappa^2(w) <= 2 chi^2 kappa^2 (Theorem 2's floor); FedNova's is 0."""
    rng = np.random.default_rng(seed)
    if identity:
        H = np.broadcast_to(np.eye(d), (m, d, d)).copy()
    else:
        Q = rng.standard_normal((m, d, d))
        H = Q @ np.swapaxes(Q, 1, 2) + 0.2 * np.eye(d)
    problem = QuadraticProblem.build(H, rng.standard_normal((m, d)), rng.dirichlet(np.ones(m)))
    taus = rng.integers(1, 30, m)
    x = limit_fixed_point(problem, taus, LocalSolver(0.01))
    grads = np.einsum("nij,nj->ni", problem.H, x - problem.b)
    _, w = acc.implicit_weights(problem.p, taus.astype(float))
    assert np.linalg.norm(w @ grads) <= 1e-9 * (1 + np.abs(grads).max())           # stationary for F~
    beta2_min, _ = acc.beta2_kappa2_quadratic(w, problem.H, problem.b)
    beta2 = beta2_min if identity else 2 * beta2_min + 1       # kappa^2 is finite above beta2_min
    _, kappa2 = acc.beta2_kappa2_quadratic(w, problem.H, problem.b, beta2=beta2)
    chi2 = float(acc.chi2(problem.p, w))
    grad_F = problem.p @ grads
    floor = get("fednova.thm2").evaluate(eps_opt=0.0, chi2=chi2, beta2=1.0, kappa2=kappa2).extras["floor"]
    assert grad_F @ grad_F <= chi2 * kappa2 * (1 + 1e-9) + 1e-12 and chi2 * kappa2 <= floor
    x_nova = limit_fixed_point(problem, taus, LocalSolver(0.01), "normalized")
    assert np.linalg.norm(problem.p @ np.einsum("nij,nj->ni", problem.H, x_nova - problem.b)) <= 1e-9
