"""AFGA Lemmas F.1-F.9 (seed 000, Appendix F): exact enumerations behind the audit's instances,
statement versus proof, and the deterministic lemmas F.7 and F.9 as hypothesis properties."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fedbound.theory import get
from fedbound.theory.afga.audit import f8_instance_norm, f8_ring_norm


def subsets(n, m):
    return [np.isin(np.arange(n), s).astype(float) for s in itertools.combinations(range(n), m)]


@pytest.mark.parametrize("n,m", [(2, 1), (5, 2), (6, 3), (7, 7)])
def test_lemma_F6_is_an_equality_for_one_cluster(n, m):
    y = np.random.default_rng(n * m).normal(size=(n, 3))
    exact = np.mean([np.sum((s @ y) ** 2) for s in subsets(n, m)])
    rhs = get("afga.lemmaF6").bound(y_sum_sq=np.sum(y.sum(0) ** 2), y_sq_sum=np.sum(y ** 2),
                                    m=m, n=n, K=1)
    assert exact == pytest.approx(float(rhs), rel=1e-12)


def test_lemma_F6_is_an_inequality_for_two_clusters():
    n, m = 4, 2
    rng = np.random.default_rng(3)
    for _ in range(20):
        y = rng.normal(size=(2, n, 2)) + rng.normal(size=2)
        exact = np.mean([np.sum((a @ y[0] + b @ y[1]) ** 2) for a in subsets(n, m) for b in subsets(n, m)])
        rhs = get("afga.lemmaF6").bound(y_sum_sq=np.sum(y.sum((0, 1)) ** 2), y_sq_sum=np.sum(y ** 2),
                                        m=m, n=n, K=2)
        assert exact <= rhs * (1 + 1e-12)


@pytest.mark.parametrize("n,m,I", [(4, 2, 2), (5, 1, 3), (4, 3, 2)])
def test_instance_expectations_by_enumeration(n, m, I):
    """The audit's instance (K = 1, W = J, sigma = 0, f_i = <c_i, x>, sum c_i = 0): E||xbar_t - x_r||^2
    = t eta_l^2 q sigma_g^2/n and E||Delta_r||^2 = I eta_l^2 q sigma_g^2/n, enumerating every S_t
    sequence and S_r; the gossip W = J is applied explicitly."""
    rng = np.random.default_rng(n + m + I)
    c = rng.normal(size=(n, 3))
    c -= c.mean(0)
    eta_l, x_r = 0.1, rng.normal(size=3)
    sigma_g2 = np.mean(np.sum(c ** 2, 1))
    q = m * (n - m) / (n * (n - 1))
    W = np.full((n, n), 1 / n)
    per_t = np.zeros(I + 1)
    delta = []
    for seq in itertools.product(subsets(n, m), repeat=I):
        X = np.tile(x_r, (n, 1))
        for t, s in enumerate(seq):
            X = W @ (X - eta_l * s[:, None] * c)
            per_t[t + 1] += np.sum((X.mean(0) - x_r) ** 2)
        delta += [np.sum(((s_r @ (X - x_r)) / m) ** 2) for s_r in subsets(n, m)]
    per_t /= math.comb(n, m) ** I
    np.testing.assert_allclose(per_t, np.arange(I + 1) * eta_l ** 2 * q * sigma_g2 / n, rtol=1e-10, atol=1e-15)
    assert np.mean(delta) == pytest.approx(I * eta_l ** 2 * q * sigma_g2 / n, rel=1e-10)


def test_lemma_F1_statement_fails_and_proof_holds_on_the_instance():
    n, m, I, L, sigma_g = 50, 5, 24, 1.0, 2.0
    eta_l = 1 / (8 * np.sqrt(2) * I * L)
    unit = eta_l ** 2 * m * (n - m) / (n * (n - 1)) * sigma_g ** 2 / n
    common = dict(I=I, eta_l=eta_l, alpha=1.0, grad_sq=0.0, sigma_c=0.0, sigma=0.0, n=n)
    f1 = get("afga.lemmaF1")
    for t in range(I):
        lhs = (t + 1) * unit
        stated = f1.bound("printed", cons_inter=t * unit, **common)
        proved = f1.bound("rederived", cons_inter=t * unit, cons_intra=0.0, L=L, m=m,
                          sigma_l=sigma_g, **common)
        assert lhs <= proved
        assert (lhs <= stated) == (t >= (8 * I - 2) / 3)   # C_I t >= t + 1 iff t >= 2(4I-1)/3


def test_lemma_F5_statement_fails_and_proof_holds_on_the_instance():
    n, m, I, sigma_g = 20, 3, 8, 1.5
    eta_l = 1e-3
    lhs = I * eta_l ** 2 * m * (n - m) / (n * (n - 1)) * sigma_g ** 2 / n
    zeros = dict(sum_avg_grad=0.0, cluster_grad_last=0.0, cons_intra_last=0.0, sigma=0.0, rho=0.0)
    common = dict(eta_l=eta_l, I=I, n=n, m=m, K=1, L=1.0)
    f5 = get("afga.lemmaF5")
    assert f5.bound("printed", **zeros, **common) == 0 < lhs
    proved = f5.bound("rederived", **zeros, **common, sum_cluster_grad=0.0, sigma_l=sigma_g, sigma_c=0.0,
                      C1=64.0, alpha=1.0, grad_sq=0.0)
    assert lhs <= proved / 64 * (1 + 1e-12)


@pytest.mark.parametrize("rho", [0.0, 0.3, 0.9])
def test_lemma_F8_instance_formula_against_matrix_powers(rho):
    n, m, I = 8, 2, 5
    W = (1 - rho) * np.full((n, n), 1 / n) + rho * np.eye(n)
    s = np.zeros(n)
    s[:m] = 1
    total, v = np.zeros(n), s
    for _ in range(I):
        v = W @ v
        total += v
    expected = total[:m].mean()
    got = f8_instance_norm(max(rho, 1e-300), m, n, I)
    assert got == pytest.approx(expected, rel=1e-12)
    f8 = get("afga.lemmaF8")
    printed = f8.bound("printed", m=m, n=n, eta_l=1.0, I=I, G=1.0)
    valid = f8.bound("rederived", eta_l=1.0, I=I, G=1.0)
    assert got <= valid and ((got <= printed * (1 + 1e-12)) == (rho == 0.0))


def test_lemma_F8_fails_on_the_papers_ring():
    ratio = f8_ring_norm(50, 5, 24)
    assert ratio > 24 * 5 / 50 * 3 and ratio <= 24


def test_lemmas_F3_F4_vanish_or_scale_with_rho():
    c = dict(t=3, C1=64.0, eta_l=1e-3, I=10, rho=0.0, alpha=1.0,
             grad_sq=1.0, sigma_c=0.5, sigma_l=0.5, sigma=1.0, m=2, n=10)
    assert get("afga.lemmaF4").bound(**c) == 0.0
    assert get("afga.lemmaF3").bound("printed", **c) > 0
    assert get("afga.lemmaF3").bound("rederived", **{k: v for k, v in c.items() if k != "C1"}) == \
        pytest.approx(get("afga.lemmaF3").bound("printed", **c))
    f2 = dict(c, cons_intra=1.0, cons_inter=1.0, zeta=1.0, L=1.0)
    assert get("afga.lemmaF2").bound("printed", **f2) == 0.0   # every term of (42) carries rho^2
    half = dict(f2, rho=0.5)   # flag 18: the noise term gains (1 + zeta) = 2
    gap = get("afga.lemmaF2").bound("rederived", **half) - get("afga.lemmaF2").bound("printed", **half)
    assert gap == pytest.approx(1e-6 * 1.0 * 0.25 * 1.0)


def amsgrad(deltas, beta1, beta2, eps):
    m = np.zeros(deltas.shape[1])
    v, vhat = np.zeros_like(m), np.zeros_like(m)
    moments, precond = [], [np.full_like(m, eps ** -0.5)]
    for delta in deltas:
        m = beta1 * m + (1 - beta1) * delta
        v = beta2 * v + (1 - beta2) * delta ** 2
        vhat = np.maximum(vhat, v)
        moments.append(m.copy())
        precond.append((vhat + eps) ** -0.5)
    return np.array(moments), np.array(precond)


@given(arrays(float, (12, 4), elements=st.floats(-1e3, 1e3)), st.floats(0, 0.999), st.floats(0, 0.999),
       st.floats(1e-8, 10))
@settings(max_examples=80, deadline=None)
def test_lemmas_F7_and_F9_hold_on_any_sequence(deltas, beta1, beta2, eps):
    moments, precond = amsgrad(deltas, beta1, beta2, eps)
    f7 = float(get("afga.lemmaF7").bound(sum_delta_sq=np.sum(deltas ** 2)))
    assert np.sum(moments ** 2) <= f7 * (1 + 1e-12) + 1e-300
    diffs = np.abs(np.diff(precond, axis=0))
    ev = get("afga.lemmaF9").evaluate(d=4, eps_ams=eps)
    assert np.sum(diffs) <= ev.bound * (1 + 1e-12)
    assert np.sum(diffs ** 2) <= ev.extras["squared"] * (1 + 1e-12)
