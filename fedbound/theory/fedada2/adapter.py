r"""FedAda2's adapter: a run of FedAda2 (Algorithm 2) or of its full-diagonal variants (Algorithms 8
and 10) mapped to the constants of Theorem 20, its Corollaries 23-24 and Corollaries 27 and 29
(seed 004_a1d7c636af01c22e.txt; papers/fedada2.md 1.2, 2.4, 2.10-2.12, 3, 4.9-4.15; symbols of
:mod:`fedbound.theory.fedada2.common`; the contract is :mod:`fedbound.theory.adapters`).

============  ==============================================================  =====================
constant      from the run                                                    source
============  ==============================================================  =====================
eta_l         ``lr``, the client step                                         Alg. 2 [L667-L690]
K             ``local_steps`` (the largest, for per-client counts)            [L114], [L1401]
K_minus       Algorithms 8 and 10: the smallest ``local_steps``               [L1441]
z             ``delay``, the client preconditioner delay                      (SM3) [L695]
eps, eps_s    ``client_eps`` (outside the root), ``eps_s`` (the small-step    Alg. 2 [L679]
              rule)
v0            0: the clients' preconditioners start at zero every round       [L675]
              (JointZero's AdaGrad client: ``client_v0``, default 0)
eta, tau      ``server_lr``, ``tau`` (the server's epsilon, outside the root) SU [L98-L104]
vtilde0       ``v0``, the server's v~_0 (default tau^2)                       [L668]
beta1_tilde   ``beta1``, the server's momentum (0 when not given)             SU
beta1, beta2  Algorithm 8 (client Adam): ``client_beta1``, ``client_beta2``   Alg. 7-8 [L1357-L1427]
B, eps_w      Algorithms 8 and 10: 1, 1 (the run weights every update by      [L1399, L1431-L1433]
              Xi = 1)
G             the task's coordinate-wise gradient bound                       Assumption 2 [L134-L136]
L, d, f_gap   the task's smoothness, dimension, f(x0) - f* at its x0          Assumption 1 [L130]
============  ==============================================================  =====================

Which run is which algorithm of the paper: ``fedada2`` with the SM3-II client (``sm3_variant``
"II", ``client_optimizer`` "sm3") is Algorithm 2 (Theorem 20); ``jointzero`` with
``client_optimizer`` "adam" is Algorithm 8 (FedAdaAdam, Corollary 27: ADMU clients, bias-corrected
as written) and with "adagrad" Algorithm 10 (FedAdaAdagrad, Corollary 29: AGDU clients).

Choices where the paper leaves one: eps_w = 1 although the analysis asks Xi_i^t > eps_w strictly
[L1433]: both corollaries' bounds decrease in eps_w (gamma1 and alpha1 are proportional to it), so
the bound holds at every eps_w < 1 and hence in the limit eps_w = 1; G is the task's bound on the
stochastic gradients' coordinates, which for a noise-free task is the bound on the full gradients
the proof uses [L128, L913].

Outside the theorems (refused): a task with gradient noise (the proof uses full-batch local
gradients [L128, L913]); client weights p that are not uniform (the server averages the updates
with 1/|S^t|, SU); the Adam server (C.2 [L1128-L1161] gives only Theta-forms); SM3-I and the
SM3-Adam client (not analysed, [L691-L699]); a run without the eps_s rule (Theorem 20 needs eps_s
> 0: L~ = 2 sqrt(d) G/(eta_l eps_s) [L140] and the bound are infinite without it [L142]); per-client
local steps for Algorithm 2 (which runs K for every client). Defaults (the constructors'):
``local_steps`` 1, ``server_lr`` 0.1, ``tau`` 1e-3, ``client_eps`` 1e-3, ``delay`` 1,
``client_beta1`` 0.9, ``client_beta2`` 0.999; ``clients_per_round`` (any participation is covered)
and the server Adam's ``beta2`` enter no constant. T is the caller's.
"""
from __future__ import annotations

import numpy as np

from fedbound.errors import require
from fedbound.network.subnets import Network
from fedbound.argtypes import TaskArg as Task   # checked without importing torch
from fedbound.theory.adapters import REQUIRED, covered, initial_gap, known, run_options
from fedbound.validate import integer, number

PAPER = "FedAda2"
#: the registered algorithms FedAda2's theorems analyse (fedada2: Theorem 20; jointzero: Cor. 27, 29)
ALGORITHMS = ("fedada2", "jointzero")
_COMMON = {"lr": REQUIRED, "local_steps": 1, "server_lr": 0.1, "tau": 1e-3, "beta1": None,
           "server_optimizer": "adagrad", "client_eps": 1e-3, "delay": 1, "eps_s": None,
           "bias_correction": "none", "v0": None, "eps_inside_sqrt": False,
           "client_bias_correction": None}
#: algorithm -> option -> default (beta1 None: 0, the AdaGrad server's default; eps_s None: off;
#: v0 None: tau^2; client_bias_correction None: the client's own, on for ADMU; carry_over None: on;
#: client_v0 None: 0)
DEFAULTS = {
    "fedada2": {**_COMMON, "client_optimizer": "sm3", "sm3_variant": "II", "carry_over": None},
    "jointzero": {**_COMMON, "client_optimizer": "adagrad", "client_beta1": 0.9, "client_beta2": 0.999,
                  "client_v0": None},
}
#: algorithm -> options that do not enter the constants
IGNORED = {"fedada2": ("clients_per_round", "beta2", "client_beta1", "client_beta2"),
           "jointzero": ("clients_per_round", "beta2")}


def _steps(opts: dict) -> np.ndarray:
    """The local-step counts of the options (one, or one per client) as int64."""
    values = np.atleast_1d(np.asarray(opts["local_steps"], dtype=object)).ravel()
    return np.array([integer(f"local_steps[{i}]", v, low=1) for i, v in enumerate(values)], dtype=np.int64)


def _checked(task, algorithm: str, opts: dict) -> None:
    """Refuse the runs outside FedAda2's theorems (module doc)."""
    require(opts["server_optimizer"] == "adagrad", f"FedAda2's explicit bounds analyse the AdaGrad "
                                                   f"server SU; got server_optimizer = {opts['server_optimizer']!r}")
    require(not opts["eps_inside_sqrt"], "FedAda2's SU puts tau outside the root [L98-L104]; got "
                                         "eps_inside_sqrt = True")
    if algorithm == "fedada2":
        require(opts["client_optimizer"] == "sm3" and opts["sm3_variant"] == "II",
                f"Theorem 20 analyses the SM3-II client; got client_optimizer = "
                f"{opts['client_optimizer']!r}, sm3_variant = {opts['sm3_variant']!r}")
        require(opts["carry_over"] in (None, True), "Theorem 20 (Lemma 15) needs SM3-II's mu carried "
                                                    "over between refreshes (notes 2.4); got "
                                                    "carry_over = False")
        require(np.unique(_steps(opts)).size == 1, "Algorithm 2 runs the same K local steps on every "
                                                   "client; got per-client local_steps")
    elif opts["client_optimizer"] == "adam":
        require(opts["client_bias_correction"] in (None, True),
                "Corollary 27 analyses Algorithm 8 as written, with bias-corrected ADMU (Alg. 7); got "
                "client_bias_correction = False")
    require(opts["eps_s"] is not None, "FedAda2's bounds need the eps_s rule (eps_s > 0): without it "
                                       "L~ = 2 sqrt(d) G/(eta_l eps_s) and the bound are infinite [L140-L142]")
    sigma2 = known(PAPER, task, "sigma^2 (the theorems assume full-batch gradients, sigma^2 = 0)", task.sigma2)
    require(sigma2 == 0, f"FedAda2's theorems assume full-batch local gradients [L128, L913]; the task "
                         f"has gradient noise sigma^2 = {sigma2:g}")
    p = task.weights.detach().double()
    require(bool((p == p[0]).all()), "FedAda2's server averages the updates uniformly (1/|S^t|, SU "
                                        "[L98-L104]); the task's client weights p are not uniform")


def constants(task: Task, network: Network | None, algorithm: str,
              options: dict[str, object]) -> dict:
    """The constants of Theorem 20 (fedada2) or Corollaries 27/29 (jointzero) for the run (module
    doc); ``network`` must be None (the algorithms take none)."""
    covered(PAPER, algorithm, ALGORITHMS)
    opts = run_options(PAPER, algorithm, options, DEFAULTS[algorithm], IGNORED[algorithm])
    require(network is None, f"{algorithm} takes no network")
    _checked(task, algorithm, opts)
    tau = number("tau", opts["tau"], low=0.0, low_open=True)
    steps = _steps(opts)
    out = {
        "eta_l": number("lr", opts["lr"], low=0.0, low_open=True), "K": int(steps.max()),
        "z": integer("delay", opts["delay"], low=1),
        "eps": number("client_eps", opts["client_eps"], low=0.0, low_open=True),
        "eps_s": number("eps_s", opts["eps_s"], low=0.0, low_open=True),
        "v0": 0.0 if opts.get("client_v0") is None else number("client_v0", opts["client_v0"], low=0.0),
        "eta": number("server_lr", opts["server_lr"], low=0.0, low_open=True), "tau": tau,
        "vtilde0": tau ** 2 if opts["v0"] is None else number("v0", opts["v0"], low=0.0),
        "beta1_tilde": 0.0 if opts["beta1"] is None else float(opts["beta1"]),
        "G": float(known(PAPER, task, "G (Assumption 2, coordinate-wise)", task.G_inf)),
        "L": float(known(PAPER, task, "L (Assumption 1)", task.L)),
        "d": int(task.d), "f_gap": initial_gap(PAPER, task),
    }
    if algorithm == "jointzero":
        out.update(K_minus=int(steps.min()), B=1.0, eps_w=1.0)
        if opts["client_optimizer"] == "adam":
            out.update(beta1=float(opts["client_beta1"]), beta2=float(opts["client_beta2"]))
    return out


__all__ = ["PAPER", "ALGORITHMS", "DEFAULTS", "IGNORED", "constants"]
