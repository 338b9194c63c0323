r"""The local solver of a federated round, described once: FedNova's linear local solvers
(seed 001_530825e753327090.txt, update rule (4) [L93], App. B [L389-L439]; papers/fednova.md sec.
2.3). A client that starts a round at x takes tau steps

    u_{k+1} = momentum u_k + g_k + mu (x_k - x),      x_{k+1} = x_k - lr lr_decay^k u_{k+1},

u_0 = 0 (buffer reset every round), x_0 = x: vanilla SGD (mu = momentum = 0, lr_decay = 1), FedProx's
proximal step (31) (mu > 0), momentum SGD (35)-(36) (momentum > 0), an exponentially decayed step
(lr_decay < 1), or any combination. The round's change is linear in the gradients,
-Delta / lr = sum_k a_k g_k: the accumulation vector a (tau,).

* :class:`LocalSolver`: the solver by the algorithms' option names (``lr``, ``mu``, ``momentum``,
  ``lr_decay``; scalars or one value per client), its accumulation vector from the recursion itself
  (exact for every combination) and its row of FedNova's table (:meth:`LocalSolver.table`);
* :func:`accumulation_vector`: the table's closed forms in the paper's notation (alpha = lr mu,
  gamma = lr_decay, rho = momentum).

The algorithms' client transforms, the exact analysis on quadratics and FedNova's theory read their
a_i here, so that one solver has one a_i everywhere.

>>> LocalSolver(0.1, momentum=0.5).accumulation(3).round(12).tolist()
[1.75, 1.5, 1.0]
>>> accumulation_vector("momentum", 3, rho=0.5).tolist()
[1.75, 1.5, 1.0]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np

from fedbound import validate as V
from fedbound.argtypes import (Count, NonNegative, NonNegativeArray, Positive, PositiveArray,
                               Range)
from fedbound.errors import ValidationError

#: the rows of FedNova's table (sec. 2.3), and "custom" for any non-negative a
SOLVERS = ("sgd", "prox", "decay", "momentum", "custom")


def _traced(*values) -> bool:
    """Whether ``values`` hold the exact or symbolic numbers of the audit's certifier (object arrays
    of :class:`fedbound.theory.certify.trace.Traced`, marked ``__fedbound_traced__``): computed as
    they are, neither converted to float nor checked (the certifier checks its points exactly)."""
    return any(isinstance(v, np.ndarray) and v.dtype == object and v.size
               and getattr(v.flat[0], "__fedbound_traced__", False) for v in values)


def geometric_sum(log_r: float | np.ndarray, n: float | np.ndarray) -> np.ndarray:
    """sum_{k<n} r^k = (1 - r^n)/(1 - r) for r in [0, 1], from log r (0 for r = 1, -inf for r = 0),
    as expm1(n log r)/expm1(log r): accurate to a few ulps, no cancellation as r -> 1."""
    if _traced(log_r, n):
        log_r, n = np.broadcast_arrays(np.asarray(log_r, dtype=object), np.asarray(n, dtype=object))
        return np.where(log_r == 0, n, np.expm1(n * log_r) / np.expm1(log_r))
    log_r, n = np.broadcast_arrays(np.asarray(log_r, float), np.asarray(n, float))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.expm1(n * log_r) / np.expm1(log_r)
    return np.where(log_r == 0, n, ratio)


def solver_parameter(name: str, value: float | np.ndarray | None, low: float, high: float, low_open: bool,
                     high_open: bool) -> np.ndarray:
    """A solver parameter (array) inside its interval, else the one-line message of its first bad
    entry."""
    if value is None:
        raise ValidationError(f"the solver needs {name}")
    if _traced(value):
        return value
    arr = V.real_array(name, value)
    ok = (arr > low if low_open else arr >= low) & (arr < high if high_open else arr <= high)
    if not np.all(ok):   # the one-line message of the first bad entry
        V.number(name, arr[~ok].flat[0], low=low, high=high, low_open=low_open, high_open=high_open)
    return arr


def accumulation_vector(solver: str, tau: Count | None, *, alpha: float | np.ndarray | None = None,
                        gamma: float | np.ndarray | None = None, rho: float | np.ndarray | None = None,
                        a: np.ndarray | None = None) -> np.ndarray:
    """a_i (tau,) of one client's local solver, in closed form (papers/fednova.md sec. 2.3).

    ``"sgd"``: [1, ..., 1] (L120); ``"prox"``: [(1-alpha)^(tau-1), ..., 1-alpha, 1] with
    alpha = eta mu in (0, 1] ((31)-(34) [L397-L406]); ``"decay"``: [1, gamma, ..., gamma^(tau-1)]
    with the per-step decay factor gamma in [0, 1] (L128); ``"momentum"``: a_k = (1 - rho^(tau-k))/
    (1 - rho), rho in [0, 1), the buffer reset each round ((35)-(43) [L414-L434]); ``"custom"``: any
    non-negative ``a`` of length tau with ||a||_1 > 0 (L99).
    """
    V.one_of("solver", solver, SOLVERS)
    if solver == "custom":
        vec = V.real_array("a", a, ndim=1, low=0.0)
        if tau is not None and V.integer("tau", tau, low=1) != vec.size:
            raise ValidationError(f"a must have tau={tau} entries, got {vec.size}")
        if vec.size == 0 or vec.sum() <= 0:
            raise ValidationError("a must have at least one positive entry (||a||_1 > 0)")
        return vec
    tau = V.integer("tau", tau, low=1, high=100_000_000)
    k = np.arange(tau, dtype=float)
    if solver == "sgd":
        return np.ones(tau)
    if solver == "prox":
        alpha = float(solver_parameter("alpha", alpha, 0.0, 1.0, True, False))
        return np.exp((tau - 1 - k) * np.log1p(-alpha)) if alpha < 1 else (k == tau - 1).astype(float)
    if solver == "decay":
        gamma = float(solver_parameter("gamma", gamma, 0.0, 1.0, False, False))
        return gamma ** k
    rho = float(solver_parameter("rho", rho, 0.0, 1.0, False, True))
    return geometric_sum(np.log(rho) if rho > 0 else -np.inf, tau - k)



@dataclass(frozen=True)
class LocalSolver:
    """The local solver of the module docstring, per client (scalars or arrays of shape (n,)).

    lr: the local step size > 0; mu: proximal coefficient >= 0 (FedProx); momentum: momentum factor
    in [0, 1); lr_decay: per-step step-size decay factor in (0, 1] (lr_k = lr lr_decay^k).
    """

    lr: Positive | PositiveArray
    mu: NonNegative | NonNegativeArray = 0.0
    momentum: Annotated[float | np.ndarray, Range(0.0, 1.0, high_open=True)] = 0.0
    lr_decay: Annotated[float | np.ndarray, Range(0.0, 1.0, low_open=True)] = 1.0

    @classmethod
    def from_options(cls, options: dict) -> "LocalSolver":
        """The solver of an algorithm's options (``lr``, and ``proximal_mu``, ``momentum``,
        ``lr_decay`` where given; None means absent)."""
        def given(name, default):
            value = options.get(name)
            return default if value is None else value
        return cls(options["lr"], given("proximal_mu", 0.0), given("momentum", 0.0), given("lr_decay", 1.0))

    def arrays(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(lr, mu, momentum, lr_decay) validated and broadcast to shape (n,)."""
        out = []
        for name, value, low, high, low_open, high_open in (
                ("lr", self.lr, 0.0, np.inf, True, True), ("mu", self.mu, 0.0, np.inf, False, True),
                ("momentum", self.momentum, 0.0, 1.0, False, True),
                ("lr_decay", self.lr_decay, 0.0, 1.0, True, False)):
            arr = V.real_array(name, value, ndim=(0, 1))
            if arr.ndim == 1 and arr.shape != (n,):
                raise ValidationError(f"{name} must be a scalar or have n={n} entries, got {arr.size}")
            for x in np.atleast_1d(arr):
                V.number(name, x, low=low, high=high, low_open=low_open, high_open=high_open)
            out.append(np.broadcast_to(arr, (n,)).astype(np.float64))
        return tuple(out)

    def table(self) -> tuple[str, dict]:
        """(row, parameters) of :func:`accumulation_vector` for a scalar solver with one feature
        (proximal needs 0 < lr mu <= 1, FedNova's range of alpha (31)); a combination has no row
        (ValidationError: use :meth:`accumulation`)."""
        lr, mu, momentum, decay = (float(a[0]) for a in self.arrays(1))
        features = [name for name, on in (("prox", mu > 0), ("momentum", momentum > 0),
                                          ("decay", decay != 1.0)) if on]
        if len(features) > 1:
            raise ValidationError(f"FedNova's table has no row for {' and '.join(features)} together")
        if not features:
            return "sgd", {}
        if features[0] == "prox":
            alpha = lr * mu
            if alpha > 1:
                raise ValidationError(f"the proximal row of FedNova's table needs lr mu <= 1, got {alpha:g}")
            return "prox", {"alpha": alpha}
        if features[0] == "momentum":
            return "momentum", {"rho": momentum}
        return "decay", {"gamma": decay}

    def accumulation(self, tau: int) -> np.ndarray:
        """FedNova's accumulation vector a (tau,) of a single client's solver (App. B [L389-L439]):
        -Delta / lr = sum_k a_k g_k for arbitrary gradients g_k, a_0 the coefficient of the first.

        Computed from the recursion itself, which is linear in the g_k: the state s_k = (delta_k, u_k)
        with delta_k = x_k - x moves as s_{k+1} = A_k s_k + B_k g_k,
        A_k = [[1 - lr_k mu, -lr_k rho], [mu, rho]], B_k = (-lr_k, 1), lr_k = lr gamma^k, so
        a_k = -(1/lr) e_1^T A_{tau-1} ... A_{k+1} B_k, accumulated backwards (adjoint) in O(tau). The
        notes' closed forms (sec. 2.3) are checked against it in the tests.
        """
        tau = V.integer("tau", tau, low=1, high=10_000_000)
        lr, mu, rho, gamma = (float(a[0]) for a in self.arrays(1))
        lam = np.array([1.0, 0.0])            # adjoint of delta_tau
        a = np.empty(tau)
        for k in reversed(range(tau)):
            step = lr * gamma ** k
            a[k] = -(lam[0] * -step + lam[1]) / lr
            lam = np.array([lam[0] * (1 - step * mu) + lam[1] * mu, -lam[0] * step * rho + lam[1] * rho])
        return a


__all__ = ["SOLVERS", "LocalSolver", "accumulation_vector", "geometric_sum", "solver_parameter"]
