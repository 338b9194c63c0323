r"""Per-subnet client sampling (SD-GT seed 003, Sec. III [L158-L160], Theorem 1 [L242]).

The server samples h_s of the m_s clients of subnet s each global round.  The analysis ([L722],
[L745]) needs each client sampled with probability h_s/m_s; the paper never names the
distribution (notes sdgt.md §1.3 flag).  :func:`sample_mask` draws uniformly without replacement,
independently across subnets and calls.

* :math:`\beta_s = (m_s - h_s)/m_s`, the fraction NOT sampled [L242].
* :math:`p = \min_s (1 - \beta_s^2) \in (0, 1]` [L242]; full participation is beta = 0, p = 1.

Participation schemes of the federated round (issue 9).
A participation scheme draws, each round, who takes part and with which aggregation weights:
:class:`Participation` (clients (k,) int64, repeats for sampling with replacement; weights (k,)), so
that the round's aggregate is :math:`\Delta = \sum_j w_j \Delta_{c_j}`. ``p`` are the task's
aggregation weights p_i (sum 1). Unbiased schemes satisfy :math:`E[\Delta] = \sum_i p_i \Delta_i`
for any fixed client values (FedNova footnote 1 [001 L87]; Li et al. 2020, schemes I and II):

* :class:`FullParticipation`: every client, weights p_i (no randomness drawn).
* :class:`UniformParticipation`: q clients uniformly without replacement, globally or per group
  (subnet / cluster: ``sizes`` m_s and q_s per group, AFGA/CAFGA's S_r^k [000 Alg. 2]); weights
  "normalized" p_i / sum_{j in S} p_j (Flower's FedAvg; per group scaled by the group's total p), or
  "unbiased" p_i n / q (per group p_i m_s / q_s).
* :class:`WithReplacement`: q independent draws of client i with probability p_i (multiplicities;
  a client drawn twice runs twice with independent noise), weights 1/q (FedNova App. G).
* :class:`PoissonParticipation`: client i independently with probability r_i; weights p_i / r_i
  (unbiased; the number of participants is random and may be 0) or normalized.
* :func:`named_participation`: a scheme by name ("full", "uniform", "unbiased",
  "with-replacement", or any other registered in :data:`PARTICIPATION_SCHEMES`), as the CLI's
  ``--participation`` gives it.
* :func:`compute_mask`: AFGA's per-step compute set S_{r,t} [000 Alg. 1 line 6]: M of the rows,
  uniformly without replacement, fresh at every local step.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Callable, Literal

import numpy as np

from fedbound.argtypes import Count, InstanceOf, NonNegativeInt, Range
from fedbound.errors import InputTypeError, ValidationError, require
from fedbound.registry import Entry, Registry
from fedbound.validate import real_array, show

if TYPE_CHECKING:  # return annotations only: the arguments are checked by InstanceOf
    import torch


@dataclass(frozen=True)
class _Layout:
    """An argument constraint: contiguous subnets given by the attributes ``n``, ``m``, ``offsets``
    and ``subnet_of`` (a :class:`~fedbound.network.Network`, the algorithms' StackedNetwork)."""

    def check(self, name: str, value: object) -> None:
        missing = [a for a in ("n", "m", "offsets", "subnet_of") if not hasattr(value, a)]
        if missing:
            raise InputTypeError(f"{name} must be a Network (or have its n, m, offsets and "
                                 f"subnet_of), got {show(value)}")


#: the declared types of torch arguments, checked without importing torch (:class:`InstanceOf`)
_TorchTensor = Annotated[object, InstanceOf("torch.Tensor")]
_TorchGenerator = Annotated[object, InstanceOf("torch.Generator")]
#: aggregation weights p_i, a tensor with entries in [0, 1]
_WeightTensor = Annotated[object, InstanceOf("torch.Tensor"), Range(0.0, 1.0)]
#: subnets of contiguous clients (:class:`_Layout`)
_SubnetLayout = Annotated[object, _Layout()]
#: sample counts and subnet sizes: an integer or one per subnet
_Counts = int | np.ndarray


def check_h(h: _Counts, m: _Counts) -> np.ndarray:
    """``h`` (int or (S,) ints) broadcast against the subnet sizes ``m``; each 1 <= h_s <= m_s."""
    m_real = np.atleast_1d(real_array("subnet sizes m", m, ndim=(0, 1), low=1))
    require(bool(np.all(m_real == np.floor(m_real))), f"subnet sizes m must be integers >= 1, got {m_real.tolist()}")
    require(m_real.size >= 1, "subnet sizes m must name at least one subnet")
    m = m_real.astype(np.int64)
    h_real = real_array("h", h, ndim=(0, 1))
    require(bool(np.all(h_real == np.floor(h_real))) and np.asarray(h).dtype.kind in "iu",
            f"h must be an integer or a list of integers, got {h!r}")
    h_arr = h_real.astype(np.int64)
    require(h_arr.ndim == 0 or h_arr.shape == m.shape,
            f"h must be an int or have one entry per subnet (S = {m.size}), got {h_arr.size} entries")
    h_arr = np.broadcast_to(h_arr, m.shape).astype(np.int64)
    bad = np.flatnonzero((h_arr < 1) | (h_arr > m))
    if bad.size:
        s = int(bad[0])
        raise ValidationError(f"h[{s}] = {h_arr[s]} must be in [1, m_{s} = {m[s]}]")
    return h_arr


def beta_from_h(h: _Counts, m: _Counts) -> np.ndarray:
    r""":math:`\beta_s = (m_s - h_s)/m_s` [L242], float64 (S,)."""
    h = check_h(h, m)
    m = np.atleast_1d(np.asarray(m, dtype=np.float64))
    return (m - h) / m


def participation(h: Annotated[np.ndarray, Range(0)],
                  m: Annotated[np.ndarray, Range(1)]) -> np.ndarray:
    r""":math:`p = \min_s (1 - \beta_s^2) = \min_s h_s (2 m_s - h_s)/m_s^2` [L242] for integer h of
    shape (..., S) and sizes m (S,); the body checks nothing (the controller's integer search calls
    it on many h at once), a call from outside fedbound is checked against the declared types.
    Computed from the exact integer ratio, so that every caller gets the same float."""
    h = np.asarray(h, dtype=np.int64)
    m = np.asarray(m, dtype=np.int64)
    return np.min((h * (2 * m - h)) / (m * m), axis=-1)


def p_from_h(h: _Counts, m: _Counts) -> float:
    r""":math:`p = \min_s (1 - \beta_s^2)` [L242] for valid sample counts (1 <= h_s <= m_s)."""
    return float(participation(check_h(h, m), m))


def sample_mask(network: _SubnetLayout, h: _Counts, generator: _TorchGenerator) -> torch.Tensor:
    """Bool (n,) mask with exactly h_s sampled clients in subnet s, uniform without replacement.

    ``network`` is a :class:`~fedbound.network.Network` or anything with its ``n``, ``m``,
    ``offsets`` and ``subnet_of`` (e.g. the algorithms' StackedNetwork).

    Vectorized: one uniform key per client, offset by its subnet index, is sorted once; the h_s
    smallest keys of each subnet's contiguous block are kept.  Each call draws fresh keys from
    ``generator``, so calls are independent and the same generator state gives the same mask.
    """
    import torch  # here, not at module level: the network CLI must not pay for importing torch
    cpu = generator.device   # drawn and ranked on the CPU; the mask goes to the default device
    h = torch.as_tensor(check_h(h, network.m), device=cpu)
    # copies (the Network's array is read-only); a torch view of the network works as well
    subnet_of = network.subnet_of
    subnet_of = (subnet_of.to(device=cpu, dtype=torch.int64) if isinstance(subnet_of, torch.Tensor)
                 else torch.tensor(np.asarray(subnet_of), dtype=torch.int64, device=cpu))
    offsets = torch.as_tensor(np.asarray(network.offsets).astype(np.int64), device=cpu)
    keys = torch.rand(network.n, generator=generator, dtype=torch.float64, device=cpu) + subnet_of
    order = torch.argsort(keys)  # subnets stay contiguous: subnet s occupies offsets[s]:offsets[s+1]
    rank_in_subnet = torch.arange(network.n, device=cpu) - offsets[subnet_of]
    mask = torch.empty(network.n, dtype=torch.bool, device=cpu)
    mask[order] = rank_in_subnet < h[subnet_of]
    return mask.to(torch.get_default_device())


# ---- participation schemes of the federated round (issue 9) ---------------------------------------

WEIGHTINGS = ("normalized", "unbiased")


class Participation:
    """Who takes part in a round: ``clients`` (k,) int64 (sorted; repeats allowed) and their
    aggregation ``weights`` (k,) (the round aggregate is sum_j weights[j] Delta_{clients[j]});
    ``full``: True when clients = 0..n-1 in order (the round may use the task's data ungathered)."""

    __slots__ = ("clients", "weights", "full")

    def __init__(self, clients: _TorchTensor, weights: _TorchTensor, full: bool = False):
        self.clients, self.weights, self.full = clients, weights, bool(full)

    @property
    def k(self) -> int:
        return int(self.clients.shape[0])


def _weighting(weighting: str) -> str:
    from fedbound.validate import one_of
    return one_of("weighting", weighting, WEIGHTINGS)


class _Scheme:
    """What the participation schemes share: a short repr of their settings (n, q or the rate, the
    weighting, the group sizes), as :func:`fedbound.display.brief` writes them."""

    def __repr__(self) -> str:
        from fedbound.display import brief
        settings = {k: getattr(self, k) for k in ("n", "q", "rate", "weighting") if hasattr(self, k)}
        if "rate" in settings and np.all(self.rate == self.rate[0]):
            settings["rate"] = float(self.rate[0])   # one rate for every client
        if getattr(self, "groups", None) is not None:
            settings["group_sizes"] = self.groups.m
        return brief(type(self).__name__, **settings)


class FullParticipation(_Scheme):
    """Every client takes part, with weights p_i."""

    name = "full"

    def draw(self, p: _WeightTensor, generator: _TorchGenerator) -> Participation:
        import torch
        return Participation(torch.arange(p.shape[0]), p, full=True)


class UniformParticipation(_Scheme):
    """q clients uniformly without replacement (``sizes`` given: q_s of the m_s clients of each
    contiguous group s, drawn by :func:`sample_mask`)."""

    name = "uniform"

    def __init__(self, n: Count, q: _Counts, *, sizes: np.ndarray | None = None,
                 weighting: Literal["normalized", "unbiased"] = "normalized"):
        from fedbound.validate import integer
        self.n = integer("n", n, low=1)
        self.weighting = _weighting(weighting)
        if sizes is None:
            self.q = integer("clients per round", q, low=1, high=self.n)
            self.groups = None
        else:
            m = real_array("group sizes", sizes, ndim=1, low=1)
            require(bool(np.all(m == np.floor(m))), f"group sizes must be integers >= 1, got {m.tolist()}")
            m = m.astype(np.int64)
            require(int(m.sum()) == self.n, f"group sizes {m.tolist()} must add up to n = {self.n}")
            self.q = check_h(q, m)
            self.groups = _Groups(m)

    def draw(self, p: _WeightTensor, generator: _TorchGenerator) -> Participation:
        import torch
        self._check_weights(p)
        if self.groups is None:
            drawn = torch.randperm(self.n, generator=generator, device=generator.device)
            clients = torch.sort(drawn[: self.q]).values.to(p.device)
            return Participation(clients, self._weights(p.index_select(0, clients)), full=self.q == self.n)
        g = self.groups
        clients = torch.nonzero(sample_mask(g, self.q, generator)).squeeze(1)
        pc = p.index_select(0, clients)
        group = g.subnet_of.index_select(0, clients)
        if self.weighting == "normalized":   # p_i P_s / sum_{j in S_s} p_j, P_s = sum_{i in C_s} p_i
            total = torch.zeros(g.S, dtype=p.dtype).index_add_(0, g.subnet_of, p)
            picked = torch.zeros(g.S, dtype=p.dtype).index_add_(0, group, pc)
            w = pc * (total / picked).index_select(0, group)
        else:                                # p_i m_s / q_s
            scale = torch.as_tensor(g.m / self.q, dtype=p.dtype)
            w = pc * scale.index_select(0, group)
        return Participation(clients, w, full=bool(np.array_equal(self.q, g.m)))

    def _check_weights(self, p) -> None:
        if p.ndim != 1 or p.shape[0] != self.n:
            raise ValidationError(f"p must have one weight per client (n = {self.n}), got shape "
                                  f"{tuple(p.shape)}")

    def _weights(self, pc):
        """The weights of the sampled clients from their p_i ``pc`` (..., q), over the last axis."""
        return pc / pc.sum(dim=-1, keepdim=True) if self.weighting == "normalized" else pc * (self.n / self.q)

    def draw_each(self, p: _WeightTensor, generators: list[_TorchGenerator]) -> tuple:
        """(clients (B, q), weights (B, q)): row b is what :meth:`draw` gives with
        ``generators[b]`` (one randperm per generator, then the sort and the weights of all rows
        at once: the batched seeds' participation, :mod:`fedbound.algorithms.federated.seeds`).
        Without groups only."""
        import torch
        require(self.groups is None, "draw_each draws without groups")
        require(len(generators) >= 1, "draw_each needs at least one generator")
        self._check_weights(p)
        drawn = torch.stack([torch.randperm(self.n, generator=g, device=g.device) for g in generators])
        clients = torch.sort(drawn[:, : self.q], dim=1).values.to(p.device)
        return clients, self._weights(p[clients])


class _Groups:
    """Contiguous groups of sizes m, in the form :func:`sample_mask` takes."""

    def __init__(self, m: np.ndarray):
        import torch
        self.m, self.S, self.n = m, int(m.size), int(m.sum())
        self.offsets = np.concatenate([[0], np.cumsum(m)])
        self.subnet_of = torch.repeat_interleave(torch.arange(self.S), torch.as_tensor(m))


class WithReplacement(_Scheme):
    """q draws with replacement, client i with probability p_i; weights 1/q."""

    name = "with_replacement"

    def __init__(self, q: Count):
        from fedbound.validate import integer
        self.q = integer("clients per round", q, low=1)

    def draw(self, p: _WeightTensor, generator: _TorchGenerator) -> Participation:
        import torch
        drawn = torch.multinomial(p.to(generator.device), self.q, replacement=True, generator=generator)
        clients = torch.sort(drawn).values.to(p.device)
        return Participation(clients, torch.full((self.q,), 1.0 / self.q, dtype=p.dtype))


class PoissonParticipation(_Scheme):
    """Client i independently with probability r_i (a scalar or (n,))."""

    name = "poisson"

    def __init__(self, n: Count, rate: float | np.ndarray, *,
                 weighting: Literal["normalized", "unbiased"] = "unbiased"):
        from fedbound.validate import integer, real_array
        self.n = integer("n", n, low=1)
        r = real_array("participation rate", rate, ndim=(0, 1), low=0.0, high=1.0)
        require(r.ndim == 0 or r.shape == (self.n,),
                f"participation rate must be a number or have n = {self.n} entries, got {r.shape}")
        require(bool(np.all(r > 0)), "participation rate must be > 0 for every client")
        self.rate = np.broadcast_to(r, (self.n,)).copy()
        self.weighting = _weighting(weighting)

    def draw(self, p: _WeightTensor, generator: _TorchGenerator) -> Participation:
        import torch
        r = torch.as_tensor(self.rate, dtype=p.dtype)
        keys = torch.rand(self.n, generator=generator, dtype=torch.float64, device=generator.device)
        clients = torch.nonzero(keys < torch.as_tensor(self.rate, device=generator.device)
                                ).squeeze(1).to(p.device)
        pc = p.index_select(0, clients)
        if self.weighting == "unbiased":
            w = pc / r.index_select(0, clients)
        else:
            w = pc / pc.sum() if clients.numel() else pc
        return Participation(clients, w, full=clients.numel() == self.n)


@dataclass(frozen=True, repr=False)
class ParticipationSpec(Entry):
    """A participation scheme by name: ``build(n, q) -> scheme`` for n clients and q clients per
    round (None where the scheme takes every client)."""

    name: str
    build: Callable
    summary: str
    options: tuple = ()


#: participation schemes by name (``--participation``, the option ``participation``)
PARTICIPATION_SCHEMES: Registry[ParticipationSpec] = Registry(
    "participation", ParticipationSpec, packages=("fedbound.network",))


def _needs_q(name: str, q):
    require(q is not None, f"participation {name!r} needs the number of clients per round")


def _full(n: int, q=None):
    require(q is None or q == n, f"full participation takes all n = {n} clients; got "
                                 f"{q} clients per round (choose another --participation)")
    return FullParticipation()


def _uniform(weighting: str):
    def build(n: int, q=None):
        from fedbound.validate import integer
        _needs_q("uniform" if weighting == "normalized" else "unbiased", q)
        return UniformParticipation(n, integer("clients per round", q, low=1, high=n),
                                    weighting=weighting)
    return build


def _with_replacement(n: int, q=None):
    _needs_q("with-replacement", q)
    return WithReplacement(q)


PARTICIPATION_SCHEMES.register(ParticipationSpec("full", _full, "every client, weights p_i"))
PARTICIPATION_SCHEMES.register(ParticipationSpec(
    "uniform", _uniform("normalized"), "q clients without replacement, weights p_i / sum_{j in S} "
    "p_j: FedNova Alg. 1's renormalized subset [001 L969]"))
PARTICIPATION_SCHEMES.register(ParticipationSpec(
    "unbiased", _uniform("unbiased"), "q clients without replacement, weights p_i n/q: scheme (ii) "
    "of FedNova's footnote 1 [001 L87]"))
PARTICIPATION_SCHEMES.register(ParticipationSpec(
    "with-replacement", _with_replacement, "q draws by p_i, weights 1/q: scheme (i), FedNova App. G "
    "(153) [001 L839-L843]"))


def named_participation(name: str, n: Count, q: int | None = None):
    """The scheme ``name`` (:data:`PARTICIPATION_SCHEMES`) over n clients with q per round:
    "full" (q None or n), "uniform", "unbiased" or "with-replacement", and any registered one."""
    return PARTICIPATION_SCHEMES.get(name).build(n, q)


def compute_mask(rows: NonNegativeInt, M: NonNegativeInt, generator: _TorchGenerator) -> "torch.Tensor":
    """Bool (rows,) with exactly M True, uniformly without replacement (AFGA's S_{r,t})."""
    import torch
    keys = torch.rand(rows, generator=generator, dtype=torch.float64,
                      device=generator.device).to(torch.get_default_device())
    mask = torch.zeros(rows, dtype=torch.bool)
    mask[torch.argsort(keys)[:M]] = True
    return mask
