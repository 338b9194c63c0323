r"""Hypothesis strategies for property tests against the theory.

* :func:`constants`: dictionaries of theory constants drawn inside their declared domains
  (:mod:`fedbound.theory.symbols`), respecting the order relations (mu <= L, ...).
* :func:`admissible_constants`: constants of a result plus a value of the variable its step-size
  conditions constrain (gamma, eta_l, ...; the drawn dict names it) satisfying every condition on
  it (fraction x the variant's largest admissible value, implicit conditions included), inside the
  result's own assumptions (e.g. mu > 0 for a strongly convex result).
* :func:`networks`: :class:`fedbound.network.Network` objects with random subnet sizes and
  topologies.
* :func:`quadratic_tasks`, :func:`least_squares_tasks`: random heterogeneous tasks with exactly
  known constants (L, mu, x*, f*).

Example (a property test of a user's own claim; runs as is)::

    from hypothesis import given, settings
    from fedbound.testing import constants

    @settings(max_examples=20, deadline=None)
    @given(constants(["L", "mu", "K"], scope="sdgt"))
    def test_effective_step(c):
        assert c["mu"] <= c["L"]
        assert 1 / (4 * c["K"] * c["L"]) > 0
"""
from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

import numpy as np
from hypothesis import assume, strategies as st

from fedbound.theory import results
from fedbound.theory import symbols as S

#: default sampling ranges (low, high) for constants with unbounded domains; drawn log-uniformly
#: for floats, uniformly for integers
DEFAULT_RANGES: dict[str, tuple[float, float]] = {
    "L": (0.1, 10.0), "sigma": (0.0, 10.0), "gamma": (1e-6, 1.0), "K": (1, 20), "T": (1, 10_000),
    "n": (1, 100), "eps": (1e-4, 1.0),
}
FLOAT_RANGE = (1e-3, 1e3)
INT_RANGE = (1, 50)
UNIT_LOW = 1e-2   # (0, 1] constants (p, q) are drawn in [UNIT_LOW, 1]


def _float_strategy(low: float, high: float) -> st.SearchStrategy[float]:
    if low > 0:  # log-uniform over decades
        return st.floats(math.log10(low), math.log10(high)).map(lambda e: float(10.0 ** e))
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


def _domain_range(name: str, domain: S.Domain) -> tuple[float, float]:
    if name in DEFAULT_RANGES:
        low, high = DEFAULT_RANGES[name]
    elif domain.integer:
        low, high = INT_RANGE
    elif domain.high <= 1.0:
        low, high = UNIT_LOW, 1.0
    else:
        low, high = FLOAT_RANGE
    low = max(low, domain.low + (1 if domain.integer and domain.low_open else 0))
    high = min(high, domain.high)
    if domain.low_open and not domain.integer and low <= domain.low:
        low = domain.low + 1e-3 * (high - domain.low)
    return low, high


def constant_strategy(name: str, bounds: tuple[float, float] | None = None, scope: str | None = None,
                      domain: S.Domain | None = None) -> st.SearchStrategy:
    """Values of one declared constant inside its domain (``bounds`` narrows the range; ``scope``
    resolves a short name as a result of that paper does; ``domain`` replaces the declared one, e.g.
    a result's narrower assumption)."""
    results()   # loads every paper's constants (p, q, ... are declared by the SD-GT results)
    domain = domain or S.constant(name, scope).domain
    low, high = bounds if bounds is not None else _domain_range(name, domain)
    if domain.integer:
        return st.integers(int(math.ceil(low)), int(math.floor(high)))
    return _float_strategy(float(low), float(high))


@st.composite
def constants(draw, names: Iterable[str], bounds: Mapping[str, tuple[float, float]] | None = None,
              fixed: Mapping[str, float] | None = None, scope: str | None = None,
              domains: Mapping[str, S.Domain] | None = None) -> dict[str, float]:
    """A dict {name: value} for the declared constants ``names`` (see module doc).

    ``bounds`` overrides the sampling range of a constant, ``fixed`` pins values, ``scope`` resolves
    short names as a result of that paper does, ``domains`` narrows domains. For each order relation
    (smaller, larger) of :data:`fedbound.theory.symbols.ORDER_RELATIONS`, the smaller one is drawn
    as a fraction in (0, 1] of the larger (e.g. mu = fraction * L).
    """
    results()
    bounds = dict(bounds or {})
    fixed = dict(fixed or {})
    names = list(names)
    domain = {nm: (domains or {}).get(nm) or S.constant(nm, scope).domain for nm in names}
    short = {S.constant(nm, scope).key: nm for nm in names}
    out: dict[str, float] = {}
    dependent = {}
    for small, large in S.ORDER_RELATIONS:
        small, large = short.get(small), short.get(large)
        if small is not None and large is not None and small not in fixed:
            dependent[small] = large
    for name in names:
        if name in fixed:
            out[name] = fixed[name]
        elif name not in dependent:
            out[name] = draw(constant_strategy(name, bounds.get(name), scope, domain[name]))
    for small, large in dependent.items():
        if domain[small].integer:
            out[small] = draw(st.integers(int(max(domain[small].low, 1)), int(out[large])))
        else:
            low = 0.0 if not domain[small].low_open else 1e-3
            out[small] = draw(st.floats(low, 1.0)) * out[large]
    S.check_values({k: np.asarray(v) for k, v in out.items()}, scope)
    return out


@st.composite
def admissible_constants(draw, result, variant: str | None = None,
                         bounds: Mapping[str, tuple[float, float]] | None = None,
                         fixed: Mapping[str, float] | None = None,
                         fraction: tuple[float, float] = (1e-3, 1.0),
                         variable: str | None = None) -> dict[str, float]:
    """Constants of ``result`` (a :class:`fedbound.theory.Result`) inside its domains and
    assumptions, with a value of ``variable`` (default: the one variable the variant's step-size
    conditions constrain, e.g. gamma or eta_l) that satisfies every condition on it: f x max_step,
    f drawn log-uniformly in ``fraction`` (strict conditions use f < 1). Draws whose largest value
    is not finite and positive are rejected with ``assume``."""
    v = result.variant(variant)
    variable = variable or (v.variables()[0] if len(v.variables()) == 1 else None)
    if variable is None:
        raise ValueError(f"{result.id} ({v.name}) constrains {v.variables()}; pass variable=")
    names = [nm for nm in result.constants(v.name) if nm != variable]
    values = draw(constants(names, bounds, fixed, scope=result.scope,
                            domains={nm: result.domain(nm)[0] for nm in names}))
    cap, binding = result.max_step(v.name, variable=variable, **values)
    assume(bool(np.isfinite(cap) and cap > 0))
    f = draw(_float_strategy(*fraction))
    if "(strict)" in str(binding) and f >= 1.0:
        f = 0.5
    values[variable] = float(f * float(cap))
    return values


def _draw_int(draw, value) -> int:
    return draw(value) if isinstance(value, st.SearchStrategy) else int(value)


TOPOLOGIES = ("ring", "complete", "chain", "star", "grid", "erdos_renyi")


@st.composite
def networks(draw, S: st.SearchStrategy[int] | int = st.integers(1, 4),
             m: st.SearchStrategy[int] | int = st.integers(1, 6),
             topologies: Sequence[str] = TOPOLOGIES, equal_sizes: bool = False):
    """A :class:`fedbound.network.Network`: S subnets of random sizes, each with a topology drawn
    from ``topologies`` (Metropolis-Hastings weights, AFGA ring weights for "ring")."""
    from fedbound.network import Network, topology_weights

    S = _draw_int(draw, S)
    sizes = [_draw_int(draw, m)] * S if equal_sizes else [_draw_int(draw, m) for _ in range(S)]
    blocks = []
    for size in sizes:
        name = draw(st.sampled_from(list(topologies)))
        seed = draw(st.integers(0, 2**31 - 1))
        options = {"prob": draw(st.floats(0.3, 1.0))} if name == "erdos_renyi" else {}
        blocks.append(topology_weights(name, size, seed=seed, **options))
    return Network.from_blocks(blocks)


@st.composite
def quadratic_tasks(draw, n: st.SearchStrategy[int] | int = st.integers(2, 8),
                    d: st.SearchStrategy[int] | int = st.integers(1, 6),
                    kappa: tuple[float, float] = (1.0, 20.0), mu: tuple[float, float] = (0.1, 1.0),
                    heterogeneity: tuple[float, float] = (0.0, 2.0)):
    """A random heterogeneous quadratic f_i(x) = 1/2 (x - b_i)^T H_i (x - b_i) with every f_i
    strongly convex (:meth:`fedbound.tasks.Quadratic.generate`: exact L = kappa mu, mu, x*, f*)."""
    from fedbound.tasks import Quadratic

    return Quadratic.generate(_draw_int(draw, n), _draw_int(draw, d), kappa=draw(st.floats(*kappa)),
                              mu=draw(st.floats(*mu)), heterogeneity=draw(st.floats(*heterogeneity)),
                              seed=draw(st.integers(0, 2**31 - 1)))


@st.composite
def least_squares_tasks(draw, n: st.SearchStrategy[int] | int = st.integers(2, 8),
                        d: st.SearchStrategy[int] | int = st.integers(1, 5),
                        rows: st.SearchStrategy[int] | int = st.integers(1, 12)):
    """Random least squares f_i(x) = ||A_i x - y_i||^2 / (2 m) built from arrays (the path of a
    user's data), with client-dependent row scales; per-client mu = 0 when rows < d."""
    from fedbound.tasks import LeastSquares

    n, d, m = _draw_int(draw, n), _draw_int(draw, d), _draw_int(draw, rows)
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    A = rng.normal(size=(n, m, d)) * rng.uniform(0.5, 2.0, size=(n, 1, 1))
    return LeastSquares(A, rng.normal(size=(n, m)))


__all__ = ["constants", "constant_strategy", "admissible_constants", "networks", "quadratic_tasks",
           "least_squares_tasks", "DEFAULT_RANGES", "TOPOLOGIES"]
