r"""AFGA's adapter: a run of AFGA or CAFGA (task, gossip network, options) mapped to the constants
of Theorem 4.6, Theorem D.3 and the step-size and rho-conditions (seed 000_bd1b5016b2d2bc05.txt;
papers/afga.md 1.2, 3, 4.1, 4.3, 4.4; symbols of :mod:`fedbound.theory.afga.common`; the contract
is :mod:`fedbound.theory.adapters`).

=============  ===========================================================  ==========================
constant       from the run                                                 source
=============  ===========================================================  ==========================
eta_l          ``lr``, the clients' SGD step                                Alg. 1 [L158]
eta            ``server_lr``, AMSGrad's step                                (2) [L126-L129]
I              ``local_steps``                                              [L118]
beta1, eps_ams ``beta1``, ``tau`` (AMSGrad's epsilon, inside the root)      (2); [002 L262-L264]
N, M           the task's clients, ``clients_per_round`` (default N)        [L97, L131-L132]
K, n, m        CAFGA: the clusters (the network's subnets, or ``clusters``   [L407-L414]
               rings), N/K and M/K; AFGA: 1, N, M (the K = 1 case)          (37) [L2602-L2621]
rho            ||W - J||_2 of the gossip matrix, max over the clusters for   Assumptions 4.5, D.2
               CAFGA (rho_max)                                              [L269-L273, L1069-L1078]
L, sigma, G    the task's smoothness, sqrt of its noise variance, and its    Assumptions 4.1-4.3
               bound on stochastic-gradient norms                           [L245-L256]
sigma_g        sqrt of the task's (1/N) sum_i ||grad f_i - grad f||^2 bound Assumption 4.4 [L260-L263]
sigma_l,       sqrt of the mean intra-cluster dissimilarity (1/K) sum_k      Assumption D.1
sigma_c,       sigma_k^2 and of the inter-cluster sigma_c^2 at alpha = 1;    [L1059-L1077]; K = 1:
alpha          AFGA: sigma_g, 0 and 1                                       sigma_c = 0 [L1079-L1091]
d, f_gap       the model dimension; f(x_1) - f* at the task's initial point  [L104], [L312]
=============  ===========================================================  ==========================

Gossip matrix (the algorithms' own defaults): AFGA without a network gossips on the paper's ring of
N clients with self weight 1/3 [L598]; CAFGA without a network on ``clusters`` (default 5) such
rings of N/K clients [L474-L475, L999]. AFGA over a network of several subnets gossips on a
disconnected W (||W - J||_2 = 1): no theorem covers it (Assumption 4.5 needs rho < 1), refused.

Choices where the paper leaves one: alpha = 1 in Assumption D.1 (the K = 1 reduction forces it, and
the notes' quadratic construction 4.3 uses it; a larger alpha lowers sigma_c but enters the step-size
conditions); f_gap at the task's x0, where a run starts unless given another point.

Outside the theorems (refused): the communication-adapted "(a)" variants (no theory, [L670-L672]),
FedAMSGrad, a server other than AMSGrad, a bias correction or eps outside the root
(``bias_correction``, ``eps_inside_sqrt=False``: (2) has neither). Defaults (the constructors'):
``local_steps`` 1, ``clients_per_round`` N, ``server_lr`` 0.01, ``beta1`` 0.9, ``tau`` 1e-8,
``server_optimizer`` "amsgrad", no bias correction, eps inside the root; ``beta2`` enters no
constant. R and the absolute constants C, C1..C4
(:data:`~fedbound.theory.afga.common.DEFAULT_CONSTANTS`) are the caller's.
"""
from __future__ import annotations

import math

import numpy as np

from fedbound.errors import require
from fedbound.network.mixing import spectral_norm
from fedbound.network.subnets import Network
from fedbound.network.topology import ring_weights
from fedbound.argtypes import TaskArg as Task   # checked without importing torch
from fedbound.theory.adapters import REQUIRED, covered, initial_gap, known, run_options
from fedbound.validate import integer, number

PAPER = "AFGA"
#: the registered algorithms AFGA's theorems analyse (AFGA: Theorem 4.6; CAFGA: Theorem D.3)
ALGORITHMS = ("afga", "cafga")
_COMMON = {"lr": REQUIRED, "local_steps": 1, "clients_per_round": None, "server_lr": 0.01,
           "beta1": 0.9, "tau": 1e-8, "server_optimizer": "amsgrad", "bias_correction": "none",
           "eps_inside_sqrt": None, "v0": None}
#: algorithm -> option -> default (None: clients_per_round = N; clusters = 5 without a network;
#: eps_inside_sqrt None: AMSGrad's own, inside the root; v0 None: 0)
DEFAULTS = {"afga": _COMMON, "cafga": {**_COMMON, "clusters": None}}
#: algorithm -> options that do not enter the constants (AMSGrad's beta2 is in no bound)
IGNORED = {"afga": ("beta2",), "cafga": ("beta2",)}
#: CAFGA's clusters without a network (the constructor's default)
DEFAULT_CLUSTERS = 5


def _clusters(task, network, algorithm: str, opts: dict) -> tuple[np.ndarray, float]:
    """(cluster of each client (N,), rho): the gossip matrix's clusters and ||W_k - J||_2 (max)."""
    N = task.n
    if network is not None:
        require(network.n == N, f"the network has {network.n} clients but the task has N = {N}")
    if algorithm == "afga":
        if network is None:
            return np.zeros(N, dtype=np.int64), spectral_norm(ring_weights(N))
        require(network.S == 1, f"AFGA over a network of {network.S} subnets gossips on a disconnected "
                                f"W (||W - J||_2 = 1): Assumption 4.5 needs rho < 1 (use cafga)")
        return np.zeros(N, dtype=np.int64), float(network.spectral_norms[0])
    if network is None:
        K = DEFAULT_CLUSTERS if opts["clusters"] is None else integer("clusters", opts["clusters"], low=1)
        require(N % K == 0, f"N = {N} clients cannot form K = {K} equal clusters")
        return np.repeat(np.arange(K), N // K), spectral_norm(ring_weights(N // K))
    require(opts["clusters"] is None, "give the clusters through the network or clusters, not both")
    require(bool(np.all(network.m == network.m[0])), f"CAFGA needs equal clusters (N = K n), got "
                                                     f"cluster sizes {network.m.tolist()}")
    return np.asarray(network.subnet_of), float(np.max(network.spectral_norms))


def constants(task: Task, network: Network | None, algorithm: str,
              options: dict[str, object]) -> dict:
    """The constants of Theorems 4.6 / D.3 for the run (module doc)."""
    covered(PAPER, algorithm, ALGORITHMS)
    opts = run_options(PAPER, algorithm, options, DEFAULTS[algorithm], IGNORED[algorithm])
    require(opts["server_optimizer"] == "amsgrad", f"AFGA's theorems analyse the AMSGrad server (2); "
                                                   f"got server_optimizer = {opts['server_optimizer']!r}")
    require(opts["bias_correction"] in ("none", False) and opts["eps_inside_sqrt"] in (None, True),
            f"AFGA's theorems analyse (2): no bias correction, eps inside the root; got "
            f"bias_correction = {opts['bias_correction']!r}, eps_inside_sqrt = {opts['eps_inside_sqrt']!r}")
    subnet_of, rho = _clusters(task, network, algorithm, opts)
    N = task.n
    K = int(subnet_of.max()) + 1
    M = N if opts["clients_per_round"] is None else integer("clients_per_round", opts["clients_per_round"],
                                                            low=1, high=N)
    require(M % K == 0, f"clients_per_round M = {M} must be a multiple of the K = {K} clusters")
    sigma_g2 = known(PAPER, task, "sigma_g^2 (Assumption 4.4)", task.sigma_g2())
    if K == 1:
        sigma_l2, sigma_c2 = sigma_g2, 0.0
    else:
        intra = known(PAPER, task, "sigma_k^2 (Assumption D.1)", task.intra_cluster(subnet_of))
        sigma_l2 = float(np.mean(intra))
        sigma_c2 = known(PAPER, task, "sigma_c^2 (Assumption D.1)", task.inter_cluster(subnet_of, alpha=1.0))
    return {
        "eta_l": number("lr", opts["lr"], low=0.0, low_open=True),
        "eta": number("server_lr", opts["server_lr"], low=0.0, low_open=True),
        "I": integer("local_steps", opts["local_steps"], low=1),
        "beta1": float(opts["beta1"]), "eps_ams": float(opts["tau"]),
        "N": int(N), "M": int(M), "K": K, "n": N // K, "m": M // K, "rho": float(rho),
        "L": float(known(PAPER, task, "L (Assumption 4.1)", task.L)),
        "sigma": math.sqrt(float(known(PAPER, task, "sigma^2 (Assumption 4.2)", task.sigma2))),
        "G": float(known(PAPER, task, "G (Assumption 4.3)", task.G)),
        "sigma_g": math.sqrt(float(sigma_g2)), "sigma_l": math.sqrt(float(sigma_l2)),
        "sigma_c": math.sqrt(float(sigma_c2)), "alpha": 1.0,
        "d": int(task.d), "f_gap": initial_gap(PAPER, task),
    }


__all__ = ["PAPER", "ALGORITHMS", "DEFAULTS", "IGNORED", "DEFAULT_CLUSTERS", "constants"]
