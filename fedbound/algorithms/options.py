"""The options algorithms share, declared once (:class:`fedbound.registry.Option`): validation,
command-line parsing, defaults and small examples for the generated tests.

One vocabulary for every algorithm (the CLI flag is ``--`` + the name with dashes; sweep SPECs,
JSON outputs and :func:`fedbound.algorithms.registry.build` use the name):

============================  ==============================================================
name                          concept
============================  ==============================================================
lr                            the clients' step size (SD-GT's gamma, FedNova's eta, AFGA's eta_l)
local_steps                   local steps per round (SD-GT's K D2D rounds, AFGA's I)
clients_per_round             participants per round, uniformly (AFGA's M)
clients_per_subnet            participants per subnet and round (SD-GT's h_s)
participation                 the participation scheme by name (fedbound.network.sampling), or
                              from Python a scheme object (anything with ``draw(p, generator)``)
server_lr, server_momentum    the server optimizer's step size and momentum
server_optimizer              the server optimizer by name
beta1, beta2, tau             an adaptive optimizer's decays and adaptivity constant (epsilon)
bias_correction               the adaptive server's bias correction: none, adam or flower
v0, eps_inside_sqrt           an adaptive optimizer's initial second moment; tau inside the root
nesterov                      Nesterov momentum instead of heavy ball
proximal_mu                   the proximal coefficient (FedProx's mu; FedNova's proximal solver)
momentum, lr_decay            the local solver's momentum and per-step step-size decay
============================  ==============================================================

The names come from :mod:`fedbound.vocabulary`, where every concept has one name. The theory keeps
each paper's notation (gamma, K, h, eta, eta_l, ...; ``mu`` is strong convexity there and in the
tasks); the per-paper adapters (``fedbound.theory.<paper>.adapter``) map a run's options to it.
Old spellings (``gamma``, ``K``, ``h`` / ``--sample``, AFGA's ``eps`` / ``--amsgrad-eps`` and
``server``, ``mu`` for ``proximal_mu``) still work and warn.
"""
from __future__ import annotations

import argparse
from typing import Sequence

import numpy as np

from fedbound.algorithms.base import MAX_LOCAL_STEPS, Steps
from fedbound.algorithms.optim.registry import (BIAS_CORRECTION, CLIENT_BIAS_CORRECTION,
                                                EPS_INSIDE_SQRT, NESTEROV, V0)
from fedbound.errors import ValidationError, require
from fedbound.network.sampling import PARTICIPATION_SCHEMES
from fedbound.registry import Option, integer_option, number_option
from fedbound.validate import integer, one_of


class StepsTextError(ValidationError, argparse.ArgumentTypeError):
    """A ``--local-steps`` text that is neither an integer nor comma-separated integers: a
    ValidationError, and an ArgumentTypeError so that the command line shows its message."""


def steps_list(text: str) -> int | list[int]:
    """Command-line type of ``--local-steps``: "5" (every client) or "1,3,5,8,2" (one per client)."""
    parts = text.split(",")
    try:
        values = [int(part) for part in parts]
    except ValueError:
        raise StepsTextError(f"expected an integer or comma-separated integers, got {text!r}") from None
    return values[0] if len(values) == 1 else values


steps_list.__name__ = "steps"   # argparse names the type in its error messages


def per_client_steps(name: str, value: Steps | Sequence[Steps]) -> int | tuple[int, ...]:
    """One count for every client (an int in [1, MAX_LOCAL_STEPS]) or one per client (a list of
    such ints; its length is checked against the task's n by the algorithm)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        values = value.reshape(-1).tolist() if isinstance(value, np.ndarray) else list(value)
        require(len(values) >= 1, f"{name} must hold at least one step count")
        return tuple(integer(f"{name}[{i}]", v, low=1, high=MAX_LOCAL_STEPS) for i, v in enumerate(values))
    return integer(name, value, low=1, high=MAX_LOCAL_STEPS)


def positive(name: str, help: str, **fields) -> Option:
    return number_option(name, help, low=0.0, low_open=True, **fields)


def unit_interval(name: str, help: str, **fields) -> Option:
    """A number in [0, 1) (decays, momentum factors)."""
    return number_option(name, help, low=0.0, high=1.0, high_open=True, **fields)


def at_least_one(name: str, help: str, **fields) -> Option:
    return integer_option(name, help, low=1, **fields)


# ---- the client's step and local steps -------------------------------------------------------------
LR = positive("lr", "client learning rate (step size of the local steps)", required=True,
              examples=(0.02, 0.05))
#: the semi-decentralized and decentralized families' step size gamma (default 0.01)
LR_GAMMA = positive("lr", "client step size (SD-GT's gamma; default 0.01)", default=0.01,
                    aliases=("gamma",), examples=(0.02, 0.05))
LOCAL_STEPS = Option("local_steps", "local steps per round: one count, or one per client as 1,3,5 "
                     "(default 1)", per_client_steps, steps_list, examples=(1, 3, (1, 2, 3, 1, 2, 3)))
#: one count for every client (SD-GT's K D2D rounds per round, Scaffnew's steps between averages)
LOCAL_STEPS_K = integer_option("local_steps", "local steps (D2D rounds) per round (SD-GT's K; "
                               "default 5)", low=1, high=MAX_LOCAL_STEPS, default=5,
                               aliases=("K",), examples=(1, 3))

# ---- participation -----------------------------------------------------------------------------------
CLIENTS_PER_ROUND = at_least_one("clients_per_round", "clients sampled uniformly per round "
                                 "(default all)", examples=(2, 4))
CLIENTS_PER_SUBNET = at_least_one("clients_per_subnet", "clients sampled per subnet and round "
                                  "(SD-GT's h_s; default all)", aliases=("h",),
                                  alias_flags=("--sample",), examples=(1, 2))


def _participation(label: str, value):
    """A participation scheme by name (:data:`PARTICIPATION_SCHEMES`), or a scheme object with a
    ``draw(p, generator)`` method (a user's, or one built with its own constructor), as it is."""
    if callable(getattr(value, "draw", None)) and not isinstance(value, type):
        return value
    return one_of(label, value, PARTICIPATION_SCHEMES.names())


PARTICIPATION = Option("participation", "client participation: full, uniform (renormalized "
                       "weights), unbiased (weights p_i n/q) or with-replacement (draws by p_i), "
                       "with --clients-per-round q; from Python also a scheme object with a draw "
                       "method", _participation, str, choices=PARTICIPATION_SCHEMES.names,
                       examples=("full", "uniform"))

# ---- server and adaptive optimizers --------------------------------------------------------------------
SERVER_LR = positive("server_lr", "server learning rate", examples=(0.05, 1.0))
SERVER_MOMENTUM = unit_interval("server_momentum", "server momentum in [0, 1)", examples=(0.0, 0.5))
BETA1 = unit_interval("beta1", "first-moment decay in [0, 1) (the server's; DAdam: every client's)",
                      examples=(0.0, 0.9))
BETA2 = unit_interval("beta2", "second-moment decay in [0, 1) (the server's; DAdam: every client's)",
                      examples=(0.9, 0.99))
TAU = positive("tau", "adaptivity epsilon tau > 0 (the server's; DAdam: every client's)",
               examples=(1e-3, 1e-2))
#: the switches of the optimizers (fedbound.algorithms.optim), declared once in
#: fedbound.algorithms.optim.registry and options of both the optimizers and the algorithms:
#: BIAS_CORRECTION ("none" / "adam" / "flower"; True / False still mean "adam" / "none"), V0,
#: EPS_INSIDE_SQRT, NESTEROV, and the client optimizers' CLIENT_BIAS_CORRECTION (FedAda2's family
#: takes it, V0 and SM3's carry_over as client_bias_correction, client_v0 and carry_over)

# ---- local solvers ---------------------------------------------------------------------------------------
MU = number_option("proximal_mu", "proximal coefficient >= 0 (FedProx's mu)", low=0.0, required=True,
                   aliases=("mu",), examples=(0.0, 0.3))
ALPHA = positive("alpha", "FedDyn's dynamic regularization coefficient alpha > 0", required=True,
                 examples=(0.1, 1.0))


__all__ = ["StepsTextError", "steps_list", "per_client_steps", "positive", "unit_interval",
           "at_least_one", "LR", "LR_GAMMA", "LOCAL_STEPS", "LOCAL_STEPS_K", "CLIENTS_PER_ROUND",
           "CLIENTS_PER_SUBNET", "PARTICIPATION", "SERVER_LR", "SERVER_MOMENTUM", "BETA1", "BETA2",
           "TAU", "BIAS_CORRECTION", "CLIENT_BIAS_CORRECTION", "V0", "EPS_INSIDE_SQRT", "NESTEROV",
           "MU", "ALPHA"]
