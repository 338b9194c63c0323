"""fedbound.theory.fednova.accumulation: the accumulation vectors against the solver recursion of
fedbound.verify.quadratic_rounds, identity (5)-(6), the closed forms (121)-(131) against the generic
A, B, C of (93)-(95) computed from explicit vectors, chi-square and beta^2/kappa^2 (papers/fednova.md
sec. 2.2-2.3, 4.2, 4.6-4.7, 4.12)."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedbound.errors import InputTypeError, UnknownNameError, ValidationError
from fedbound.theory.fednova import accumulation as acc
from fedbound.local_solver import LocalSolver
from fedbound.verify.quadratic_rounds import accumulation

TAU = st.integers(1, 40)
UNIT_OPEN = st.floats(1e-6, 1.0)
RHO = st.floats(0.0, 0.99)


def solver_of(solver: str, param: float, lr: float = 0.1):
    """(keyword for accumulation_vector, the same solver for the recursion of quadratic_rounds)."""
    return {"sgd": ({}, LocalSolver(lr)),
            "prox": ({"alpha": param}, LocalSolver(lr, mu=param / lr)),
            "decay": ({"gamma": param}, LocalSolver(lr, lr_decay=param)),
            "momentum": ({"rho": min(param, 0.99)}, LocalSolver(lr, momentum=min(param, 0.99)))}[solver]


@pytest.mark.parametrize("solver", ["sgd", "prox", "decay", "momentum"])
@given(tau=TAU, param=UNIT_OPEN, lr=st.floats(1e-3, 1.0))
def test_closed_form_vector_equals_the_solver_recursion(solver, tau, param, lr):
    """sec. 2.3 table = the coefficients of -Delta/eta computed by the recursion of App. B (adjoint)."""
    kw, linear = solver_of(solver, param, lr)
    if solver == "prox" and param / lr > 1e12:
        return
    closed = acc.accumulation_vector(solver, tau, **kw)
    np.testing.assert_allclose(closed, accumulation(linear, tau), rtol=1e-11, atol=1e-14)


@pytest.mark.parametrize("solver", ["sgd", "prox", "decay", "momentum"])
@given(tau=TAU, param=UNIT_OPEN)
def test_closed_form_norms_equal_the_norms_of_the_vector(solver, tau, param):
    kw, _ = solver_of(solver, param)
    vec = acc.accumulation_vector(solver, tau, **kw)
    for closed, direct in zip(acc.closed_form_norms(solver, tau, **kw), acc.norms(vec)):
        np.testing.assert_allclose(closed, direct, rtol=1e-11, atol=1e-15)


def test_closed_form_norms_are_vectorized_and_have_the_table_values():
    tau = np.array([1, 2, 5, 30])
    a1, a2, last = acc.closed_form_norms("prox", tau, alpha=1.0)            # alpha = 1: a = [0, ..., 0, 1]
    np.testing.assert_array_equal(a1, 1.0)
    np.testing.assert_array_equal(a2, 1.0)
    a1, a2, last = acc.closed_form_norms("momentum", tau, rho=0.9)
    np.testing.assert_allclose(a1, (tau - 0.9 * (1 - 0.9 ** tau) / 0.1) / 0.1, rtol=1e-13)   # (45)
    np.testing.assert_array_equal(last, 1.0)
    a1, _, last = acc.closed_form_norms("decay", tau, gamma=0.0)
    np.testing.assert_array_equal(a1, 1.0)
    np.testing.assert_array_equal(last, [1, 0, 0, 0])
    a1, a2, _ = acc.closed_form_norms("prox", 50, alpha=np.array([1e-14, 1e-3, 0.5]))
    assert a1[0] == pytest.approx(50, rel=1e-11) and a2[0] == pytest.approx(50, rel=1e-11)


def test_norms_of_ragged_vectors_equal_the_per_client_loop():
    rng = np.random.default_rng(0)
    vecs = [rng.random(k) for k in (1, 7, 3, 12)]
    a1, a2, last = acc.norms(vecs)
    np.testing.assert_allclose(a1, [v.sum() for v in vecs], rtol=1e-15)
    np.testing.assert_allclose(a2, [v @ v for v in vecs], rtol=1e-15)
    np.testing.assert_array_equal(last, [v[-1] for v in vecs])
    rows = rng.random((3, 5))
    np.testing.assert_allclose(acc.norms(rows)[0], rows.sum(1))


@given(taus=st.lists(TAU, min_size=1, max_size=6), seed=st.integers(0, 2 ** 32 - 1),
       eta=st.floats(1e-3, 10.0), d=st.integers(1, 4))
def test_identity_5_6_holds_for_arbitrary_vectors_and_gradients(taus, seed, eta, d):
    """(5)-(6) [L115-L116]: sum_i p_i (-eta G_i a_i) = -tau_eff sum_i w_i eta G_i a_i/||a_i||_1."""
    rng = np.random.default_rng(seed)
    a = [rng.random(t) + (rng.random(t) < 0.2) * 5 for t in taus]
    a = [v if v.sum() > 0 else np.ones_like(v) for v in a]
    G = [rng.standard_normal((d, t)) for t in taus]
    p = rng.dirichlet(np.ones(len(taus)))
    a1, _, _ = acc.norms(a)
    tau_eff, w = acc.implicit_weights(p, a1)
    fedavg = sum(p[i] * (-eta * G[i] @ a[i]) for i in range(len(taus)))
    general = -tau_eff * sum(w[i] * eta * G[i] @ a[i] / a1[i] for i in range(len(taus)))
    np.testing.assert_allclose(general, fedavg, rtol=1e-12, atol=1e-12 * np.abs(fedavg).max())
    assert np.isclose(w.sum(), 1.0) and np.isclose(tau_eff, p @ a1)


def generic_abc(p, vectors):
    """A, B, C of (93)-(95) from explicit accumulation vectors, at the implicit weights (6)."""
    a1, a2, last = acc.norms(vectors)
    tau_eff, w = acc.implicit_weights(p, a1)
    return (tau_eff, w, *acc.abc(w, a1, a2, last, tau_eff))


@given(taus=st.lists(TAU, min_size=1, max_size=8), seed=st.integers(0, 2 ** 32 - 1))
def test_fedavg_closed_forms_121_124_equal_the_generic_abc(taus, seed):
    p = np.random.default_rng(seed).dirichlet(np.ones(len(taus)))
    closed = acc.fedavg_closed_forms(p, taus)
    tau_eff, w, A, B, C = generic_abc(p, [np.ones(t) for t in taus])
    for key, value in zip(("tau_eff", "w", "A", "B", "C"), (tau_eff, w, A, B, C)):
        np.testing.assert_allclose(closed[key], value, rtol=1e-12, atol=1e-13, err_msg=key)
    ep = p @ np.array(taus, float)
    var = p @ np.array(taus, float) ** 2 - ep ** 2                      # (123): E_p[tau] - 1 + var_p/E_p
    assert closed["B"] == pytest.approx(ep - 1 + var / ep, rel=1e-9, abs=1e-12)


@given(taus=st.lists(TAU, min_size=1, max_size=8), seed=st.integers(0, 2 ** 32 - 1), alpha=UNIT_OPEN)
def test_fedprox_closed_forms_127_131_equal_the_generic_abc(taus, seed, alpha):
    p = np.random.default_rng(seed).dirichlet(np.ones(len(taus)))
    closed = acc.fedprox_closed_forms(p, taus, alpha)
    vectors = [acc.accumulation_vector("prox", t, alpha=alpha) for t in taus]
    tau_eff, w, A, B, C = generic_abc(p, vectors)
    for key, value in zip(("tau_eff", "w", "A", "B", "C"), (tau_eff, w, A, B, C)):
        np.testing.assert_allclose(closed[key], value, rtol=1e-11, atol=1e-13, err_msg=key)


def test_fedprox_closed_forms_broadcast_over_alpha():
    p, taus = np.array([0.2, 0.3, 0.5]), np.array([3, 10, 40])
    alphas = np.array([1e-9, 0.1, 1.0])
    batch = acc.fedprox_closed_forms(p, taus, alphas)
    for i, alpha in enumerate(alphas):
        one = acc.fedprox_closed_forms(p, taus, alpha)
        for key in one:
            np.testing.assert_allclose(batch[key][i], one[key], rtol=1e-14)
    assert batch["tau_eff"][2] == 1.0 and np.allclose(batch["w"][2], p)     # alpha = 1 [L185]


def test_fednova_derived_constants_sec_4_3():
    """[derived] FedNova with SGD (w = p, tau_eff = sum p_i tau_i): A = m tau_eff sum p_i^2/tau_i,
    B = sum p_i (tau_i - 1), C = tau_max (tau_max - 1); uniform p: A = tau_bar mean(1/tau_i) >= 1."""
    taus = np.array([1, 2, 5, 10])
    p = np.full(4, 0.25)
    a1, a2, last = acc.norms([np.ones(t) for t in taus])
    tau_eff = p @ taus
    A, B, C = acc.abc(p, a1, a2, last, tau_eff)
    assert A == pytest.approx(4 * tau_eff * np.sum(p ** 2 / taus)) and A >= 1
    assert B == pytest.approx(taus.mean() - 1) and C == 90


def test_time_averaged_abc_is_the_mean_of_the_rounds():
    rng = np.random.default_rng(1)
    T, m = 5, 3
    taus = rng.integers(1, 20, (T, m))
    p = np.array([0.5, 0.3, 0.2])
    a1, a2, last = (np.array(x, float) for x in zip(*(acc.closed_form_norms("momentum", taus[t], rho=0.5)
                                                         for t in range(T))))
    out = acc.time_averaged_abc(p, a1, a2, last, tau_eff=7.0)
    per_round = [acc.abc(p, a1[t], a2[t], last[t], 7.0) for t in range(T)]
    np.testing.assert_allclose([out["A_tilde"], out["B_tilde"], out["C_tilde"]], np.mean(per_round, axis=0))
    assert out["a1_max"] == a1.max()


def test_chi2():
    p = np.array([0.5, 0.5])
    assert acc.chi2(p, p) == 0
    assert acc.chi2(p, np.array([0.25, 0.75])) == pytest.approx(1 / 3)       # Lemma 4, tau = (1, 3)
    with pytest.raises(ValidationError, match="w_i > 0"):
        acc.chi2(p, np.array([0.0, 1.0]))
    with pytest.raises(ValidationError, match="sum to 1"):
        acc.chi2(p, np.array([0.5, 0.6]))


def test_beta2_kappa2_for_identity_hessians_is_the_weighted_spread():
    """sec. 4.12: H_i = I gives beta^2 = 1 and kappa^2 = sum_i w_i ||b_i - bbar_w||^2."""
    rng = np.random.default_rng(2)
    b = rng.standard_normal((4, 3))
    w = rng.dirichlet(np.ones(4))
    beta2, kappa2 = acc.beta2_kappa2_quadratic(w, np.broadcast_to(np.eye(3), (4, 3, 3)), b)
    assert beta2 == 1.0
    assert kappa2 == pytest.approx(np.sum(w * np.sum((b - w @ b) ** 2, axis=1)), rel=1e-10)


def test_bad_inputs_are_named():
    with pytest.raises(UnknownNameError):
        acc.accumulation_vector("adam", 3)
    with pytest.raises(ValidationError, match="alpha"):
        acc.accumulation_vector("prox", 3, alpha=0.0)
    with pytest.raises(ValidationError, match="rho"):
        acc.closed_form_norms("momentum", 3, rho=1.0)
    with pytest.raises(ValidationError, match="needs gamma"):
        acc.accumulation_vector("decay", 3)
    with pytest.raises(InputTypeError):
        acc.accumulation_vector("sgd", 2.5)
    with pytest.raises(ValidationError, match="tau=4"):
        acc.accumulation_vector("custom", 4, a=[1.0, 2.0])
    with pytest.raises(ValidationError, match=">= 0"):
        acc.norms(np.array([1.0, -1.0]))
    with pytest.raises(ValidationError, match="integers"):
        acc.fedavg_closed_forms([0.5, 0.5], [1.5, 2])
    np.testing.assert_array_equal(acc.accumulation_vector("custom", None, a=[0.0, 2.0]), [0.0, 2.0])


def test_theorem_constants_for_fedavg_and_fednova():
    taus = [1, 3, 8]
    p = np.array([0.2, 0.5, 0.3])
    vectors = [acc.accumulation_vector("sgd", t) for t in taus]
    avg = acc.theorem_constants(p, vectors)
    closed = acc.fedavg_closed_forms(p, taus)
    for key, name in (("tau_eff", "tau_eff"), ("A", "A"), ("B", "B"), ("C", "C")):
        assert avg[name] == pytest.approx(closed[key], rel=1e-13)
    assert avg["chi2"] == pytest.approx(acc.chi2(p, closed["w"])) and avg["chi2"] > 0
    assert avg["tau_bar"] == 4.0 and avg["a1_max"] == 8.0 and avg["m"] == 3
    nova = acc.theorem_constants(p, vectors, "normalized", tau_eff=5.0)
    assert nova["chi2"] == 0 and nova["tau_eff"] == 5.0
    assert nova["A"] == pytest.approx(3 * 5.0 * np.sum(p ** 2 / np.array(taus)))     # sec. 4.3 [derived]
    assert nova["B"] == pytest.approx(p @ (np.array(taus) - 1))
    with pytest.raises(ValidationError, match="implied"):
        acc.theorem_constants(p, vectors, tau_eff=5.0)
