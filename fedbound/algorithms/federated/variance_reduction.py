r"""FedNova's cross-client variance reduction (Algorithm 2 of 001_530825e753327090.txt [L972-L989],
main text [L204]; fednova.md 2.7 and its flag) as a control-variates option of the federated round
(the same interface as :class:`~fedbound.algorithms.federated.control_variates.ControlVariates`).

Every participating client adds a correction that is constant within the round to each local
gradient,

    g~_i = g_i(x_i^{(t,k)}) + c_i^{(t)},     c_i^{(t)} = sum_j p_j dhat_j^{(t-1)} - dhat_i^{(t-1)},

and reports its normalized gradient d_i^{(t)} = (x^{(t,0)} - x_i^{(t,tau_i)}) / (lr ||a_i||_1). Since
the local solvers are linear in the gradients (Delta_i = -lr G_i a_i, eq. (4) [L93]) and c_i is constant,
d_i = dhat_i + c_i exactly, with dhat_i the normalized gradient of the uncorrected gradients.

* ``"corrected"`` (default; the notes' recommendation): the state keeps dhat_i = d_i - c_i, the
  correction VRL-SGD and SCAFFOLD use (with SGD clients and FedAvg averaging, dhat_i is SCAFFOLD's
  option-II c_i^+ and sum_j p_j dhat_j its c for uniform p).
* ``"literal"``: Alg. 2 line 5 as printed keeps the corrected d_i, so c_i^{(t+1)} = delta_i - c_i^{(t)}
  under full participation (delta_i = sum_j p_j dhat_j - dhat_i): the correction oscillates around
  delta/2 instead of settling at delta (fednova.md 2.7 flag).

State: C the stored d_j (dhat_j or d_j) of the n clients, initialised 0 (d^{(-1)} = 0, no correction
in round 0: the paper leaves it unstated), in a :class:`~fedbound.algorithms.client_rows.ClientRows`
(held only for the clients that have participated), and c (d,) = sum_j p_j C_j over all n clients
(non-participants keep their last value), updated by the participants' changes,
c <- c + sum_{i in S} p_i (C_i^+ - C_i): the same sum up to rounding, in O(k d) per round instead of
O(n d). Each participant downloads (x, c) and uploads (Delta_i, d_i): 2d floats each way ("doubled
communication" [L237]). Requires participants without repeats.
"""
from __future__ import annotations

from typing import Literal

import torch

from fedbound.algorithms.client_rows import ClientRows
from fedbound.algorithms.federated.aggregation import Normalized
from fedbound.algorithms.federated.control_variates import ControlVariates
from fedbound.algorithms.optim.base import Transform
from fedbound.argtypes import Positive
from fedbound.validate import one_of

VR_MODES = ("corrected", "literal")


class CrossClientVR(ControlVariates):
    """Alg. 2's correction for a linear client solver ``client`` with learning rate ``lr`` and the
    task's weights ``p`` (n,); ``mode`` "corrected" or "literal" (module docstring)."""

    def __init__(self, client: Transform, lr: Positive, p: torch.Tensor,
                 mode: Literal["corrected", "literal"] = "corrected"):
        super().__init__(lr)
        self.mode = one_of("vr", mode, VR_MODES)
        self.client = client
        self.p = p
        self._norms = Normalized()   # ||a_i||_1 of the solver

    def update(self, C: ClientRows, c: torch.Tensor, clients: torch.Tensor, x: torch.Tensor,
               Y: torch.Tensor, tau: torch.Tensor) -> tuple[ClientRows, torch.Tensor]:
        """The new (C, c) after the participants ``clients`` ran tau (k,) steps from x to Y (k, d);
        c + sum_{i in S} p_i (d_i - C_i) (module docstring)."""
        self.require_distinct(clients)
        norms = self._norms.norms(tau, self.client).to(Y.dtype)
        d = (x - Y) / (self.lr * norms[:, None])
        C_S = C.gather(clients)
        if self.mode == "corrected":
            d = d - (c - C_S)    # the round's correction c - C_i
        p_S = self.p.to(d.dtype).index_select(0, clients)
        return C.with_rows(clients, d), c + p_S @ (d - C_S)
