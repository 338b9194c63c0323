r"""SCAFFOLD's control variates (Karimireddy et al., ICML 2020, Alg. 1, option II) as an option of
the federated round: the server keeps c (d,), every client i keeps c_i (d,), both starting at 0
(the c_i in a :class:`~fedbound.algorithms.client_rows.ClientRows`: held only for the clients that
have participated, rewritten for a round's k participants in O(k d + n), not O(n d)).
A participating client corrects every local gradient by c - c_i, and after its tau_i local steps of
size lr (from the round's start x to y_i)

    c_i^+ = c_i - c + (x - y_i) / (tau_i lr)                       (option II)
    c     <- c + (1/n) sum_{i in S} (c_i^+ - c_i),   c_i <- c_i^+  (i in S)

so that c = (1/n) sum_i c_i at every round. Each participant downloads (x, c) and uploads
(Delta y_i, Delta c_i): 2d floats each way. Requires participants without repeats.
"""
from __future__ import annotations

from typing import Protocol

import torch

from fedbound.algorithms.client_rows import ClientRows
from fedbound.argtypes import Count, Positive
from fedbound.errors import require
from fedbound.validate import number


class VariatesStrategy(Protocol):
    """A control-variates strategy of the federated round (``Federated(control_variates=...)``):
    per-client state C (a :class:`~fedbound.algorithms.client_rows.ClientRows` of n rows (d,)) and
    server state c (d,), the participants' gradient correction, the update after the local steps
    and the server model; ``vectors``: d-vectors each participant downloads and uploads per round.
    :class:`ControlVariates` (SCAFFOLD), FedNova's CrossClientVR and FedDyn's
    DynamicRegularization are the strategies of fedbound."""

    vectors: int

    def init(self, n: int, x0: torch.Tensor) -> tuple[ClientRows, torch.Tensor]: ...

    def correction(self, C: ClientRows, c: torch.Tensor, clients: torch.Tensor) -> torch.Tensor: ...

    def update(self, C: ClientRows, c: torch.Tensor, clients: torch.Tensor, x: torch.Tensor,
               Y: torch.Tensor, tau: torch.Tensor) -> tuple[ClientRows, torch.Tensor]: ...

    def server_model(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor: ...


class ControlVariates:
    """Option-II control variates for a client step size ``lr``.

    The round's hook (:class:`~fedbound.algorithms.federated.round.Federated`, ``control_variates``):
    ``init``, ``correction``, ``update``, ``server_model`` and ``vectors``; FedDyn's
    :class:`~fedbound.algorithms.federated.feddyn.DynamicRegularization` is another strategy with the same
    interface."""

    #: d-vectors each participant downloads and uploads per round: (x, c) and (Delta y_i, Delta c_i)
    vectors = 2

    def __init__(self, lr: Positive):
        self.lr = number("lr", lr, low=0.0, low_open=True)

    def init(self, n: Count, x0: torch.Tensor) -> tuple[ClientRows, torch.Tensor]:
        """(C: the c_i of n clients, c (d,)), all zero."""
        return ClientRows.zeros(n, x0.shape[0], x0.dtype, x0.device), torch.zeros_like(x0)

    def correction(self, C: ClientRows, c: torch.Tensor, clients: torch.Tensor) -> torch.Tensor:
        """c - c_i for the rows ``clients`` (k, d)."""
        return c - C.gather(clients)

    @staticmethod
    def require_distinct(clients: torch.Tensor) -> None:
        """Per-client state needs each participant once."""
        require(bool(torch.unique(clients).numel() == clients.numel()),
                "per-client state (control variates, FedDyn's lagged gradients) needs participants "
                "without repeats (no sampling with replacement)")

    def update(self, C: ClientRows, c: torch.Tensor, clients: torch.Tensor, x: torch.Tensor,
               Y: torch.Tensor, tau: torch.Tensor) -> tuple[ClientRows, torch.Tensor]:
        """The new (C, c) after the participants ``clients`` ran tau (k,) steps from x to Y (k, d)."""
        self.require_distinct(clients)
        C_i = C.gather(clients)
        C_plus = C_i - c + (x - Y) / (tau.to(Y.dtype)[:, None] * self.lr)
        c_new = c + (C_plus - C_i).sum(dim=0) / C.n
        return C.with_rows(clients, C_plus), c_new

    def server_model(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """The round's server model from the server transform's x and the new c: x itself."""
        return x
