"""Server optimizers as :class:`~fedbound.algorithms.optim.base.Transform` pairs (the FedOpt family).

A server transform acts on the global model x (shape (d,)) and receives the PSEUDO-GRADIENT

    g = x - (aggregated client model),          updates: new x = x + updates,

so that ``sgd(lr=1.0)`` reproduces FedAvg (x <- the aggregate). FedOpt (Reddi et al. 2021, Alg. 2)
and the papers write the update with Delta = -g (the mean model difference) and x <- x + eta m/(...):
the same update, as m(g) = -m(Delta) and v depends on g^2 only.

Defaults are those of Flower's strategies (flwr.serverapp.strategy, 2025: FedAvgM, FedAdagrad,
FedAdam, FedYogi; their ``tau`` is ``eps`` here) and of the FedOpt paper where Flower has none; the
paper-faithful choices of FedAda2 and AFGA are explicit flags (``eps_inside_sqrt``,
``bias_correction``, ``v0``, ``b1``). The adaptive transforms' states are (t, m, v) (+ vhat for
AMSGrad), t the round counter (0-d int64).
"""
from __future__ import annotations

import torch

from fedbound.algorithms.optim import client
from fedbound.algorithms.optim.base import Transform
from fedbound.validate import boolean, number


def sgd(lr: float = 1.0) -> Transform:
    """x <- x - lr * g = (1 - lr) x + lr * (aggregate): FedAvg at lr = 1 (Flower's FedAvg), a server
    learning rate otherwise (FedOpt's FedAvg with server step eta). Stateless."""
    return client.sgd(lr)._replace(accumulation=None)


def momentum(lr: float = 1.0, beta: float = 0.0, nesterov: bool = False) -> Transform:
    """FedAvgM (Hsu et al. 2019): v <- beta v + g, x <- x - lr v (Nesterov: x <- x - lr (g + beta v)),
    v_0 = 0. Defaults are Flower's FedAvgM (server_learning_rate = 1.0, server_momentum = 0.0, which
    is FedAvg). The same update as torch.optim.SGD(momentum=beta, dampening=0) fed with g."""
    return client.momentum(lr, beta, nesterov)._replace(accumulation=None)


def _adaptive(lr, b1, b2, eps, rule: str, amsgrad: bool, bias_correction: bool,
              eps_inside_sqrt: bool, v0) -> Transform:
    """The one adaptive server step:

        m_t = b1 m_{t-1} + (1 - b1) g_t
        v_t = v_{t-1} + g_t^2                                     (rule "adagrad")
              b2 v_{t-1} + (1 - b2) g_t^2                          (rule "adam")
              v_{t-1} - (1 - b2) g_t^2 sign(v_{t-1} - g_t^2)       (rule "yogi")
        vhat_t = max(vhat_{t-1}, v_t) if amsgrad else v_t          (vhat_0 = 0)
        m^ = m_t / (1 - b1^t), v^ = vhat_t / (1 - b2^t)   if bias_correction else m_t, vhat_t
        x_{t+1} = x_t - lr * m^ / (sqrt(v^) + eps)   or   / sqrt(v^ + eps)   (eps_inside_sqrt)

    with m_0 = 0, v_0 = v0.
    """
    lr = number("lr", lr, low=0.0, low_open=True)
    b1 = number("b1", b1, low=0.0, high=1.0, high_open=True)
    if b2 is not None:
        b2 = number("b2", b2, low=0.0, high=1.0, high_open=True)
    eps = number("eps", eps, low=0.0, low_open=True)
    bias_correction = boolean("bias_correction", bias_correction)
    eps_inside_sqrt = boolean("eps_inside_sqrt", eps_inside_sqrt)
    v0 = number("v0", v0, low=0.0)

    def init(params):
        t = torch.zeros((), dtype=torch.long, device=params.device)
        moments = (torch.zeros_like(params), torch.full_like(params, v0))
        return (t,) + moments + ((torch.zeros_like(params),) if amsgrad else ())

    def update(grads, state, params):
        t, m, v = state[0] + 1, state[1], state[2]
        g2 = grads * grads
        m = b1 * m + (1.0 - b1) * grads
        if rule == "adagrad":
            v = v + g2
        elif rule == "adam":
            v = b2 * v + (1.0 - b2) * g2
        else:
            v = v - (1.0 - b2) * g2 * torch.sign(v - g2)
        v_hat = torch.maximum(state[3], v) if amsgrad else v
        m_use, v_use = m, v_hat
        if bias_correction:
            m_use = m / (1.0 - b1 ** int(t))
            v_use = v_hat / (1.0 - b2 ** int(t))
        denom = torch.sqrt(v_use + eps) if eps_inside_sqrt else torch.sqrt(v_use) + eps
        return -lr * m_use / denom, (t, m, v) + ((v_hat,) if amsgrad else ())

    return Transform(init, update, lambda d: (3 if amsgrad else 2) * d + 1, None)


def adagrad(lr: float = 0.1, eps: float = 1e-3, v0: float = 0.0, eps_inside_sqrt: bool = False,
            b1: float = 0.0) -> Transform:
    """FedAdagrad (Reddi et al. 2021, Alg. 2): m_t = b1 m + (1 - b1) g, v_t = v + g^2,
    x <- x - lr m_t / (sqrt(v_t) + eps).

    Defaults are Flower's FedAdagrad (eta = 0.1, tau = 1e-3, beta_1 = 0, v_0 = 0; Flower releases
    before the 2025 serverapp used tau = 1e-9); Reddi et al. require v_0 >= tau^2.
    FedAda2's server update SU (L98-104 of 004_a1d7c636af01c22e.txt; fedada2.md 2.1) is AdaGrad with
    momentum, tau outside the root and v_0 = tau^2:
    ``adagrad(lr=eta, eps=tau, v0=tau**2, b1=beta1_server)``.
    b1 = 0 and v0 = initial_accumulator_value is torch.optim.Adagrad fed with g.
    """
    return _adaptive(lr, b1, None, eps, "adagrad", False, False, eps_inside_sqrt, v0)


def adam(lr: float = 0.1, b1: float = 0.9, b2: float = 0.99, eps: float = 1e-3,
         bias_correction: bool = False, eps_inside_sqrt: bool = False, v0: float = 0.0) -> Transform:
    """FedAdam (Reddi et al. 2021, Alg. 2): m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
    x <- x - lr m / (sqrt(v) + eps), no bias correction.

    Defaults are Flower's FedAdam (eta = 0.1, beta_1 = 0.9, beta_2 = 0.99, tau = 1e-3, v_0 = 0). Flower's
    2025 serverapp FedAdam multiplies eta by sqrt(1 - b2^(r+1))/(1 - b1^(r+1)) at round r (an off-by-one
    Adam correction); that is not reproduced. ``bias_correction=True`` (with v0 = 0) is
    torch.optim.Adam fed with g: m/(1 - b1^t) over sqrt(v/(1 - b2^t)) + eps. FedAda2's server Adam
    (C.2, L1128-1136; bias correction unspecified there, fedada2.md 2.2) takes v0 = tau^2.
    """
    return _adaptive(lr, b1, b2, eps, "adam", False, bias_correction, eps_inside_sqrt, v0)


def yogi(lr: float = 0.01, b1: float = 0.9, b2: float = 0.99, eps: float = 1e-3,
         v0: float = 0.0, bias_correction: bool = False) -> Transform:
    """FedYogi (Reddi et al. 2021, Alg. 2; Zaheer et al. 2018):
    v <- v - (1 - b2) g^2 sign(v - g^2), m = b1 m + (1 - b1) g, x <- x - lr m / (sqrt(v) + eps), no bias
    correction. Defaults are Flower's FedYogi (eta = 1e-2, beta_1 = 0.9, beta_2 = 0.99, tau = 1e-3,
    v_0 = 0); Reddi et al. require v_0 >= tau^2. optax.yogi differs: bias correction
    (``bias_correction=True`` here) and m_0 = v_0 = initial_accumulator_value = 1e-6."""
    return _adaptive(lr, b1, b2, eps, "yogi", False, bias_correction, False, v0)


def amsgrad(lr: float = 0.01, b1: float = 0.9, b2: float = 0.99, eps: float = 1e-8,
            eps_inside_sqrt: bool = True, bias_correction: bool = False) -> Transform:
    """FedAMSGrad, AFGA's server optimizer (eq. (2), L126-129 and Alg. 1 lines 19-22, L195-200 of
    000_bd1b5016b2d2bc05.txt; afga.md 2.1):

        m_r = b1 m + (1 - b1) D_r,  v_r = b2 v + (1 - b2) D_r^2,  vhat_r = max(vhat_{r-1}, v_r),
        x_{r+1} = x_r + lr m_r / sqrt(vhat_r + eps)        (D_r = -g, the mean model difference)

    with m_0 = v_0 = vhat_0 = 0, eps INSIDE the root, no bias correction. Defaults are the paper's:
    b1 = 0.9, b2 = 0.99 (L996, misprinted there as "beta1 = 0.99"), global lr 0.01 (L463-468); eps is
    tuned over {1e-10, 1e-8, 1e-6, 1e-4} (L993-996) without the chosen value being reported, 1e-8
    here. ``eps_inside_sqrt=False,
    bias_correction=True`` is torch.optim.Adam(amsgrad=True) fed with g (the max taken before the
    bias correction).
    """
    return _adaptive(lr, b1, b2, eps, "adam", True, bias_correction, eps_inside_sqrt, 0.0)


__all__ = ["sgd", "momentum", "adagrad", "adam", "yogi", "amsgrad"]
