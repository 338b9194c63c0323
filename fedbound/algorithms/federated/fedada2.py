r"""FedAda2 (Lee, Sharma, Zaheer, Li, "Efficient Adaptive Federated Optimization", seed
004_a1d7c636af01c22e.txt; notes papers/fedada2.md) and its baselines on the federated round template
(:mod:`fedbound.algorithms.federated.round`).

Jointly adaptive FL: an adaptive server optimizer on the pseudo-gradient and an adaptive client
optimizer whose state is re-initialized every round (stateless clients [L92]). Round t (Alg. 1
[L108-L120], Alg. 2 [L667-L690]; Delta_i^t = x_{i,K}^t - x_{t-1}, the negative pseudo-gradient):

    clients i in S^t, from x_{i,0} = x_{t-1} with zero local statistics, K local steps of the client
    optimizer;   Delta_t = (1/|S^t|) sum_i Delta_i^t
    server (SU [L98-L104]):   m_t = b1 m_{t-1} + (1 - b1) Delta_t
                              v_t = v_{t-1} + Delta_t^2                    (AdaGrad)
                                    b2 v_{t-1} + (1 - b2) Delta_t^2         (Adam, C.2 [L1128-L1136])
                              x_t = x_{t-1} + eta m_t / (sqrt(v_t) + tau),   m_0 = 0, v_0 = tau^2

tau outside the root and v_0 = tau^2 as in the proofs [L668]; server Adam's bias correction is not
specified by the paper (notes 2.2): an option, off ("none") by default.

Every switch of the server and client transforms (:mod:`fedbound.algorithms.optim.server`,
:mod:`~fedbound.algorithms.optim.client`) is an option of the algorithms that use them, under one
name in Python, on the command line (``--`` + the name with dashes) and in sweep SPECs; the defaults
are the paper's (so a run that does not give them is unchanged):

=======================  =================  =====================================================
option                   algorithms         meaning (default first)
=======================  =================  =====================================================
bias_correction          all three          server bias correction: "none", "adam" or "flower"
                                            (Adam server only; :mod:`~fedbound.algorithms.optim.server`)
v0                       all three          server v_0 (default tau^2, the proofs' [L668])
eps_inside_sqrt          all three          server tau outside the root (sqrt(v) + tau), or inside
client_bias_correction   all three          Kingma-Ba correction of the Adam / SM3-Adam client (on;
                                            DJA: off, its moments start from the server's)
client_v0                jointzero          the AdaGrad client's v_0 (0; DJA's v_0 is the server's)
carry_over               fedada2            SM3-II's mu kept between refreshes (on; off: the
                                            literal reset of Alg. 2/4 [L675, L723])
=======================  =================  =====================================================

(the clients put eps outside the root: client.adagrad, adam, sm3 and sm3_adam have no other
placement.)

==============  =============================  =================================  ===============
algorithm       server                         client (zero-initialized per round) sent per round
==============  =============================  =================================  ===============
FedAvg          average (fedopt.FedAvg)        SGD                                x down, Delta up
FedAdaGrad      AdaGrad (fedopt.FedAdagrad)    SGD                                x, Delta
FedAdam         Adam (fedopt.FedAdam)          SGD                                x, Delta
DJA             AdaGrad / Adam                 AdaGrad / Adam, state initialized  x and server
                                               from the server's (``mapping``)    state, Delta
JointZero       AdaGrad / Adam                 AdaGrad / Adam (full diagonal)     x, Delta
FedAda2         AdaGrad / Adam                 SM3 (I or II, delay z, covers)     x, Delta
Blended         AdaGrad / Adam                 client i's own strategy (Alg. 5)   x, Delta
==============  =============================  =================================  ===============

(Table in notes 2.14; "Joint Adap. w/o Precond. Commu." is JointZero.) Options common to the
jointly adaptive ones: the eps_s rule that zeroes a client step with 0 < ||m/(sqrt(v)+eps)|| < eps_s
(Alg. 2 [L679]; ``eps_s``), the preconditioner delay z (AGDU/ADMU/SM3 with (k-1)/z integral,
[L695]), and client-level differential privacy (``dp``: each Delta_i clipped to norm c, Gaussian
noise of standard deviation sigma c on the sum, divided by the expected cohort; Section 6 / H.1
[L204-L206, L1639]: the mechanism is not described in the paper, this is DP-FedAvg's, notes 7.3).

SM3's cover is built from ``task.parameter_shapes``: rows and columns of each weight matrix (q = m + n
accumulators), singletons of each vector (notes 2.6, 7.6: the experiments' cover is unspecified).

Accounting: every participant downloads x and uploads Delta_i (d floats each, FedAvg's); DJA also
downloads the server state it maps (d floats per vector: 1.5x FedAvg's floats for the second moment
alone, Table 2 [L1627-L1633]). Client memory per participant is the client transform's
``state_floats(d)`` (SM3: q + 1; AdaGrad: d + 1; Adam: 2d + 1), cf. fedbound.theory.fedada2.costs.
"""
from __future__ import annotations

import dataclasses
from typing import Annotated, Callable, Literal, NamedTuple, Sequence

import numpy as np
import torch

from fedbound.algorithms.accounting import CommCounts
from fedbound.algorithms.base import Decay, Steps, check_task
from fedbound.algorithms.federated.local_steps import LocalSteps
from fedbound.algorithms.federated.round import (Federated, FederatedState, ParticipationScheme,
                                                 participation_scheme)
from fedbound.algorithms.optim import chain, client, server, tree_map
from fedbound.algorithms.optim.base import Transform, labelled
from fedbound.algorithms.optim.client import Shapes
from fedbound.algorithms.optim.registry import (CLIENT_OPTIMIZERS as CLIENT_OPTIMIZER_SPECS,
                                                BiasCorrection, bias_correction_mode)
from fedbound.algorithms.options import (BETA1, BETA2, BIAS_CORRECTION, CLIENT_BIAS_CORRECTION,
                                         CLIENTS_PER_ROUND, EPS_INSIDE_SQRT, LOCAL_STEPS, LR,
                                         SERVER_LR, TAU, V0, at_least_one, positive, unit_interval)
from fedbound.algorithms.registry import AlgorithmSpec, register
from fedbound.argtypes import Count, NonNegative, NonNegativeInt, Positive, Range, Seed
from fedbound.deprecation import renamed_keywords
from fedbound.errors import InputTypeError, require
from fedbound.network.sampling import Participation
from fedbound.registry import choice_option
from fedbound.tasks.base import Task
from fedbound.validate import boolean, integer, number, one_of, real_array

SERVER_OPTIMIZERS = ("adagrad", "adam")
CLIENT_OPTIMIZERS = ("sgd", "adagrad", "adam", "sm3", "sm3_adam")
#: a server optimizer of :data:`SERVER_OPTIMIZERS`
ServerOptimizer = Literal["adagrad", "adam"]


# ---- the optimizers of the paper -------------------------------------------------------------
def make_server(kind: ServerOptimizer = "adagrad", lr: Positive = 0.1, tau: Positive = 1e-3,
                beta1: Decay | None = None, beta2: Decay = 0.999,
                bias_correction: BiasCorrection = "none", v0: NonNegative | None = None,
                eps_inside_sqrt: bool = False) -> Transform:
    """The server update SU (AdaGrad with momentum) or server Adam, v_0 = tau^2, tau outside the
    root (module docstring). ``beta1`` None: 0 for AdaGrad (SU with no momentum; the paper's
    beta~_1 for the AdaGrad server is unspecified, notes 6.1), 0.9 for Adam (H.2 [L1663]);
    ``beta2`` = 0.999 (H.2). ``bias_correction`` ("none", "adam" or "flower"; True / False are
    "adam" / "none") applies to Adam only; ``v0`` None is tau^2; ``eps_inside_sqrt``: tau inside
    the root, sqrt(v + tau)."""
    kind = one_of("server_optimizer", kind, SERVER_OPTIMIZERS)
    tau = number("tau", tau, low=0.0, low_open=True, high=1e150)   # v_0 = tau^2 stays finite
    beta2 = number("beta2", beta2, low=0.0, high=1.0, high_open=True)
    mode = bias_correction_mode("bias_correction", bias_correction)
    v0 = tau ** 2 if v0 is None else number("v0", v0, low=0.0)
    if kind == "adagrad":
        require(mode == "none", "bias_correction applies to the Adam server "
                                "(server_optimizer='adam') only")
        return server.adagrad(lr, eps=tau, v0=v0, eps_inside_sqrt=eps_inside_sqrt,
                              b1=0.0 if beta1 is None else beta1)
    return server.adam(lr, b1=0.9 if beta1 is None else beta1, b2=beta2, eps=tau,
                       bias_correction=mode, eps_inside_sqrt=eps_inside_sqrt, v0=v0)


def make_client(kind: Literal["sgd", "adagrad", "adam", "sm3", "sm3_adam"], lr: Positive, *,
                eps: Positive = 1e-3, delay: Steps = 1, shapes: Shapes | None = None,
                variant: Literal["I", "II"] = "II", beta1: Decay = 0.9, beta2: Decay = 0.999,
                bias_correction: bool | None = None, eps_s: Positive | None = None,
                v0: NonNegative | None = None, carry_over: bool | None = None) -> Transform:
    """A client optimizer of the paper, zero-initialized (init is called every round): "sgd",
    "adagrad" (AGDU, Alg. 9 [L1490-L1512]), "adam" (ADMU, Alg. 7 [L1357-L1375]), "sm3" (SM3-I/II
    with delay and mu carry-over, Algs. 2-4 [L667-L736], over the covers of ``shapes``) or
    "sm3_adam" (an implementer-defined SM3 version of ADMU, client.sm3_adam), each with
    eps outside the root and delay z; followed by the eps_s small-step rule when ``eps_s`` is given
    (Alg. 2 [L679]). The switches, None for the client's default: ``bias_correction`` (Adam and
    SM3-Adam; default on), ``v0`` (AdaGrad's v_0; default 0), ``carry_over`` (SM3's mu between
    refreshes; default on). A client without the switch takes only the value that describes it
    (no bias correction, v_0 = 0, statistics kept between refreshes); another is refused."""
    kind = one_of("client_optimizer", kind, CLIENT_OPTIMIZERS)
    beta1 = number("client_beta1", beta1, low=0.0, high=1.0, high_open=True)
    beta2 = number("client_beta2", beta2, low=0.0, high=1.0, high_open=True)
    bias_correction = None if bias_correction is None else boolean("client_bias_correction",
                                                                   bias_correction)
    v0 = None if v0 is None else number("client_v0", v0, low=0.0)
    carry_over = None if carry_over is None else boolean("carry_over", carry_over)
    require(not bias_correction or kind in ("adam", "sm3_adam"),
            f"client_bias_correction applies to the adam and sm3_adam clients; the {kind} client "
            f"has no bias correction")
    require(not v0 or kind == "adagrad",
            f"client_v0 applies to the adagrad client; the {kind} client starts from v_0 = 0")
    require(carry_over is not False or kind == "sm3",
            f"carry_over=False (the literal SM3-II reset) applies to the sm3 client; the {kind} "
            f"client keeps its statistics between refreshes")
    bias_correction = True if bias_correction is None else bias_correction
    if kind == "sgd":
        t = client.sgd(lr)._replace(accumulation=None)
    elif kind == "adagrad":
        t = client.adagrad(lr, eps, v0=v0, delay=delay)
    elif kind == "adam":
        t = client.adam(lr, beta1, beta2, eps, bias_correction=bias_correction, delay=delay)
    elif kind == "sm3":
        require(shapes is not None, "the SM3 client needs the parameter shapes (its cover)")
        t = client.sm3(lr, shapes, variant=variant, delay=delay, eps=eps,
                       carry_over=True if carry_over is None else carry_over)
    else:
        require(shapes is not None, "the SM3-Adam client needs the parameter shapes (its cover)")
        t = client.sm3_adam(lr, shapes, beta1, beta2, eps, bias_correction=bias_correction, delay=delay)
    return t if eps_s is None else chain(t, client.drop_small_steps(eps_s, lr=lr))


# ---- differential privacy ------------------------------------------------------------------------
class DP(NamedTuple):
    """Client-level DP: each Delta_i clipped to l2 norm ``clip`` (c), Gaussian noise of standard
    deviation ``noise_multiplier * clip`` (sigma c) added to the sum of the clipped updates, which is
    divided by the expected cohort size (DP-FedAvg; notes 7.3: the paper's mechanism is not
    described)."""

    clip: Positive
    noise_multiplier: NonNegative


class ClippedMean:
    """Aggregation rule Delta = sum_j w_j min(1, c / ||Delta_j||) Delta_j (each update clipped to norm c)."""

    name = "clipped_mean"

    def __init__(self, clip: Positive):
        self.clip = number("clip", clip, low=0.0, low_open=True)

    def __call__(self, D: torch.Tensor, weights: torch.Tensor, tau: torch.Tensor | None,
                 client: Transform | None) -> torch.Tensor:
        norms = torch.linalg.vector_norm(D, dim=1)
        scale = torch.clamp(self.clip / torch.clamp(norms, min=torch.finfo(D.dtype).tiny), max=1.0)
        return weights @ (D * scale[:, None])


def noise_seed(seed: Seed) -> int:
    """The DP noise generator's seed, derived from a run's seed by one step of Knuth's 64-bit LCG so
    that the noise stream is not the round's own stream (participation, local noise)."""
    return (integer("seed", seed, low=0) * 6364136223846793005 + 1442695040888963407) % 2 ** 63


class NoisyState(NamedTuple):
    """State of :func:`gaussian_noise`: ``generator`` = the noise generator's state (a torch
    ByteTensor), ``inner`` = the wrapped server transform's state."""

    generator: torch.Tensor
    inner: tuple


@labelled
def gaussian_noise(transform: Transform, std: NonNegative, seed: Seed) -> Transform:
    """The server transform fed g + N(0, std^2 I): the noise of the Gaussian mechanism on the
    aggregate (-Delta and Delta get the same symmetric noise), drawn from a generator seeded with
    ``seed``. The generator state travels in the transform's state (:class:`NoisyState`), so the
    update stays pure."""
    std = number("noise std", std, low=0.0)
    seed = integer("seed", seed, low=0)

    def init(params):
        gen = torch.Generator(device="cpu").manual_seed(seed)
        return NoisyState(gen.get_state(), transform.init(params))

    def update(grads, state, params):
        gen = torch.Generator(device="cpu")
        gen.set_state(state.generator)
        noise = torch.randn(grads.shape, generator=gen, dtype=grads.dtype,
                            device=gen.device).to(grads.device)
        updates, inner = transform.update(grads + std * noise, state.inner, params)
        return updates, NoisyState(gen.get_state(), inner)

    return Transform(init, update, transform.state_floats, None)


# ---- the jointly adaptive family ---------------------------------------------------------------
class JointlyAdaptive(Federated):
    """The template with FedAda2's server (:func:`make_server`: ``server_optimizer``,
    ``server_lr``, ``tau``, ``beta1``, ``beta2``, ``bias_correction`` (None: "none"), ``v0`` (None:
    tau^2), ``eps_inside_sqrt``), a client transform, and the optional DP mechanism (:class:`DP`).
    Subclasses choose the client. The old keyword ``server_bias_correction`` still works and warns."""

    name = "jointly-adaptive"
    #: d-vectors of server state each participant downloads besides x (DJA: the mapped state)
    sent_vectors = 0

    def __init__(self, task: Task, *, client: Transform, local_steps: LocalSteps = 1,
                 server_optimizer: ServerOptimizer = "adagrad", server_lr: Positive = 0.1,
                 tau: Positive = 1e-3, beta1: Decay | None = None, beta2: Decay = 0.999,
                 bias_correction: BiasCorrection | None = None, v0: NonNegative | None = None,
                 eps_inside_sqrt: bool = False, dp: DP | None = None,
                 clients_per_round: Count | None = None,
                 participation: str | ParticipationScheme | None = None, seed: Seed = 0,
                 server_bias_correction: bool | None = None, **round_options):
        check_task(task)
        bias_correction = renamed_keywords(
            type(self).__name__, {"server_bias_correction": "bias_correction"},
            {"server_bias_correction": server_bias_correction},
            {"bias_correction": bias_correction})["bias_correction"]
        srv = make_server(server_optimizer, server_lr, tau, beta1, beta2,
                          "none" if bias_correction is None else bias_correction, v0, eps_inside_sqrt)
        self.dp, self.cohort = dp, None
        if dp is not None:
            if not isinstance(dp, DP):
                raise InputTypeError(f"dp must be a fedada2.DP(clip, noise_multiplier), got {dp!r}")
            weights = task.weights
            require(bool(torch.all(weights == weights[0])),
                    "DP noise calibration assumes uniform client weights p_i = 1/n")
            self.cohort = cohort = task.n if clients_per_round is None else integer(
                "clients_per_round", clients_per_round, low=1, high=task.n)
            sigma = number("noise_multiplier", dp.noise_multiplier, low=0.0)
            clip = number("clip", dp.clip, low=0.0, low_open=True)
            require(participation is None, "with dp, give clients_per_round (uniform sampling)")
            srv = gaussian_noise(srv, sigma * clip / cohort, noise_seed(seed))
            round_options["aggregation"] = ClippedMean(clip)
        super().__init__(task, client=client, server=srv, local_steps=local_steps,
                         clients_per_round=clients_per_round, participation=participation,
                         seed=seed, **round_options)

    def privacy(self, rounds: NonNegativeInt,
                delta: Annotated[float, Range(0.0, 1.0, low_open=True, high_open=True)],
                conversion: Literal["improved", "classical"] = "improved") -> tuple[float, int]:
        """(eps, optimal RDP order) of ``rounds`` rounds at ``delta`` by the subsampled-Gaussian RDP
        accountant (fedbound.privacy; Section 6 [L204-L206]) with q = cohort / n and sigma the noise
        multiplier. The accountant is exact for Poisson sampling at rate q; for a fixed-size uniform
        cohort it is the customary approximation."""
        require(self.dp is not None, "this run has no DP mechanism (dp=None)")
        from fedbound import privacy  # scipy.special: 0.2 s of every run's start-up otherwise

        return privacy.epsilon(self.cohort / self.task.n, self.dp.noise_multiplier, rounds, delta,
                               conversion=conversion)

    def counts(self, part: Participation, gradients: NonNegativeInt, workers: NonNegativeInt,
               steps: NonNegativeInt) -> CommCounts:
        c = super().counts(part, gradients, workers, steps)
        if not self.sent_vectors:
            return c
        return dataclasses.replace(
            c, download_floats=c.download_floats + c.downloads * self.sent_vectors * self.task.d)


class FedAda2(JointlyAdaptive):
    """FedAda2 (Alg. 2 [L667-L690]): server AdaGrad (SU) or Adam, client SM3 (``sm3_variant`` "II"
    as analysed, or "I"; delay z = ``delay``; eps = ``client_eps`` outside the root) over the covers
    of ``task.parameter_shapes``, zero-initialized every round; nothing but x and Delta is sent.
    ``client_optimizer="sm3_adam"``: the experiments' "SM3 adaptation of Adam" [L122, L691], never
    written out in the paper (fedada2.md 2.6): client.sm3_adam with ``client_beta1``, ``client_beta2``
    and ``client_bias_correction`` (None: on). ``carry_over`` (SM3; None: on, as Lemma 15 needs;
    False: the literal reset of Alg. 2/4, SM3-II only). The server's options are
    :class:`JointlyAdaptive`'s.

    Example::

        >>> from fedbound.tasks import LeastSquares
        >>> from fedbound.algorithms import run
        >>> task = LeastSquares.generate(10, 20, 5, seed=0)
        >>> alg = FedAda2(task, lr=0.05, local_steps=5, clients_per_round=5, server_lr=0.1, seed=0)
        >>> traj = run(alg, 30)
        >>> bool(traj.loss_gap[-1] < traj.loss_gap[0])
        True
    """

    name = "FedAda2"

    def __init__(self, task: Task, *, lr: Positive, local_steps: LocalSteps = 1,
                 client_optimizer: Literal["sm3", "sm3_adam"] = "sm3", client_eps: Positive = 1e-3,
                 delay: Steps = 1, sm3_variant: Literal["I", "II"] = "II", client_beta1: Decay = 0.9,
                 client_beta2: Decay = 0.999, eps_s: Positive | None = None,
                 server_optimizer: ServerOptimizer = "adagrad", carry_over: bool | None = None,
                 client_bias_correction: bool | None = None, **options):
        check_task(task)
        kind = one_of("client_optimizer", client_optimizer, ("sm3", "sm3_adam"))
        require(kind == "sm3" or sm3_variant == "II", "SM3-Adam is built on SM3-II (sm3_variant='II')")
        t = make_client(kind, lr, eps=client_eps, delay=delay, shapes=task.parameter_shapes,
                        variant=sm3_variant, beta1=client_beta1, beta2=client_beta2, eps_s=eps_s,
                        carry_over=carry_over, bias_correction=client_bias_correction)
        super().__init__(task, client=t, local_steps=local_steps, server_optimizer=server_optimizer,
                         **options)


class JointZero(JointlyAdaptive):
    """Joint adaptivity without preconditioner communication ("Joint Adap. w/o Precond. Commu.",
    notes 2.14): server AdaGrad/Adam, client full-diagonal AdaGrad (AGDU, v_0 = ``client_v0``,
    None: 0) or Adam (ADMU, ``client_bias_correction``, None: on), zero-initialized every round:
    FedAda2 without SM3."""

    name = "JointZero"

    def __init__(self, task: Task, *, lr: Positive, local_steps: LocalSteps = 1,
                 client_optimizer: Literal["adagrad", "adam"] = "adagrad", client_eps: Positive = 1e-3,
                 delay: Steps = 1, client_beta1: Decay = 0.9, client_beta2: Decay = 0.999,
                 eps_s: Positive | None = None, server_optimizer: ServerOptimizer = "adagrad",
                 client_bias_correction: bool | None = None, client_v0: NonNegative | None = None,
                 **options):
        kind = one_of("client_optimizer", client_optimizer, ("adagrad", "adam"))
        t = make_client(kind, lr, eps=client_eps, delay=delay, beta1=client_beta1,
                        beta2=client_beta2, eps_s=eps_s, bias_correction=client_bias_correction,
                        v0=client_v0)
        super().__init__(task, client=t, local_steps=local_steps, server_optimizer=server_optimizer,
                         **options)


# ---- DJA: the server state sent to the clients ---------------------------------------------------
def _second_moment(server_state, client_state):
    """client v_0 <- server v~_{t-1} (AdaGrad or Adam client)."""
    v = client_state.second_moment
    return client_state._replace(second_moment=server_state.second_moment.expand_as(v).clone())


def _moments(server_state, client_state):
    """Adam client: m_0 <- server m~_{t-1}, v_0 <- server v~_{t-1}."""
    m, v = client_state.first_moment, client_state.second_moment
    return client_state._replace(first_moment=server_state.first_moment.expand_as(m).clone(),
                                 second_moment=server_state.second_moment.expand_as(v).clone())


#: named DJA mappings: name -> (function(server state (server.MomentsState), fresh client state
#: (client.AdagradState or client.AdamState)) -> client state, d-vectors sent down)
DJA_MAPPINGS = {"second_moment": (_second_moment, 1), "moments": (_moments, 2)}


def with_init(transform: Transform, fn: Callable[[tuple, torch.Tensor], tuple]) -> Transform:
    """``transform`` whose fresh state is replaced by ``fn(state, params)`` at init."""
    return transform._replace(init=lambda params: fn(transform.init(params), params))


class DJA(JointlyAdaptive):
    """Direct joint adaptivity (notes 2.14; Table 2 [L1627-L1633]): server AdaGrad/Adam, client
    AdaGrad/Adam whose state is initialized every round from the server's state, which is sent to
    every participant. The paper does not fix the mapping (notes 8.23), so it is a parameter:
    "second_moment" (client v_0 <- v~_{t-1}; one d-vector sent: 3d floats per client, 1.5x FedAvg),
    "moments" (Adam client: m_0 <- m~_{t-1}, v_0 <- v~_{t-1}; 4d), or a callable
    ``(server_state, client_state) -> client_state`` with ``sent_vectors`` d-vectors sent. The
    server's state is that of :func:`make_server`, a server.MomentsState (count t, first_moment m~,
    second_moment v~) of the pseudo-gradient g = -Delta (same v~; m~ has the sign of a gradient,
    like the client's m); the client's is a client.AdagradState or client.AdamState. Note the
    scales: v~ accumulates squared model differences, the client's v squared gradients; the mapping
    is where a user rescales. The Adam client runs without bias correction by default (its moments
    start from the server's, not from 0): ``client_bias_correction=True`` turns it on."""

    name = "DJA"

    def __init__(self, task: Task, *, lr: Positive, local_steps: LocalSteps = 1,
                 client_optimizer: Literal["adagrad", "adam"] = "adagrad",
                 mapping: (Literal["second_moment", "moments"]
                           | Callable[[tuple, tuple], tuple]) = "second_moment",
                 sent_vectors: NonNegativeInt | None = None, client_eps: Positive = 1e-3,
                 delay: Steps = 1, client_beta1: Decay = 0.9, client_beta2: Decay = 0.999,
                 eps_s: Positive | None = None, server_optimizer: ServerOptimizer = "adagrad",
                 client_bias_correction: bool | None = None, **options):
        kind = one_of("client_optimizer", client_optimizer, ("adagrad", "adam"))
        if callable(mapping):
            require(sent_vectors is not None, "a callable DJA mapping needs sent_vectors")
            self.mapping, self.sent_vectors = mapping, integer("sent_vectors", sent_vectors, low=0)
        else:
            name = one_of("mapping", mapping, DJA_MAPPINGS)
            require(not (name == "moments" and kind == "adagrad"),
                    "the 'moments' mapping needs an Adam client (AdaGrad keeps no first moment)")
            require(sent_vectors is None, "sent_vectors is fixed by a named mapping")
            self.mapping, self.sent_vectors = DJA_MAPPINGS[name]
        if kind == "adam" and client_bias_correction is None:
            client_bias_correction = False   # the moments start from the server's: no correction
        self.base_client = make_client(kind, lr, eps=client_eps, delay=delay, beta1=client_beta1,
                                       beta2=client_beta2, bias_correction=client_bias_correction,
                                       eps_s=None)
        self.eps_s_lr = (None if eps_s is None else number("eps_s", eps_s, low=0.0, low_open=True), lr)
        super().__init__(task, client=self.base_client, local_steps=local_steps,
                         server_optimizer=server_optimizer, **options)

    def round_client(self, server_state: tuple) -> Transform:
        """This round's client: the base client initialized from ``server_state`` by the mapping
        (then the eps_s rule, if any)."""
        mapped = with_init(self.base_client, lambda s, params: self.mapping(server_state, s))
        eps_s, lr = self.eps_s_lr
        return mapped if eps_s is None else chain(mapped, client.drop_small_steps(eps_s, lr=lr))

    def client_for_round(self, state: FederatedState) -> Transform:
        """This round's client: initialized from the server state sent down."""
        return self.round_client(self.server_state(state))

    def server_state(self, state: FederatedState) -> tuple:
        """The state of the server optimizer (without the DP noise generator)."""
        return state.server.inner if self.dp is not None else state.server


# ---- blended optimization (Alg. 5) ---------------------------------------------------------------
class Strategy(NamedTuple):
    """One client strategy O_l of Alg. 5 [L1163-L1185]: its client optimizer (a Transform), local
    steps K(O_l) and pseudo-gradient weight w(O_l) > 0."""

    optimizer: Transform
    local_steps: Steps = 1
    weight: Positive = 1.0


def per_client(transforms: Sequence[Transform], assignment: Sequence[NonNegativeInt]) -> Transform:
    """A client transform under which client i runs ``transforms[assignment[i]]``.

    Its ``for_clients(ids)`` gives the transform for rows that are the clients ``ids`` (the federated
    round binds it to each block of participants); used unbound, row j is client j. The state is the
    tuple of the strategies' states, each over all rows (so :func:`~fedbound.algorithms.optim.masked`
    can freeze rows); each strategy updates only its own rows. ``state_floats`` is None (it differs
    per client: :meth:`Blended.counts` sums the clients' own)."""
    transforms = tuple(transforms)
    require(len(transforms) > 0, "per_client needs at least one transform")
    for i, t in enumerate(transforms):
        if not isinstance(t, Transform):
            raise InputTypeError(f"strategy {i}'s optimizer must be a Transform, got {type(t).__name__}")
    index = real_array("assignment", assignment, ndim=1, low=0, high=len(transforms) - 1)
    require(bool(np.all(index == np.floor(index))), "assignment must hold integer transform indices")
    assignment = torch.as_tensor(np.asarray(assignment), dtype=torch.long)

    def bind(ids: torch.Tensor) -> Transform:
        groups = assignment.index_select(0, ids)
        members = [torch.nonzero(groups == l).squeeze(1) for l in range(len(transforms))]
        used = [m.numel() > 0 for m in members]

        def init(params):
            return tuple(t.init(params) if u else () for t, u in zip(transforms, used))

        def update(grads, state, params):
            out, new = torch.zeros_like(grads), []
            for t, rows, s, u in zip(transforms, members, state, used):
                if not u:
                    new.append(s)
                    continue
                part = tree_map(lambda a: a.index_select(0, rows), s)
                upd, part = t.update(grads.index_select(0, rows), part, params.index_select(0, rows))
                out.index_copy_(0, rows, upd)
                new.append(tree_map(lambda full, p: full.index_copy(0, rows, p), s, part))
            return out, tuple(new)

        return Transform(init, update, None, None, bind)

    def rows_bound(params):
        return bind(torch.arange(params.shape[0]))

    return Transform(lambda params: rows_bound(params).init(params),
                     lambda grads, state, params: rows_bound(params).update(grads, state, params),
                     None, None, bind)


class StrategyWeights:
    """A participation scheme whose aggregation weights are the inner scheme's times w(O_l(i)):
    Delta_t = sum_j w_j w(O_l(j)) Delta_j (Alg. 5: Delta_i^{t,l} = w(O_l)(x_K - x_{t-1}), averaged
    over the S = sum_l |S_l^t| sampled clients)."""

    def __init__(self, scheme: ParticipationScheme, client_weights: torch.Tensor):
        self.scheme, self.client_weights = scheme, client_weights
        self.name = getattr(scheme, "name", "participation") + "+strategy-weights"

    def draw(self, p: torch.Tensor, generator: torch.Generator) -> Participation:
        part = self.scheme.draw(p, generator)
        w = self.client_weights.to(part.weights.dtype).index_select(0, part.clients)
        return Participation(part.clients, part.weights * w, part.full)


class Blended(JointlyAdaptive):
    """Federated blended optimization (Alg. 5 [L1163-L1185]; Theorem 25 [L1187-L1211]): client i
    runs strategy ``strategies[assignment[i]]`` (its own optimizer, K(O_l) local steps and weight
    w(O_l)), zero-initialized every round; the server is FedAda2's. Strategies are chosen per client
    (Thm 25's w(O_l^i), notes 8.21). A client with K < 1 would count as dropped [L1266]: K >= 1 is
    required."""

    name = "Blended"

    def __init__(self, task: Task, *, strategies: Sequence[Strategy], assignment: Sequence[NonNegativeInt],
                 **options):
        check_task(task)
        strategies = tuple(strategies)
        require(len(strategies) > 0, "blended optimization needs at least one strategy")
        for i, s in enumerate(strategies):
            if not isinstance(s, Strategy):
                raise InputTypeError(f"strategies[{i}] must be a fedada2.Strategy, got {type(s).__name__}")
        a = real_array("assignment", assignment, ndim=1, low=0, high=len(strategies) - 1)
        require(a.shape == (task.n,), f"assignment needs one strategy per client, shape ({task.n},)")
        require(bool(np.all(a == np.floor(a))), "assignment must hold integer strategy indices")
        a = a.astype(np.int64)
        steps = np.array([integer(f"strategies[{i}].local_steps", s.local_steps, low=1)
                          for i, s in enumerate(strategies)])
        weights = np.array([number(f"strategies[{i}].weight", s.weight, low=0.0, low_open=True)
                            for i, s in enumerate(strategies)])
        self.strategies, self.assignment = strategies, a
        scheme = participation_scheme(task, options.pop("clients_per_round", None),
                                      options.pop("participation", None))
        require(options.get("dp") is None, "DP is not wired into blended optimization")
        super().__init__(task, client=per_client([s.optimizer for s in strategies], a),
                         local_steps=steps[a],
                         participation=StrategyWeights(scheme, torch.as_tensor(weights[a])),
                         **options)

    def counts(self, part: Participation, gradients: NonNegativeInt, workers: NonNegativeInt,
               steps: NonNegativeInt) -> CommCounts:
        """The template's counts with the client memory summed over the participants' own
        optimizers (state_floats of each one's strategy)."""
        c = super().counts(part, gradients, workers, steps)
        d = self.task.d
        per = np.array([0 if s.optimizer.state_floats is None else s.optimizer.state_floats(d)
                        for s in self.strategies])
        held = int(per[self.assignment[part.clients.cpu().numpy()]].sum())
        return dataclasses.replace(c, client_state_floats=held)


# ---- registry ------------------------------------------------------------------------------------
_SERVER = choice_option("server_optimizer", "server optimizer: adagrad (SU) or adam (default adagrad)",
                        SERVER_OPTIMIZERS, examples=SERVER_OPTIMIZERS)
_CLIENT_HELP = ("client optimizer (FedAda2: sm3 or sm3_adam, default sm3; JointZero, DJA: adagrad or "
                "adam, default adagrad)")
#: the client transforms' switches under the algorithms' client_ names (their declarations are the
#: optimizers': fedbound.algorithms.optim.registry, and SM3's carry_over in optim.client)
_CLIENT_BIAS_CORRECTION = dataclasses.replace(
    CLIENT_BIAS_CORRECTION, name="client_bias_correction",
    help="Kingma-Ba bias correction of the Adam / SM3-Adam client's moments (FedAda2, JointZero: "
         "on, --no-client-bias-correction turns it off; DJA: off)")
_CLIENT_V0 = dataclasses.replace(V0, name="client_v0", help="initial second moment v_0 >= 0 of the "
                                "AdaGrad client (default 0)")
_CARRY_OVER = CLIENT_OPTIMIZER_SPECS.find("sm3").option("carry_over")
#: the family's options: with the server's switches (make_server) and client_bias_correction
_COMMON = (LR, LOCAL_STEPS, CLIENTS_PER_ROUND, SERVER_LR, TAU, BETA1, BETA2, _SERVER,
           positive("client_eps", "client adaptivity eps > 0, outside the root (default 1e-3)",
                    examples=(1e-3,)),
           at_least_one("delay", "client preconditioner delay z >= 1 (default 1)", examples=(1, 2)),
           positive("eps_s", "zero client steps with norm below eps_s (default off)", examples=(1e-6,)),
           BIAS_CORRECTION, V0, EPS_INSIDE_SQRT, _CLIENT_BIAS_CORRECTION)
_BETAS = (unit_interval("client_beta1", "client Adam beta1 (default 0.9)", examples=(0.9,)),
          unit_interval("client_beta2", "client Adam beta2 (default 0.999)", examples=(0.999,)))
_FULL_DIAGONAL = choice_option("client_optimizer", _CLIENT_HELP, ("adagrad", "adam"),
                               examples=("adagrad", "adam"))

register(AlgorithmSpec("fedada2", FedAda2, "FedAda2: adaptive server, zero-initialized SM3 clients "
                       "(Lee et al. 2025)", "federated", (
    *_COMMON, choice_option("sm3_variant", "SM3 variant I or II (default II)", ("I", "II"),
                            examples=("I", "II")),
    choice_option("client_optimizer", _CLIENT_HELP, ("sm3", "sm3_adam"), examples=("sm3", "sm3_adam")),
    *_BETAS, _CARRY_OVER)))
register(AlgorithmSpec("jointzero", JointZero, "Joint adaptivity with zero-initialized full-diagonal "
                       "clients (FedAda2 baseline)", "federated",
                       (*_COMMON, _FULL_DIAGONAL, *_BETAS, _CLIENT_V0)))
register(AlgorithmSpec("dja", DJA, "Direct joint adaptivity: server second moment sent to the clients "
                       "(FedAda2 baseline)", "federated", (*_COMMON, _FULL_DIAGONAL, *_BETAS)))


__all__ = ["SERVER_OPTIMIZERS", "CLIENT_OPTIMIZERS", "make_server", "make_client", "DP",
           "ClippedMean", "noise_seed", "NoisyState", "gaussian_noise", "JointlyAdaptive", "FedAda2",
           "JointZero", "DJA", "DJA_MAPPINGS", "with_init", "Strategy", "per_client",
           "StrategyWeights", "Blended"]
