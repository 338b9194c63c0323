"""The preparation steps of the FedNova results: per-client vectors ``p_i``, ``tau_i`` (arrays
(..., m), clients on the last axis) reduced to the scalar constants of the theorems
(:class:`fedbound.theory.result.Preparation`), so that e.g. ``get("fednova.thm1").evaluate(
p_i=[0.2, 0.8], tau_i=[2, 5], ...)`` and ``fedbound bound fednova.thm1 --set p_i=0.2,0.8 tau_i=2,5``
work next to the scalar form (give either the vectors or the constants they produce, not both).

Each preparation assumes vanilla local SGD, a_i = [1, ..., 1] of length tau_i (L120), fixed across
rounds, and one aggregation (seed 001_530825e753327090.txt, papers/fednova.md sec. 4.3, 4.6):

* :data:`FEDAVG`: sum_i p_i Delta_i (FedAvg), implicit tau_eff = sum_i p_i tau_i and
  w_i = p_i tau_i/tau_eff of (6) [L115-L116], A, B, C of (121)-(124) [L719-L722], chi^2_{p||w} (L175);
* :data:`FEDNOVA`: w = p (12) with the default tau_eff = sum_i p_i tau_i (App. H [L961]); A, B, C of
  (93)-(95) at w = p; for Theorem 3 (fixed tau_i) the time averages equal them and tau_tilde = tau_bar;
* :data:`EQUAL`: Corollary 1's p_i = 1/m (only ``tau_i``): tau_bar, tau_var, tau_max (125) [L726].

Other local solvers, or vectors a_i of different lengths (ragged, which a (..., m) array cannot
hold), go through :func:`fedbound.theory.fednova.accumulation.theorem_constants` and the scalar form.
"""
from __future__ import annotations

import numpy as np

from fedbound.argtypes import PositiveArray, ProbabilityArray
from fedbound.errors import ValidationError
from fedbound.theory.fednova import accumulation as acc
from fedbound.theory.result import Preparation


def _clients(tau_i, p_i=None) -> tuple[np.ndarray, np.ndarray | None]:
    """``tau_i`` (and ``p_i``) as arrays with the clients on the last axis, broadcasting together
    (a ValidationError naming them otherwise)."""
    tau_i = np.asarray(tau_i)
    if tau_i.ndim == 0:
        raise ValidationError(f"tau_i must have the clients on its last axis, got the number {tau_i}")
    if p_i is None:
        return tau_i, None
    p_i = np.asarray(p_i)
    try:
        np.broadcast_shapes(p_i.shape, tau_i.shape)
    except ValueError:
        raise ValidationError(f"p_i {p_i.shape} and tau_i {tau_i.shape} must have the same clients "
                              f"(last axis) and broadcast together") from None
    return tau_i, p_i


def _common(tau_i: np.ndarray, shape: tuple) -> dict[str, np.ndarray]:
    return {"m": np.full(shape, float(tau_i.shape[-1])), "tau_bar": np.broadcast_to(np.mean(tau_i, -1), shape),
            "a1_max": np.broadcast_to(np.max(tau_i, -1), shape)}


def fedavg(p_i: ProbabilityArray, tau_i: PositiveArray) -> dict[str, np.ndarray]:
    """FedAvg's constants from (p_i, tau_i): tau_eff, A, B, C (121)-(124), a1_max = tau_max, m,
    tau_bar and chi^2_{p||w} with w_i = p_i tau_i/tau_eff (L175); w_i = 0 exactly where p_i = 0, and
    such a client adds 0 (it takes no part in F nor in F~)."""
    tau_i, p_i = _clients(tau_i, p_i)
    c = acc.fedavg_closed_forms(p_i, tau_i)
    shape = np.shape(c["tau_eff"])
    out = {k: c[k] for k in ("tau_eff", "A", "B", "C")} | _common(tau_i, shape)
    w = c["w"]
    out["chi2"] = np.sum(np.where(w > 0, (p_i - w) ** 2 / np.where(w > 0, w, 1.0), 0.0), -1)
    return out


def fednova(p_i: ProbabilityArray, tau_i: PositiveArray) -> dict[str, np.ndarray]:
    """FedNova's constants from (p_i, tau_i): w = p, tau_eff = sum_i p_i tau_i, A, B, C (93)-(95),
    a1_max, m, tau_bar, and Theorem 3's A_tilde = A, B_tilde = B, C_tilde = C, tau_tilde = tau_bar
    (tau_i fixed across rounds)."""
    tau_i, p_i = _clients(tau_i, p_i)
    p = np.broadcast_to(p_i, np.broadcast_shapes(np.shape(p_i), np.shape(tau_i)))
    tau_eff = np.sum(p * tau_i, -1)
    A, B, C = acc.abc(p, tau_i, tau_i, np.ones_like(tau_i), tau_eff)
    out = {"tau_eff": tau_eff, "A": A, "B": B, "C": C} | _common(tau_i, np.shape(tau_eff))
    return out | {"A_tilde": A, "B_tilde": B, "C_tilde": C, "tau_tilde": out["tau_bar"]}


def equal(tau_i: PositiveArray) -> dict[str, np.ndarray]:
    """Corollary 1's (125) [L726] inputs at p_i = 1/m: tau_bar, tau_var = mean(tau_i^2) - tau_bar^2,
    tau_max and m."""
    _clients(tau_i)
    t = np.asarray(tau_i, dtype=float)
    return {"tau_bar": np.mean(t, -1), "tau_var": np.var(t, -1), "tau_max": np.max(t, -1),
            "m": np.full(t.shape[:-1], float(t.shape[-1]))}


def _preparation(reduce, inputs: tuple[str, ...], outputs: tuple[str, ...], description: str) -> Preparation:
    """A :class:`Preparation` returning only ``outputs`` of ``reduce`` (each result declares the
    constants it uses; a user may give the others)."""
    return Preparation(inputs, outputs, lambda **v: {k: reduce(**v)[k] for k in outputs}, description)


_THM1 = ("tau_eff", "A", "B", "C", "a1_max", "m", "tau_bar")
_FEDAVG_TEXT = ("FedAvg (vanilla local SGD, tau_i steps, averaged with p_i): tau_eff = sum p_i tau_i, "
                "w_i = p_i tau_i/tau_eff (6), A, B, C of (121)-(124), a1_max = max tau_i, tau_bar = mean tau_i")
_FEDNOVA_TEXT = ("FedNova with vanilla local SGD (tau_i steps, fixed across rounds), w = p, tau_eff = "
                 "sum p_i tau_i (App. H): A = m tau_eff sum p_i^2/tau_i, B = sum p_i (tau_i - 1), "
                 "C = tau_max (tau_max - 1)")

#: Theorem 1 (and its per-round and scheduled forms) for FedAvg
FEDAVG = _preparation(fedavg, ("p_i", "tau_i"), _THM1, _FEDAVG_TEXT)
#: Theorem 2: Theorem 1's constants and chi^2_{p||w} of FedAvg
FEDAVG_CHI2 = _preparation(fedavg, ("p_i", "tau_i"), _THM1 + ("chi2",), _FEDAVG_TEXT + ", chi^2 = "
                           "sum (p_i - w_i)^2/w_i")
#: Theorem 3 for FedNova with fixed tau_i
FEDNOVA_THM3 = _preparation(fednova, ("p_i", "tau_i"), ("tau_eff", "A_tilde", "B_tilde", "C_tilde", "a1_max",
                                                       "m", "tau_tilde"),
                            _FEDNOVA_TEXT + "; A_tilde = A, B_tilde = B, C_tilde = C, tau_tilde = tau_bar")
#: Corollary 3 (w = p) with fixed tau_i
FEDNOVA_COR3 = _preparation(fednova, ("p_i", "tau_i"), ("tau_eff", "B", "C", "tau_tilde"), _FEDNOVA_TEXT)
#: Corollary 1 (p_i = 1/m)
EQUAL = _preparation(equal, ("tau_i",), ("tau_bar", "tau_var", "tau_max", "m"),
                     "p_i = 1/m: tau_bar = mean tau_i, tau_var = mean tau_i^2 - tau_bar^2, tau_max = max tau_i")

__all__ = ["fedavg", "fednova", "equal", "FEDAVG", "FEDAVG_CHI2", "FEDNOVA_THM3", "FEDNOVA_COR3", "EQUAL"]
