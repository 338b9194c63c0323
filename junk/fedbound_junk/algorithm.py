r"""The algorithm ``junk``: FedAvg with server-side Nesterov momentum, on fedbound's federated round.

Round t from the server model x_t: c clients S_t (``clients_per_round``, all by default) each run
K = ``local_steps`` steps of SGD with step gamma = ``lr`` from x_t; with the averaged change
Delta_t = (1/c) sum_{i in S_t} (x_i^{t,K} - x_t) and the pseudo-gradient g_t = -Delta_t, the server
takes a Nesterov momentum step (beta = ``server_momentum``, PyTorch's convention, v_0 = 0):

    v_{t+1} = beta v_t + g_t,        x_{t+1} = x_t - (g_t + beta v_{t+1}).

The round template (:class:`fedbound.extend.Federated`) does participation, the local steps of all
clients at once, aggregation and accounting; the algorithm only chooses its client and server
optimizers.
"""
from __future__ import annotations

from fedbound.extend import (AlgorithmSpec, Federated, client, number_option, options, server,
                             register_algorithm)

NAME = "junk"

#: the server momentum beta (its own option, with a default; the FedAvg options are fedbound's)
SERVER_MOMENTUM = number_option("server_momentum", "server Nesterov momentum beta in [0, 1) "
                                "(default 0.5)", low=0.0, high=1.0, high_open=True, default=0.5,
                                examples=(0.0, 0.5))


class NesterovFedAvg(Federated):
    """FedAvg clients, a server Nesterov momentum step on the pseudo-gradient (module doc)."""

    name = "junk"

    def __init__(self, task, *, lr, local_steps=1, server_momentum=0.5, **round_options):
        super().__init__(task, client=client.sgd(lr),
                         server=server.momentum(1.0, server_momentum, nesterov=True),
                         local_steps=local_steps, **round_options)


ALGORITHM = register_algorithm(AlgorithmSpec(
    NAME, NesterovFedAvg, "FedAvg with server Nesterov momentum (a fedbound plugin)", "federated",
    (options.LR, options.LOCAL_STEPS, options.CLIENTS_PER_ROUND, SERVER_MOMENTUM)))
