"""Client (local) optimizers as :class:`~fedbound.algorithms.optim.base.Transform` pairs.

Conventions shared by every transform of this module:

* ``params`` and ``grads`` have shape ``(rows, d)``: one row per participating client. A state is a
  NamedTuple defined next to its transform (stateless transforms: ``()``); every state tensor has
  ``rows`` as its leading axis, the per-client step counter ``count`` = k (int64, shape ``(rows,)``,
  the number of local steps taken) included, so that :func:`~fedbound.algorithms.optim.base.masked`
  can freeze the clients that are done and clients may be at different local steps.
* ``init(params)`` is called at the start of every round (stateless clients: FedNova L130 of
  001_530825e753327090.txt, FedAda2 Alg. 1 "local_statistics <- 0", L108-120 of
  004_a1d7c636af01c22e.txt), so ``prox`` keeps the round's starting point in its state and momentum
  buffers and preconditioners start from zero every round.
* ``updates`` is the additive change: new params = params + updates (SGD: ``-lr * g``).
* Local steps are numbered k = 1, 2, ... (FedAda2) and the delayed preconditioners are refreshed at
  the steps with (k - 1)/z integral: k = 1, z + 1, 2z + 1, ... (FedAda2 eq. (SM3), L695).
* ``state_floats(d)`` counts every scalar of the state held per client, the step counter included.
* ``accumulation(tau)`` (linear solvers only) is FedNova's a_i in R^tau, a_k the coefficient of the
  k-th local gradient (k = 0 .. tau - 1) in -Delta_i/lr (eq. (4), L93 and App. B, L389-439 of
  001_530825e753327090.txt): the round's change is -lr * sum_k a_k g_k. The closed forms are those of
  :func:`fedbound.local_solver.accumulation_vector` (one implementation, below both the algorithms
  and FedNova's theory, which read it there).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Literal, NamedTuple, Sequence

import numpy as np
import torch

from fedbound.algorithms.base import MAX_LOCAL_STEPS, Decay, StateTensor, Steps
from fedbound.algorithms.optim.base import Transform, labelled, tree_map
from fedbound.algorithms.optim.registry import (B1, B2, BETA, CLIENT_BIAS_CORRECTION, CLIENT_OPTIMIZERS,
                                                DELAY, EPS, NESTEROV, V0, VARIANT, OptimizerSpec,
                                                lr_option)
from fedbound.argtypes import Count, Fraction, NonNegative, Positive
from fedbound.deprecation import renamed_keywords
from fedbound.errors import InputTypeError, ValidationError
from fedbound.local_solver import accumulation_vector
from fedbound.registry import Option, number_option
from fedbound.validate import boolean, integer, number, one_of


#: the model's parameter shapes (SM3's covers): a list of shapes, each a tuple of sizes >= 1 (an int n
#: is the vector shape (n,), the scalar shape () one accumulator)
Shapes = Sequence[Count | Sequence[Count]]


def _positive(name: str, value) -> float:
    return number(name, value, low=0.0, low_open=True)


def _beta(name: str, value) -> float:
    return number(name, value, low=0.0, high=1.0, high_open=True)


def _rows(t: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """A per-row tensor (rows,) reshaped to broadcast against ``like`` (rows, ...)."""
    return t.reshape(-1, *([1] * (like.dim() - 1)))


def _delay(delay) -> int:
    """The preconditioner delay z: an integer in [1, MAX_LOCAL_STEPS] (a larger z never refreshes
    after the first step of any admissible round)."""
    return integer("delay", delay, low=1, high=MAX_LOCAL_STEPS)


def _counter(params: torch.Tensor) -> torch.Tensor:
    return torch.zeros(params.shape[0], dtype=torch.long, device=params.device)


def _refresh(k: torch.Tensor, delay: int) -> torch.Tensor:
    """True for the clients whose next step (number k + 1) refreshes the preconditioner:
    ((k + 1) - 1)/z integral (FedAda2 eq. (SM3), L695; Alg. 7, L1357-1375; Alg. 9, L1490-1512)."""
    return k % delay == 0


def _where_rows(mask: torch.Tensor, new: torch.Tensor, old: torch.Tensor) -> torch.Tensor:
    """``new`` on the rows where ``mask`` (rows,) is True, ``old`` on the others."""
    return torch.where(_rows(mask, new), new, old)


def _adam_updates(m: torch.Tensor, v: torch.Tensor, k: torch.Tensor, lr: float, eps: float,
                  b1: float, b2: float, delay: int, bias_correction: bool) -> torch.Tensor:
    """ADMU's step -lr * m^ / (sqrt(v^) + eps) after k steps (per row), with the bias correction
    m^ = m / (1 - b1^k), v^ = v / (1 - b2^ceil(k/z)), the second moment having been refreshed
    ceil(k/z) times (FedAda2 Alg. 9, L1490-1512); m^ = m, v^ = v without ``bias_correction``."""
    if bias_correction:
        updates_done = torch.div(k + delay - 1, delay, rounding_mode="floor")   # ceil(k/z)
        m = m / _rows(1.0 - torch.pow(b1, k.to(m.dtype)), m)
        v = v / _rows(1.0 - torch.pow(b2, updates_done.to(v.dtype)), v)
    return -lr * m / (torch.sqrt(v) + eps)


class DecayState(NamedTuple):
    """State of :func:`sgd` with a decay: ``count`` = k (rows,), the local steps taken, so the next
    step's learning rate is lr * gamma^k."""

    count: StateTensor


@labelled
def sgd(lr: Positive, decay: Fraction | None = None) -> Transform:
    """SGD, optionally with an exponentially decayed local learning rate.

    ``x_{k+1} = x_k - lr * gamma^k * g_k`` for local steps k = 0, 1, ... of the round (``decay`` =
    gamma in (0, 1]; None: gamma = 1, plain SGD, no state). FedNova's "SGD with decayed learning
    rate" local solver, a_i = [1, gamma, ..., gamma^(tau-1)] (L128 of 001_530825e753327090.txt;
    fednova.md 2.3); plain SGD a_i = [1, ..., 1] (L120).
    """
    lr = _positive("lr", lr)
    if decay is None:
        return Transform(lambda params: (), lambda grads, state, params: (-lr * grads, state),
                         lambda d: 0, lambda tau: accumulation_vector("sgd", tau), sgd_lr=lr)
    gamma = number("decay", decay, low=0.0, high=1.0, low_open=True)

    def update(grads, state, params):
        factor = torch.pow(gamma, state.count.to(grads.dtype))
        return -lr * _rows(factor, grads) * grads, DecayState(state.count + 1)

    return Transform(lambda params: DecayState(_counter(params)), update, lambda d: 1,
                     lambda tau: accumulation_vector("decay", tau, gamma=gamma))


class ProxState(NamedTuple):
    """State of :func:`prox`: ``start`` = x_0 (rows, d), the round's starting point."""

    start: StateTensor


@labelled
def prox(lr: Positive, mu: NonNegative) -> Transform:
    """Proximal SGD (FedProx's local solver): ``x <- x - lr * (g + mu * (x - x_0))``, x_0 the round's
    starting point (kept in the state; init is called at every round start).

    FedNova (31) and App. B.1 (32)-(34) of 001_530825e753327090.txt: with alpha = lr * mu,
    a_i = [(1 - alpha)^(tau-1), ..., (1 - alpha), 1]: the earliest gradient is damped most. mu = 0 is
    SGD.
    """
    lr = _positive("lr", lr)
    mu = number("mu", mu, low=0.0)
    alpha = lr * mu

    def update(grads, state, params):
        return -lr * (grads + mu * (params - state.start)), state

    def accumulation(tau):
        if 0 < alpha <= 1:      # FedNova's range of alpha (31)
            return accumulation_vector("prox", tau, alpha=alpha)
        if alpha == 0:          # mu = 0: SGD
            return accumulation_vector("sgd", tau)
        # lr * mu > 1, outside the paper (a_k alternates in sign): the same (1 - alpha)^(tau-1-k)
        return (1.0 - alpha) ** np.arange(_tau(tau) - 1, -1, -1, dtype=np.float64)

    return Transform(lambda params: ProxState(params.clone()), update, lambda d: d, accumulation)


class MomentumState(NamedTuple):
    """State of :func:`momentum` (and of the server's): ``velocity`` = v (rows, d; the server's
    (d,)), the momentum buffer v_k = beta v_{k-1} + g_k (torch's momentum_buffer), v_0 = 0."""

    velocity: StateTensor


@labelled
def momentum(lr: Positive, beta: Decay, nesterov: bool = False) -> Transform:
    """Heavy-ball momentum SGD with the buffer zeroed at init (reset every round):
    ``v <- beta * v + g``, ``x <- x - lr * v`` (Nesterov: ``x <- x - lr * (g + beta * v)``), as
    torch.optim.SGD(momentum=beta, dampening=0, nesterov=...).

    FedNova's momentum local solver (35)-(36), App. B.2 (37)-(43) of 001_530825e753327090.txt (L430-439):
    a_k = (1 - beta^(tau-k)) / (1 - beta), k = 0 .. tau-1, the earliest gradient weighted most.
    Nesterov (derived here, not in the paper; verified by test): the change is
    -lr * sum_s (g_s + beta v_{s+1}) with v_{s+1} = sum_{k<=s} beta^(s-k) g_k, so
    a_k = 1 + beta (1 - beta^(tau-k))/(1 - beta) = (1 - beta^(tau-k+1)) / (1 - beta), i.e. 1 + beta
    times the heavy-ball a_k.
    """
    lr = _positive("lr", lr)
    beta = _beta("beta", beta)
    nesterov = boolean("nesterov", nesterov)

    def update(grads, state, params):
        velocity = beta * state.velocity + grads
        direction = grads + beta * velocity if nesterov else velocity
        return -lr * direction, MomentumState(velocity)

    def accumulation(tau):
        heavy_ball = accumulation_vector("momentum", tau, rho=beta)
        return 1.0 + beta * heavy_ball if nesterov else heavy_ball

    return Transform(lambda params: MomentumState(torch.zeros_like(params)), update, lambda d: d,
                     accumulation)


class AdagradState(NamedTuple):
    """State of :func:`adagrad`: ``count`` = k (rows,), the local steps taken; ``second_moment`` =
    v_k (rows, d), the accumulated squared gradients v_0 + sum_{r=1}^{ceil(k/z)} g_{(r-1)z+1}^2."""

    count: StateTensor
    second_moment: StateTensor


@labelled
def adagrad(lr: Positive, eps: Positive, v0: NonNegative | None = None, delay: Steps = 1, *,
            initial_accumulator: NonNegative | None = None) -> Transform:
    """AdaGrad with delayed preconditioner updates (FedAda2's AGDU, Alg. 9, L1490-1512 of
    004_a1d7c636af01c22e.txt):

        v_k = v_{k-1} + g_k^2  if (k - 1)/z is integral, else v_{k-1};    v_0 = v0 (default 0)
        x_k = x_{k-1} - lr * g_k / (sqrt(v_k) + eps)                        (eps outside the root)

    so v_k = v_0 + sum_{r=1}^{ceil(k/z)} g_{(r-1)z+1}^2. ``delay`` = z = 1 is torch.optim.Adagrad
    (lr_decay = 0, initial_accumulator_value = v_0, the same eps placement). ``v0`` is the server
    optimizers' name of the initial second moment (one name for one concept); the old keyword
    ``initial_accumulator`` still works and warns.
    """
    lr = _positive("lr", lr)
    eps = _positive("eps", eps)
    v0 = renamed_keywords("client.adagrad", {"initial_accumulator": "v0"},
                          {"initial_accumulator": initial_accumulator}, {"v0": v0})["v0"]
    v0 = number("v0", 0.0 if v0 is None else v0, low=0.0)
    delay = _delay(delay)

    def init(params):
        return AdagradState(_counter(params), torch.full_like(params, v0))

    def update(grads, state, params):
        v = state.second_moment
        v = _where_rows(_refresh(state.count, delay), v + grads * grads, v)
        return -lr * grads / (torch.sqrt(v) + eps), AdagradState(state.count + 1, v)

    return Transform(init, update, lambda d: d + 1, None)


class AdamState(NamedTuple):
    """State of :func:`adam`: ``count`` = k (rows,), the local steps taken; ``first_moment`` = m_k
    and ``second_moment`` = v_k (rows, d), the moving averages before bias correction."""

    count: StateTensor
    first_moment: StateTensor
    second_moment: StateTensor


@labelled
def adam(lr: Positive, b1: Decay = 0.9, b2: Decay = 0.999, eps: Positive = 1e-8,
         bias_correction: bool = True, delay: Steps = 1) -> Transform:
    """Adam with delayed second-moment updates (FedAda2's ADMU, Alg. 7, L1357-1375 of
    004_a1d7c636af01c22e.txt; defaults b1, b2, eps of Kingma & Ba and torch.optim.Adam):

        m_k = b1 m_{k-1} + (1 - b1) g_k                          (every step)
        v_k = b2 v_{k-1} + (1 - b2) g_k^2  if (k - 1)/z integral, else v_{k-1}
        m^_k = m_k / (1 - b1^k),   v^_k = v_k / (1 - b2^ceil(k/z))
        x_k = x_{k-1} - lr * m^_k / (sqrt(v^_k) + eps)

    The bias exponent ceil(k/z) = floor((k-1)/z) + 1 is the number of v-updates so far (eq. (19),
    L1385-1393); on non-update steps v^_k = v^_{k-1} holds automatically (the note to Alg. 8 in
    fedada2.md 2.10), so v^ is not stored. ``bias_correction=False`` uses m, v directly. z = 1 is
    torch.optim.Adam. m_0 = v_0 = 0.
    """
    lr = _positive("lr", lr)
    b1 = _beta("b1", b1)
    b2 = _beta("b2", b2)
    eps = _positive("eps", eps)
    bias_correction = boolean("bias_correction", bias_correction)
    delay = _delay(delay)

    def init(params):
        return AdamState(_counter(params), torch.zeros_like(params), torch.zeros_like(params))

    def update(grads, state, params):
        m = b1 * state.first_moment + (1.0 - b1) * grads
        v = state.second_moment
        v = _where_rows(_refresh(state.count, delay), b2 * v + (1.0 - b2) * grads * grads, v)
        k = state.count + 1
        return _adam_updates(m, v, k, lr, eps, b1, b2, delay, bias_correction), AdamState(k, m, v)

    return Transform(init, update, lambda d: 2 * d + 1, None)


def _shapes(shapes) -> list[tuple[int, ...]]:
    """``shapes`` as a list of tuples of positive ints (an int n is the vector shape (n,); the scalar
    shape () is one accumulator, as (1,))."""
    if isinstance(shapes, (str, bytes)) or not isinstance(shapes, Sequence) or len(shapes) == 0:
        raise InputTypeError(f"shapes must be a non-empty list of parameter shapes, got {shapes!r}")
    out = []
    for i, shape in enumerate(shapes):
        dims = (shape,) if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool) \
            else shape
        if isinstance(dims, (str, bytes)) or not isinstance(dims, Sequence):
            raise InputTypeError(f"shapes[{i}] must be a tuple of positive ints, got {shape!r}")
        out.append(tuple(integer(f"shapes[{i}][{j}]", s, low=1) for j, s in enumerate(dims)) or (1,))
    return out


def _covers(name: str, shapes):
    """(blocks, q, check_d, zero_covers) of the row/column covers of ``shapes``: blocks(flat) splits
    a (rows, d) tensor into one (rows, *shape) tensor per shape, q = the sum of the shapes' side
    lengths (SM3's accumulator floats), check_d(d) refuses a parameter vector of another length, and
    zero_covers(params) gives the zero accumulators, one (rows, side) tensor per side of each shape."""
    sizes = [math.prod(s) for s in shapes]
    total, q = sum(sizes), sum(sum(s) for s in shapes)

    def blocks(flat):
        return [b.reshape(flat.shape[0], *s) for b, s in zip(flat.split(sizes, dim=1), shapes)]

    def check_d(d: int) -> None:
        if d != total:
            raise ValidationError(f"{name}: the shapes {shapes} hold {total} parameters, but the "
                                  f"parameter vector has d = {d}")

    def zero_covers(params):
        check_d(params.shape[-1])
        rows = params.shape[0]
        return tuple(tuple(params.new_zeros(rows, n) for n in s) for s in shapes)

    return blocks, q, check_d, zero_covers


class SM3State(NamedTuple):
    """State of :func:`sm3`: ``count`` = k (rows,), the local steps taken; ``accumulators`` = the
    cover accumulators mu_k(r), for each shape a tuple of one (rows, side) tensor per axis (the
    cover sets along that axis); ``preconditioner`` = nu_k (rows, d), kept only by SM3-II with
    z > 1 (where nu_k = nu_{k-1} on non-refresh steps), None otherwise."""

    count: StateTensor
    accumulators: tuple[tuple[StateTensor, ...], ...]
    preconditioner: StateTensor | None


@labelled
def sm3(lr: Positive, shapes: Shapes, variant: Literal["I", "II"] = "II", delay: Steps = 1,
        eps: Positive = 1e-8, carry_over: bool = True) -> Transform:
    """SM3 (Anil et al. 2019) with delayed preconditioner updates, as in FedAda2 (Algs. 2-4,
    L667-736 of 004_a1d7c636af01c22e.txt).

    The model is the concatenation of flattened tensors of the given ``shapes`` (their sizes sum to
    d, checked at init). The cover of a tensor is, for each axis, one set per index along that axis
    (the co-dimension-1 slices): rows and columns of a matrix (q = m + n accumulators), singletons of
    a vector (q = n: diagonal AdaGrad). mu(r) is the accumulator of cover set S_r; at a refresh step
    ((k - 1)/z integral; otherwise the preconditioner nu is kept):

    * SM3-I (Alg. 3, L701-716): mu_k(r) = mu_{k-1}(r) + max_{j in S_r} g_k(j)^2,
      nu_k(j) = min_{r: S_r contains j} mu_k(r);
    * SM3-II (Alg. 4, L717-736; eq. (SM3), L695): nu_k(j) = min_{r: S_r contains j} mu_{k-1}(r) + g_k(j)^2,
      mu_k(r) = max_{j in S_r} nu_k(j);

    and x_k = x_{k-1} - lr * g_k / (sqrt(nu_k) + eps) (eps outside the root: "a smoothing term eps
    instead of treating any zero denominator as zero", L699; its value is not reported, the default
    1e-8 is optax.sm3's). Zero-initialised every round (mu_0 = 0: FedAda2's v_0 is not wired into
    SM3, fedada2.md 2.4). No momentum (optax.sm3 has one; FedAda2's "SM3 adaptations of Adam" are
    never written out, fedada2.md 2.6).

    ``carry_over`` (SM3-II with z > 1): Alg. 2 line 7 / Alg. 4 line 4 (L675, L723) reset mu to 0 at
    every step and refill it only on refresh steps, so the next refresh reads mu = 0 and loses all
    history; ``carry_over=True`` (default) keeps mu_k = mu_{k-1} on non-refresh steps, as Lemma 15
    needs (fedada2.md 2.4 and errata 12); ``False`` is the literal printed rule. SM3-I never resets
    mu, so it accepts only ``carry_over=True``.

    State per client: the q accumulators and the step counter; SM3-II with z > 1 also keeps the last
    nu (d floats), because nu_k = nu_{k-1} on non-refresh steps cannot be rebuilt from mu. So
    ``state_floats(d)`` = q + 1 (+ d for SM3-II with z > 1), against AdaGrad's d + 1.
    """
    lr = _positive("lr", lr)
    shapes = _shapes(shapes)
    variant = one_of("variant", variant, ("I", "II"))
    delay = _delay(delay)
    eps = _positive("eps", eps)
    carry_over = boolean("carry_over", carry_over)
    if variant == "I" and not carry_over:
        raise ValidationError("carry_over=False is the literal SM3-II reset (Alg. 2/4, L675/L723); "
                              "SM3-I (Alg. 3) never resets its accumulators: use carry_over=True")
    blocks, q, check_d, zero_covers = _covers("sm3", shapes)
    keep_nu = variant == "II" and delay > 1

    def init(params):
        return SM3State(_counter(params), zero_covers(params),
                        torch.zeros_like(params) if keep_nu else None)

    def update(grads, state, params):
        refresh = _refresh(state.count, delay)
        parts = blocks(grads)
        if variant == "I":  # nu_k = min mu_k, with mu_k = mu_{k-1} on non-refresh steps
            fresh = tuple(tuple(a + m for a, m in zip(acc, _cover_max(g * g)))
                          for g, acc in zip(parts, state.accumulators))
            accumulators = _refreshed(refresh, fresh, state.accumulators)
            nu = torch.cat([_cover_min(acc, g.shape[1:]).reshape(g.shape[0], -1)
                            for g, acc in zip(parts, accumulators)], dim=1)
        else:
            kept = (state.accumulators if carry_over
                    else tree_map(torch.zeros_like, state.accumulators))
            nu, accumulators = _sm3_ii(parts, state.accumulators, kept, refresh,
                                       lambda low, g: low + g * g)
            if keep_nu:  # nu_k = nu_{k-1} on non-refresh steps
                nu = _where_rows(refresh, nu, state.preconditioner)
        new_state = SM3State(state.count + 1, accumulators, nu if keep_nu else None)
        return -lr * grads / (torch.sqrt(nu) + eps), new_state

    def state_floats(d: int) -> int:
        check_d(integer("d", d, low=1))
        return q + 1 + (d if keep_nu else 0)

    return Transform(init, update, state_floats, None)


def _cover_min(acc: tuple[torch.Tensor, ...], shape: tuple[int, ...]) -> torch.Tensor:
    """nu(j) = min over the cover sets containing j of their accumulators: the per-axis
    accumulators (rows, shape[a]) broadcast against (rows, *shape) and reduced by minimum."""
    rows, out = acc[0].shape[0], None
    for axis, a in enumerate(acc):
        a = a.reshape(rows, *[n if i == axis else 1 for i, n in enumerate(shape)])
        out = a if out is None else torch.minimum(out, a)
    return out.expand(rows, *shape)


def _cover_max(t: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """max over each cover set of t (rows, *shape): for every axis, the maximum over the other axes,
    shape (rows, shape[axis])."""
    axes = range(1, t.dim())
    return tuple(torch.amax(t, dim=tuple(o for o in axes if o != a)) if t.dim() > 2 else t
                 for a in axes)


def _refreshed(refresh: torch.Tensor, fresh: tuple, kept: tuple) -> tuple:
    """The accumulators: ``fresh`` on the rows that ``refresh`` (rows,), ``kept`` on the others."""
    return tree_map(lambda f, old: _where_rows(refresh, f, old), fresh, kept)


def _sm3_ii(parts: list, accumulators: tuple, kept: tuple, refresh: torch.Tensor,
            estimate) -> tuple[torch.Tensor, tuple]:
    """SM3-II's step over the covers, block by block (g (rows, *shape), its accumulators mu):
    nu(j) = estimate(min_{r: S_r contains j} mu(r), g(j)); the new accumulators are
    mu(r) = max_{j in S_r} nu(j) on the rows that ``refresh``, ``kept`` on the others.
    Returns nu (rows, d) and the new accumulators."""
    nus, fresh = [], []
    for g, acc in zip(parts, accumulators):
        nu = estimate(_cover_min(acc, g.shape[1:]), g)
        nus.append(nu.reshape(g.shape[0], -1))
        fresh.append(_cover_max(nu))
    return torch.cat(nus, dim=1), _refreshed(refresh, tuple(fresh), kept)


class SM3AdamState(NamedTuple):
    """State of :func:`sm3_adam`: ``count`` = k (rows,), the local steps taken; ``first_moment`` =
    m_k (rows, d), before bias correction; ``accumulators`` = the cover accumulators mu_k(r) (as in
    :class:`SM3State`); ``preconditioner`` = nu_k (rows, d), before bias correction, kept only
    with z > 1 (nu_k = nu_{k-1} on non-refresh steps), None otherwise."""

    count: StateTensor
    first_moment: StateTensor
    accumulators: tuple[tuple[StateTensor, ...], ...]
    preconditioner: StateTensor | None


@labelled
def sm3_adam(lr: Positive, shapes: Shapes, b1: Decay = 0.9, b2: Decay = 0.999, eps: Positive = 1e-8,
             bias_correction: bool = True, delay: Steps = 1) -> Transform:
    """SM3-Adam: Adam whose second moment is an SM3-II estimate over the covers of ``shapes`` (as in
    :func:`sm3`). FedAda2's experiments use "SM3 adaptations of Adam" (L122, L691 of
    004_a1d7c636af01c22e.txt) without writing them out; this is the implementer's choice of
    fedada2.md 2.6, the exponential-moving-average version of Alg. 4 with ADMU's delay and bias
    correction (Alg. 7, L1357-1375):

        m_k = b1 m_{k-1} + (1 - b1) g_k                                   (dense, every step)
        at a refresh step ((k - 1)/z integral):
            nu_k(j) = b2 min_{r: S_r contains j} mu_{k-1}(r) + (1 - b2) g_k(j)^2,
            mu_k(r) = max_{j in S_r} nu_k(j)
        otherwise nu_k = nu_{k-1}, mu_k = mu_{k-1}
        x_k = x_{k-1} - lr * m^_k / (sqrt(nu^_k) + eps),  m^ = m/(1 - b1^k), nu^ = nu/(1 - b2^ceil(k/z))

    With singleton covers (vector shapes) nu is Adam's v and this is :func:`adam` with the same
    delay. State per client: m (d), the q accumulators, the step counter, and with z > 1 the last nu
    (d): ``state_floats(d)`` = d + q + 1 (+ d), i.e. 2d + q + 1 with the parameters.
    """
    lr = _positive("lr", lr)
    shapes = _shapes(shapes)
    b1 = _beta("b1", b1)
    b2 = _beta("b2", b2)
    eps = _positive("eps", eps)
    bias_correction = boolean("bias_correction", bias_correction)
    delay = _delay(delay)
    blocks, q, check_d, zero_covers = _covers("sm3_adam", shapes)
    keep_nu = delay > 1

    def init(params):
        return SM3AdamState(_counter(params), torch.zeros_like(params), zero_covers(params),
                            torch.zeros_like(params) if keep_nu else None)

    def update(grads, state, params):
        refresh = _refresh(state.count, delay)
        m = b1 * state.first_moment + (1.0 - b1) * grads
        nu, accumulators = _sm3_ii(blocks(grads), state.accumulators, state.accumulators, refresh,
                                   lambda low, g: b2 * low + (1.0 - b2) * g * g)
        if keep_nu:  # nu_k = nu_{k-1} on non-refresh steps
            nu = _where_rows(refresh, nu, state.preconditioner)
        k = state.count + 1
        return (_adam_updates(m, nu, k, lr, eps, b1, b2, delay, bias_correction),
                SM3AdamState(k, m, accumulators, nu if keep_nu else None))

    def state_floats(d: int) -> int:
        check_d(integer("d", d, low=1))
        return d + q + 1 + (d if keep_nu else 0)

    return Transform(init, update, state_floats, None)


@labelled
def drop_small_steps(eps_s: Positive, lr: Positive = 1.0) -> Transform:
    """Zero a client's whole step when 0 < ||updates / lr||_2 < eps_s (FedAda2's eps_s rule, Alg. 2,
    L679: "if 0 < ||m_k / (sqrt(v_k) + eps)|| < eps_s: m_k <- 0"; Algs. 8 and 10, L1416-1419, L1533).

    Meant to be chained after another transform: ``chain(client.adagrad(lr, eps),
    client.drop_small_steps(eps_s, lr=lr))``. The paper tests the step before the learning rate
    (m_k/(sqrt(v_k)+eps)), so pass the preceding transform's ``lr``; the norm is the l2 norm of the
    client's whole d-vector (implied by L~, L140). It zeroes *small* steps; it is not clipping of
    large ones. Stateless.
    """
    eps_s = _positive("eps_s", eps_s)
    lr = _positive("lr", lr)

    def update(grads, state, params):
        norm = torch.linalg.vector_norm(grads, dim=tuple(range(1, grads.dim()))) / lr
        drop = (norm > 0) & (norm < eps_s)
        return torch.where(_rows(drop, grads), grads.new_zeros(()), grads), state

    return Transform(lambda params: (), update, lambda d: 0, None)


def _tau(tau) -> int:
    return integer("tau", tau, low=1)


_MU = number_option("mu", "proximal coefficient mu >= 0", low=0.0, examples=(0.0, 0.3))
_DECAY = number_option("decay", "per-step step-size decay in (0, 1]", low=0.0, high=1.0,
                       low_open=True, examples=(0.9,))
_CLIENT = {
    "sgd": (sgd, "SGD, optionally with a per-step decayed step (FedNova's decayed solver)",
            (lr_option(), _DECAY)),
    "prox": (prox, "proximal SGD (FedProx's local solver)", (lr_option(), _MU)),
    "momentum": (momentum, "heavy-ball momentum, buffer reset every round",
                 (lr_option(), BETA, NESTEROV)),
    "adagrad": (adagrad, "AdaGrad with a delayed preconditioner (FedAda2's AGDU)",
                (lr_option(), EPS, dataclasses.replace(V0, aliases=("initial_accumulator",)), DELAY)),
    "adam": (adam, "Adam with a delayed preconditioner (FedAda2's ADMU)",
             (lr_option(), B1, B2, EPS, CLIENT_BIAS_CORRECTION, DELAY)),
}
for _name, (_factory, _summary, _options) in _CLIENT.items():
    CLIENT_OPTIMIZERS.register(OptimizerSpec(_name, _factory, _summary, _options))
CLIENT_OPTIMIZERS.register(OptimizerSpec(
    "sm3", sm3, "SM3-I/II over the covers of the parameter shapes, delayed (FedAda2)",
    (lr_option(), VARIANT, DELAY, EPS, Option("carry_over", "SM3's mu carry-over between refreshes",
                                             boolean, bool, examples=(True,))), needs_shapes=True))
CLIENT_OPTIMIZERS.register(OptimizerSpec(
    "sm3_adam", sm3_adam, "Adam with an SM3-II second moment (FedAda2's experiments)",
    (lr_option(), B1, B2, EPS, CLIENT_BIAS_CORRECTION, DELAY), needs_shapes=True))


__all__ = ["sgd", "prox", "momentum", "adagrad", "adam", "sm3", "sm3_adam", "drop_small_steps",
           "DecayState", "ProxState", "MomentumState", "AdagradState", "AdamState", "SM3State",
           "SM3AdamState"]
