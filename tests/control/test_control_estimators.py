"""Estimators (28)-(30) of seed 003 [L413-L423], numpy and torch."""
import numpy as np
import pytest
import torch

from fedbound.control import estimate_Gamma, estimate_H, estimate_Y
from fedbound.errors import ValidationError

rng = np.random.default_rng(0)
PSI_T, PSI_NEXT = rng.standard_normal((4, 7)), rng.standard_normal((4, 7))
LABELS = np.array([0, 0, 1, 2, 2, 2, 3])        # unequal h_s = 2, 1, 3, 1
MODELS = rng.standard_normal((7, 5))
X_G = rng.standard_normal(5)
M = np.array([5, 2, 9, 4])


def test_Y_hat_is_mean_squared_tracker_change():
    want = sum(np.sum((PSI_T[s] - PSI_NEXT[s]) ** 2) for s in range(4)) / 4
    assert estimate_Y(PSI_T, PSI_NEXT) == pytest.approx(want, rel=1e-14)
    assert estimate_Y(torch.tensor(PSI_T), torch.tensor(PSI_NEXT)) == pytest.approx(want, rel=1e-14)


def test_Gamma_hat_weightings():
    per = [np.mean([np.sum((MODELS[i] - X_G) ** 2) for i in np.flatnonzero(LABELS == s)]) for s in range(4)]
    assert estimate_Gamma(MODELS, X_G, LABELS) == pytest.approx(np.mean(per), rel=1e-14)
    assert estimate_Gamma(MODELS, X_G, LABELS, m=M, weighting="population") == pytest.approx(
        np.dot(per, M / M.sum()), rel=1e-14)
    # torch (float32 models, long labels) agrees to float32 precision
    got = estimate_Gamma(torch.tensor(MODELS, dtype=torch.float32), torch.tensor(X_G, dtype=torch.float32),
                         torch.tensor(LABELS))
    assert got == pytest.approx(np.mean(per), rel=1e-5)
    # with equal h_s the subnet reading of 1/(S h_s) is the plain pooled mean
    eq = np.repeat(np.arange(3), 2)
    pooled = np.mean(np.sum((MODELS[:6] - X_G) ** 2, axis=1))
    assert estimate_Gamma(MODELS[:6], X_G, eq) == pytest.approx(pooled, rel=1e-14)


def test_Gamma_hat_needs_every_subnet_sampled():
    with pytest.raises(ValidationError, match="every subnet 0..4 needs at least one sampled client"):
        estimate_Gamma(MODELS, X_G, LABELS, m=[5, 2, 9, 4, 3])
    with pytest.raises(ValidationError, match="needs the subnet sizes m"):
        estimate_Gamma(MODELS, X_G, LABELS, weighting="population")


@pytest.mark.parametrize("squared", [True, False])
def test_H_hat_lambda1_switch(squared):
    t, K, p, g, Y, G, lam1 = 7, 3, 0.64, 0.01, 2.5, 0.3, 1.7
    w = lam1 ** 2 if squared else lam1
    want = 1 / t + w * (K ** 3 * g ** 3 * Y / p ** 2 + K * g * G / p)
    assert estimate_H(t, K, p, g, Y, G, lam1, lam1_squared=squared) == pytest.approx(want, rel=1e-15)


def test_H_hat_validation():
    with pytest.raises(ValidationError, match="p_t must be in"):
        estimate_H(1, 3, 1.5, 0.1, 0.0, 0.0, 1.0)
    with pytest.raises(ValidationError, match="t must be an integer >= 1"):
        estimate_H(0, 3, 0.5, 0.1, 0.0, 0.0, 1.0)
