"""Server optimizers as :class:`~fedbound.algorithms.optim.base.Transform` pairs (the FedOpt family).

A server transform acts on the global model x (shape (d,)) and receives the PSEUDO-GRADIENT

    g = x - (aggregated client model),          updates: new x = x + updates,

so that ``sgd(lr=1.0)`` reproduces FedAvg (x <- the aggregate). FedOpt (Reddi et al. 2021, Alg. 2)
and the papers write the update with Delta = -g (the mean model difference) and x <- x + eta m/(...):
the same update, as m(g) = -m(Delta) and v depends on g^2 only.

Defaults are those of Flower's strategies (Flower 1.42, flwr.serverapp.strategy: FedAvgM,
FedAdagrad, FedAdam, FedYogi; their ``tau`` is ``eps`` here) and of the FedOpt paper where Flower has
none; the paper-faithful choices of FedAda2 and AFGA are explicit switches (``eps_inside_sqrt``,
``bias_correction``, ``v0``, ``b1``). The adaptive transforms (adagrad, adam, yogi, amsgrad) differ
only in their second-moment rule; the rest of the step is :func:`_adaptive`'s. Their states are
:class:`MomentsState` (:class:`AMSGradState` for amsgrad); sgd is stateless and momentum's state is
:class:`~fedbound.algorithms.optim.client.MomentumState`.

Bias corrections (``bias_correction`` of adam, yogi and amsgrad; t = 1, 2, ... the server rounds):

==========  ===========================================================  ==========================
name        step (eps outside the root)                                   source
==========  ===========================================================  ==========================
"none"      x - lr m_t / (sqrt(v_t) + eps)                                Reddi et al. 2021, Alg. 2
"adam"      x - lr m^ / (sqrt(v^) + eps), m^ = m_t/(1 - b1^t),            Kingma & Ba 2015, Alg. 1
            v^ = v_t/(1 - b2^t)
"flower"    x - lr sqrt(1 - b2^(t+1)) / (1 - b1^(t+1)) m_t / (sqrt(v_t)   Flower 1.42, fedadam.py
            + eps)
==========  ===========================================================  ==========================

one function each (:func:`uncorrected_step`, :func:`adam_corrected_step`,
:func:`flower_corrected_step`, whose docstrings give the details). "adam" is "flower" one round
earlier with eps rescaled by sqrt(1 - b2^t); both tend to "none" as t grows. The booleans of the
switch before issue 25 still work: True is "adam", False is "none".
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple

import torch

from fedbound.algorithms.base import Decay, StateTensor
from fedbound.algorithms.optim import client
from fedbound.algorithms.optim.base import Transform, labelled
from fedbound.algorithms.optim.registry import (B1, B2, BETA, BIAS_CORRECTION, EPS, EPS_INSIDE_SQRT,
                                                NESTEROV, SERVER_OPTIMIZERS, V0, BiasCorrection,
                                                OptimizerSpec, bias_correction_mode, lr_option)
from fedbound.algorithms.optim.client import _beta, _positive
from fedbound.argtypes import Count, NonNegative, Positive
from fedbound.errors import require
from fedbound.validate import boolean, number


@labelled
def sgd(lr: Positive = 1.0) -> Transform:
    """x <- x - lr * g = (1 - lr) x + lr * (aggregate): FedAvg at lr = 1 (Flower's FedAvg), a server
    learning rate otherwise (FedOpt's FedAvg with server step eta). Stateless."""
    return client.sgd(lr)._replace(accumulation=None)


@labelled
def momentum(lr: Positive = 1.0, beta: Decay = 0.0, nesterov: bool = False) -> Transform:
    """FedAvgM (Hsu et al. 2019): v <- beta v + g, x <- x - lr v (Nesterov: x <- x - lr (g + beta v)),
    v_0 = 0. Defaults are Flower's FedAvgM (server_learning_rate = 1.0, server_momentum = 0.0, which
    is FedAvg; Flower has no Nesterov). The same update as torch.optim.SGD(momentum=beta,
    dampening=0) fed with g."""
    return client.momentum(lr, beta, nesterov)._replace(accumulation=None)


class MomentsState(NamedTuple):
    """State of :func:`adagrad`, :func:`adam` and :func:`yogi`: ``count`` = t, the rounds taken
    (0-d int64); ``first_moment`` = m_t = b1 m_{t-1} + (1 - b1) g_t (m_0 = 0) and
    ``second_moment`` = v_t (v_0 = v0, then the transform's own rule), both before bias correction."""

    count: StateTensor
    first_moment: StateTensor
    second_moment: StateTensor


class AMSGradState(NamedTuple):
    """State of :func:`amsgrad`: :class:`MomentsState`'s fields and ``max_second_moment`` =
    vhat_t = max(vhat_{t-1}, v_t), vhat_0 = 0."""

    count: StateTensor
    first_moment: StateTensor
    second_moment: StateTensor
    max_second_moment: StateTensor


def _denominator(v: torch.Tensor, eps: float, eps_inside_sqrt: bool) -> torch.Tensor:
    return torch.sqrt(v + eps) if eps_inside_sqrt else torch.sqrt(v) + eps


def uncorrected_step(m: torch.Tensor, v: torch.Tensor, t: Count, lr: Positive, b1: Decay, b2: Decay,
                     eps: Positive, eps_inside_sqrt: bool = False) -> torch.Tensor:
    """``bias_correction="none"``: the update of FedOpt without bias correction (Reddi et al.,
    "Adaptive Federated Optimization", ICLR 2021, Alg. 2, FedAdagrad / FedAdam / FedYogi)::

        x_{t+1} - x_t = -lr m_t / (sqrt(v_t) + eps)        (eps_inside_sqrt: / sqrt(v_t + eps))

    for the moments m_t, v_t after round t (``t``, ``b1`` and ``b2`` unused, given for one signature
    with the other corrections). Flower's FedAdagrad and FedYogi (flwr/server/strategy/fedadagrad.py
    and fedyogi.py, ``x + self.eta * y / (np.sqrt(z) + self.tau)``) take this step."""
    return -lr * m / _denominator(v, eps, eps_inside_sqrt)


def adam_corrected_step(m: torch.Tensor, v: torch.Tensor, t: Count, lr: Positive, b1: Decay,
                        b2: Decay, eps: Positive, eps_inside_sqrt: bool = False) -> torch.Tensor:
    """``bias_correction="adam"``: Kingma & Ba's correction of both moments at the current round t
    ("Adam: A Method for Stochastic Optimization", ICLR 2015, Algorithm 1)::

        m^ = m_t / (1 - b1^t),   v^ = v_t / (1 - b2^t),
        x_{t+1} - x_t = -lr m^ / (sqrt(v^) + eps)          (eps_inside_sqrt: / sqrt(v^ + eps))

    that is -lr sqrt(1 - b2^t) / (1 - b1^t) m_t / (sqrt(v_t) + eps sqrt(1 - b2^t)): the learning
    rate corrected AND eps rescaled. torch.optim.Adam and optax.adam fed with the pseudo-gradient
    (eps outside the root, v_0 = 0); with amsgrad the running max is taken before the correction,
    as torch.optim.Adam(amsgrad=True)."""
    v_hat = v / (1.0 - b2 ** int(t))
    return m * (-lr / (1.0 - b1 ** int(t))) / _denominator(v_hat, eps, eps_inside_sqrt)


def flower_corrected_step(m: torch.Tensor, v: torch.Tensor, t: Count, lr: Positive, b1: Decay,
                          b2: Decay, eps: Positive, eps_inside_sqrt: bool = False) -> torch.Tensor:
    """``bias_correction="flower"``: Flower's FedAdam (Flower 1.42, flwr/server/strategy/fedadam.py
    L179-187 in FedAdam.aggregate_fit and flwr/serverapp/strategy/fedadam.py L163-171 in
    FedAdam.aggregate_train)::

        eta_norm = lr sqrt(1 - b2^(t+1)) / (1 - b1^(t+1)),
        x_{t+1} - x_t = -eta_norm m_t / (sqrt(v_t) + eps)   (eps_inside_sqrt: / sqrt(v_t + eps))

    with t = Flower's ``server_round`` (1 in the first round). Flower's comment calls eta_norm
    Kingma & Ba's alpha_t (the line before their Sec. 2.1), but the exponents are one round ahead
    (t + 1 for the current round t) and eps (Flower's tau) is not rescaled, so it equals neither
    :func:`adam_corrected_step` nor :func:`uncorrected_step` (the models differ by O(0.1) after ten
    rounds of FedAdam with Flower's defaults). Flower places eps outside the root only;
    ``eps_inside_sqrt`` is this library's extension."""
    lr_t = lr * math.sqrt(1.0 - b2 ** (int(t) + 1)) / (1.0 - b1 ** (int(t) + 1))
    return -lr_t * m / _denominator(v, eps, eps_inside_sqrt)


#: the step of each bias correction (the functions themselves, so that a transform's update calls
#: them without the boundary checks of a call from outside)
CORRECTED_STEPS: dict[str, Callable[..., torch.Tensor]] = {
    "none": uncorrected_step, "adam": adam_corrected_step, "flower": flower_corrected_step}


def _adaptive(lr, b1, b2, eps, bias_correction, eps_inside_sqrt: bool, v0,
              second_moment: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
              amsgrad: bool = False) -> Transform:
    """The adaptive server step shared by the FedOpt family, v_t = ``second_moment``(v_{t-1}, g_t^2)
    being each optimizer's own rule:

        m_t = b1 m_{t-1} + (1 - b1) g_t
        v_t = second_moment(v_{t-1}, g_t^2)
        vhat_t = max(vhat_{t-1}, v_t) if amsgrad else v_t          (vhat_0 = 0)
        x_{t+1} = x_t + step(m_t, vhat_t, t)      (the ``bias_correction``'s step, module docstring)

    with m_0 = 0, v_0 = v0. ``b2`` is None where the optimizer has none (AdaGrad: no correction).
    """
    lr = _positive("lr", lr)
    b1 = _beta("b1", b1)
    eps = _positive("eps", eps)
    mode = bias_correction_mode("bias_correction", bias_correction)
    require(b2 is not None or mode == "none",
            f"bias_correction={mode!r} needs a second-moment decay b2; this optimizer has none")
    step = CORRECTED_STEPS[mode]
    b2 = 0.0 if b2 is None else b2
    eps_inside_sqrt = boolean("eps_inside_sqrt", eps_inside_sqrt)
    v0 = number("v0", v0, low=0.0)

    def init(params):
        t = torch.zeros((), dtype=torch.long, device=params.device)
        moments = (t, torch.zeros_like(params), torch.full_like(params, v0))
        return AMSGradState(*moments, torch.zeros_like(params)) if amsgrad else MomentsState(*moments)

    def update(grads, state, params):
        t = state.count + 1
        m = torch.add(b1 * state.first_moment, grads, alpha=1.0 - b1)   # one operation fewer
        v = second_moment(state.second_moment, grads * grads)
        v_hat = torch.maximum(state.max_second_moment, v) if amsgrad else v
        new_state = AMSGradState(t, m, v, v_hat) if amsgrad else MomentsState(t, m, v)
        return step(m, v_hat, int(t), lr, b1, b2, eps, eps_inside_sqrt), new_state

    return Transform(init, update, lambda d: (3 if amsgrad else 2) * d + 1, None)


@labelled
def adagrad(lr: Positive = 0.1, eps: Positive = 1e-3, v0: NonNegative = 0.0,
            eps_inside_sqrt: bool = False, b1: Decay = 0.0) -> Transform:
    """FedAdagrad (Reddi et al. 2021, Alg. 2): m_t = b1 m + (1 - b1) g, v_t = v + g^2,
    x <- x - lr m_t / (sqrt(v_t) + eps) (``eps_inside_sqrt``: / sqrt(v_t + eps)).

    Defaults are Flower's FedAdagrad (flwr.serverapp.strategy: eta = 0.1, tau = 1e-3, beta_1 = 0,
    v_0 = 0; flwr.server.strategy's has tau = 1e-9); Reddi et al. require v_0 >= tau^2. No bias
    correction (v_t is a sum, not an average; Flower has none either).
    FedAda2's server update SU (L98-104 of 004_a1d7c636af01c22e.txt; fedada2.md 2.1) is AdaGrad with
    momentum, tau outside the root and v_0 = tau^2:
    ``adagrad(lr=eta, eps=tau, v0=tau**2, b1=beta1_server)``.
    b1 = 0 and v0 = initial_accumulator_value is torch.optim.Adagrad fed with g.
    """
    return _adaptive(lr, b1, None, eps, "none", eps_inside_sqrt, v0, lambda v, g2: v + g2)


@labelled
def adam(lr: Positive = 0.1, b1: Decay = 0.9, b2: Decay = 0.99, eps: Positive = 1e-3,
         bias_correction: BiasCorrection = "none", eps_inside_sqrt: bool = False,
         v0: NonNegative = 0.0) -> Transform:
    """FedAdam (Reddi et al. 2021, Alg. 2): m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
    x <- x - lr m / (sqrt(v) + eps), by default without bias correction.

    Defaults are Flower's FedAdam (flwr.serverapp.strategy: eta = 0.1, beta_1 = 0.9, beta_2 = 0.99,
    tau = 1e-3, v_0 = 0; flwr.server.strategy's has tau = 1e-9). ``bias_correction`` (module
    docstring): "none" (default), "adam" (Kingma-Ba; with v0 = 0 torch.optim.Adam fed with g:
    m/(1 - b1^t) over sqrt(v/(1 - b2^t)) + eps), or "flower": Flower's FedAdam exactly, whose
    learning rate is multiplied at round t by sqrt(1 - b2^(t+1))/(1 - b1^(t+1)). True / False are
    "adam" / "none". FedAda2's server Adam (C.2, L1128-1136; bias correction unspecified there,
    fedada2.md 2.2) takes v0 = tau^2.
    """
    b2 = _beta("b2", b2)
    return _adaptive(lr, b1, b2, eps, bias_correction, eps_inside_sqrt, v0,
                     lambda v, g2: torch.add(b2 * v, g2, alpha=1.0 - b2))


@labelled
def yogi(lr: Positive = 0.01, b1: Decay = 0.9, b2: Decay = 0.99, eps: Positive = 1e-3,
         v0: NonNegative = 0.0, bias_correction: BiasCorrection = "none",
         eps_inside_sqrt: bool = False) -> Transform:
    """FedYogi (Reddi et al. 2021, Alg. 2; Zaheer et al. 2018):
    v <- v - (1 - b2) g^2 sign(v - g^2), m = b1 m + (1 - b1) g, x <- x - lr m / (sqrt(v) + eps), by
    default without bias correction (``bias_correction`` and ``eps_inside_sqrt`` as for
    :func:`adam`). Defaults are Flower's FedYogi (eta = 1e-2, beta_1 = 0.9, beta_2 = 0.99,
    tau = 1e-3, v_0 = 0; Flower has no bias correction for Yogi); Reddi et al. require
    v_0 >= tau^2. optax.yogi differs: bias correction (``bias_correction="adam"`` here) and
    m_0 = v_0 = initial_accumulator_value = 1e-6."""
    b2 = _beta("b2", b2)
    return _adaptive(lr, b1, b2, eps, bias_correction, eps_inside_sqrt, v0,
                     lambda v, g2: v - (1.0 - b2) * g2 * torch.sign(v - g2))


@labelled
def amsgrad(lr: Positive = 0.01, b1: Decay = 0.9, b2: Decay = 0.99, eps: Positive = 1e-8,
            eps_inside_sqrt: bool = True, bias_correction: BiasCorrection = "none") -> Transform:
    """FedAMSGrad, AFGA's server optimizer (eq. (2), L126-129 and Alg. 1 lines 19-22, L195-200 of
    000_bd1b5016b2d2bc05.txt; afga.md 2.1):

        m_r = b1 m + (1 - b1) D_r,  v_r = b2 v + (1 - b2) D_r^2,  vhat_r = max(vhat_{r-1}, v_r),
        x_{r+1} = x_r + lr m_r / sqrt(vhat_r + eps)        (D_r = -g, the mean model difference)

    with m_0 = v_0 = vhat_0 = 0, eps INSIDE the root, no bias correction. Defaults are the paper's:
    b1 = 0.9, b2 = 0.99 (L996, misprinted there as "beta1 = 0.99"), global lr 0.01 (L463-468); eps is
    tuned over {1e-10, 1e-8, 1e-6, 1e-4} (L993-996) without the chosen value being reported, 1e-8
    here. ``eps_inside_sqrt=False, bias_correction="adam"`` is torch.optim.Adam(amsgrad=True) fed
    with g (the max taken before the bias correction).
    """
    b2 = _beta("b2", b2)
    return _adaptive(lr, b1, b2, eps, bias_correction, eps_inside_sqrt, 0.0,
                     lambda v, g2: torch.add(b2 * v, g2, alpha=1.0 - b2), amsgrad=True)


for _name, _factory, _summary, _options in (
        ("sgd", sgd, "x - lr g: FedAvg at lr = 1", (lr_option(1.0),)),
        ("momentum", momentum, "heavy-ball momentum (FedAvgM)", (lr_option(1.0), BETA, NESTEROV)),
        ("adagrad", adagrad, "AdaGrad (FedAdagrad; FedAda2's SU)",
         (lr_option(0.1), EPS, V0, EPS_INSIDE_SQRT, B1)),
        ("adam", adam, "Adam (FedAdam)", (lr_option(0.1), B1, B2, EPS, BIAS_CORRECTION, EPS_INSIDE_SQRT, V0)),
        ("yogi", yogi, "Yogi (FedYogi)",
         (lr_option(0.01), B1, B2, EPS, V0, BIAS_CORRECTION, EPS_INSIDE_SQRT)),
        ("amsgrad", amsgrad, "AMSGrad (FedAMSGrad, AFGA's server)",
         (lr_option(0.01), B1, B2, EPS, EPS_INSIDE_SQRT, BIAS_CORRECTION))):
    SERVER_OPTIMIZERS.register(OptimizerSpec(_name, _factory, _summary, _options))


__all__ = ["sgd", "momentum", "adagrad", "adam", "yogi", "amsgrad", "MomentsState", "AMSGradState",
           "uncorrected_step", "adam_corrected_step", "flower_corrected_step",
           "CORRECTED_STEPS"]
