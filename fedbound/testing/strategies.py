r"""Hypothesis strategies for property tests against the theory.

* :func:`constants`: dictionaries of theory constants drawn inside their declared domains
  (:mod:`fedbound.theory.symbols`; an open end such as beta1 = 1 of [0, 1) is never drawn),
  respecting the order relations (mu <= L, ...).
* :func:`admissible_constants`: constants of a result inside its own domains and assumptions
  (e.g. mu > 0 for a strongly convex result), plus a value of every variable its step-size
  conditions constrain (gamma, eta_l, ...; the drawn dict names them) satisfying every condition
  (fraction x the largest admissible value, implicit conditions included; several step variables
  one after the other, :func:`fedbound.theory.stepsize.step_order`).
* :func:`networks`: :class:`fedbound.network.Network` objects with random subnet sizes and
  topologies.
* :func:`quadratic_tasks`, :func:`least_squares_tasks`: random heterogeneous tasks with exactly
  known constants (L, mu, x*, f*).

Ranges are checked when a strategy is made: a range with no value in the constant's domain, a
fixed value outside it or an unknown name is a :class:`~fedbound.errors.FedboundError` naming the
constant and its meaning, never an empty strategy.

Example (property tests of a user's own claims; runs as is)::

    from hypothesis import given, settings
    from fedbound.testing import admissible_constants, constants
    from fedbound.theory import get

    @settings(max_examples=20, deadline=None)
    @given(constants(["L", "mu", "K"], scope="sdgt"))   # K: SD-GT's D2D rounds
    def test_effective_step(c):
        assert c["mu"] <= c["L"]
        assert 1 / (4 * c["K"] * c["L"]) > 0

    @settings(max_examples=10, deadline=None)
    @given(admissible_constants("sdgt.thm3", "appendix", bounds={"L": (0.5, 2.0)}))
    def test_theorem3_contracts(c):   # mu > 0 and gamma <= gamma_bar: 0 < 1 - mu K gamma/4 < 1
        rate = float(get("sdgt.thm3").evaluate("appendix", **c).extras["rate"])
        assert 0 < rate < 1
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
import sympy as sp
from hypothesis import assume, strategies as st

from fedbound import validate
from fedbound.errors import InputTypeError, ValidationError, require
from fedbound.theory import get, results
from fedbound.theory.result import Result
from fedbound.theory.stepsize import step_order
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
#: a default range stops this fraction of its width short of an open end of the domain
OPEN_END_GAP = 1e-3


@dataclass(frozen=True)
class Range:
    """A sampling range of one constant: the values between ``low`` and ``high``, each end
    excluded where ``*_open``, integers only where ``integer``."""

    low: float
    high: float
    low_open: bool = False
    high_open: bool = False
    integer: bool = False

    def strategy(self) -> st.SearchStrategy:
        """Integers uniformly; floats log-uniformly over decades when low > 0, uniformly otherwise;
        every value inside the range (rounding of 10**x is clamped back in, open ends excluded)."""
        if self.integer:
            return st.integers(int(self.low), int(self.high))
        if self.low > 0:
            decades = st.floats(math.log10(self.low), math.log10(self.high)).map(lambda e: 10.0 ** e)
        else:
            decades = st.floats(self.low, self.high, allow_nan=False, allow_infinity=False)
        return decades.map(self._clamp)

    def _clamp(self, x: float) -> float:
        x = min(max(float(x), self.low), self.high)
        if self.low_open and x <= self.low:
            x = float(np.nextafter(self.low, math.inf))
        if self.high_open and x >= self.high:
            x = float(np.nextafter(self.high, -math.inf))
        return x


def _range(name: str, domain: S.Domain, bounds=None, scope: str | None = None) -> Range:
    """The sampling range of constant ``name``: ``bounds`` (low, high) inside ``domain``, each end
    open where it is the domain's open end; without bounds the default range (:data:`DEFAULT_RANGES`,
    else by kind of domain) inside the domain, kept :data:`OPEN_END_GAP` of its width away from an
    open end. An empty range is a ValidationError naming the constant and its meaning."""
    what = S.explain(name, scope)
    if bounds is None:
        low, high = _default_range(name, domain)
        low, high = max(low, domain.low), min(high, domain.high)
        if domain.low_open and low <= domain.low and not domain.integer:
            low = domain.low + OPEN_END_GAP * (high - domain.low)
        if domain.high_open and high >= domain.high and not domain.integer:
            high = domain.high - OPEN_END_GAP * (domain.high - low)
        where = f"its default range has no value in its domain {domain.describe()}; pass bounds"
    else:
        if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__") or len(bounds) != 2:
            raise InputTypeError(f"bounds of {what} must be a pair (low, high), got {bounds!r}")
        low = validate.number(f"bounds of {name} (low)", bounds[0], allow_inf=True)
        high = validate.number(f"bounds of {name} (high)", bounds[1], allow_inf=True)
        where = f"bounds ({low:g}, {high:g}) have no value in its domain {domain.describe()}"
        low, high = max(low, domain.low), min(high, domain.high)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValidationError(f"{what} needs finite bounds to draw from, got ({low:g}, {high:g})")
    low_open = domain.low_open and low == domain.low
    high_open = domain.high_open and high == domain.high
    if domain.integer:
        low = math.ceil(low) + (1 if low_open and math.ceil(low) == low else 0)
        high = math.floor(high) - (1 if high_open and math.floor(high) == high else 0)
        empty = low > high
    else:
        empty = low > high or (low == high and (low_open or high_open))
    if empty:
        raise ValidationError(f"no values to draw for {what}: {where}")
    return Range(float(low), float(high), low_open, high_open, domain.integer)


def _default_range(name: str, domain: S.Domain) -> tuple[float, float]:
    if name in DEFAULT_RANGES:
        return DEFAULT_RANGES[name]
    if domain.integer:
        return INT_RANGE
    if domain.high <= 1.0:
        return UNIT_LOW, 1.0
    return FLOAT_RANGE


def constant_strategy(name: str, bounds: tuple[float, float] | None = None, scope: str | None = None,
                      domain: S.Domain | None = None) -> st.SearchStrategy:
    """Values of one declared constant inside its domain (``bounds`` narrows the range; ``scope``
    resolves a short name as a result of that paper does; ``domain`` replaces the declared one, e.g.
    a result's narrower assumption). Open ends of the domain are never drawn; an empty range is a
    ValidationError (see :func:`constants`)."""
    results()   # loads every paper's constants (p, q, ... are declared by the SD-GT results)
    domain = domain or S.constant(name, scope).domain
    return _range(name, domain, bounds, scope).strategy()


def _keys(what: str, mapping, names: list[str]) -> dict:
    """``mapping`` (None: empty) as a dict whose keys are all among ``names`` (did-you-mean)."""
    if mapping is None:
        return {}
    if not isinstance(mapping, Mapping):
        raise InputTypeError(f"{what} must be a mapping of constant names, got {type(mapping).__name__}")
    validate.known_names(what, mapping, names)
    return dict(mapping)


def constants(names: Iterable[str], bounds: Mapping[str, tuple[float, float]] | None = None,
              fixed: Mapping[str, float] | None = None, scope: str | None = None,
              domains: Mapping[str, S.Domain] | None = None,
              order: Iterable[tuple[str, str]] = ()) -> st.SearchStrategy[dict[str, float]]:
    """Dicts {name: value} for the declared constants ``names`` (see module doc).

    ``bounds`` narrows the sampling range of a constant (within its domain), ``fixed`` pins values,
    ``scope`` resolves short names as a result of that paper does, ``domains`` narrows domains.
    Every value lies in its domain: open ends (e.g. beta1 = 1 where the domain is [0, 1)) are never
    drawn. For each order relation (smaller, larger) of
    :data:`fedbound.theory.symbols.ORDER_RELATIONS`, the smaller one is drawn as a fraction of the
    larger (e.g. mu = fraction * L, the fraction in [0, 1], or in [:data:`OPEN_END_GAP`, 1] where
    the domain excludes 0), and a larger one is drawn at least as large as a fixed smaller one;
    ``order`` adds pairs (smaller, larger) of short names (a result's relations between two
    constants, such as FedNova's B <= C). Arguments are checked when the strategy is made: an unknown name, a range with no value in its
    domain or a fixed value outside it is a FedboundError naming the constant and its meaning.
    """
    results()
    if isinstance(names, (str, bytes)):
        raise InputTypeError(f"names must be a list of constant names, got {names!r}")
    names = list(names)
    resolved = {nm: S.constant(nm, scope) for nm in names}
    narrowed = _keys("constant of domains", domains, names)
    domain = {nm: narrowed.get(nm) or resolved[nm].domain for nm in names}
    fixed = _keys("fixed constant", fixed, names)
    bounds = _keys("constant of bounds", bounds, names)
    S.check_values({k: np.asarray(v) for k, v in fixed.items()}, scope)
    for nm, value in fixed.items():
        if not domain[nm].contains(np.asarray(value)):
            raise ValidationError(f"fixed {S.explain(nm, scope)} must be {domain[nm].describe()}, "
                                  f"got {value!r}")
    short = {c.key: nm for nm, c in resolved.items()}
    pairs = [(short.get(small), short.get(large)) for small, large in S.ORDER_RELATIONS]
    pairs += [(small, large) for small, large in order if small in resolved and large in resolved]
    dependent: dict[str, str] = {}
    for small, large in pairs:
        if small is None or large is None or large in fixed and small in fixed:
            continue
        if small not in fixed:
            dependent[small] = large
        else:   # the larger one from the fixed smaller one up
            own = _range(large, domain[large], bounds.get(large), scope)
            bounds[large] = (max(fixed[small], own.low), own.high)
    ranges = {nm: _range(nm, domain[nm], bounds.get(nm), scope) for nm in names
              if nm not in fixed and nm not in dependent}
    return _constants(names, fixed, ranges, dependent, {nm: domain[nm] for nm in dependent}, scope)


@st.composite
def _constants(draw, names, fixed, ranges, dependent, small_domains, scope) -> dict[str, float]:
    out = {nm: fixed[nm] for nm in names if nm in fixed}
    out.update({nm: draw(r.strategy()) for nm, r in ranges.items()})
    for small, large in dependent.items():
        d = small_domains[small]
        if d.integer:
            out[small] = draw(st.integers(int(max(d.low + (1 if d.low_open else 0), 1)), int(out[large])))
        else:
            fraction = Range(OPEN_END_GAP if d.low_open and d.low == 0.0 else 0.0, 1.0)
            out[small] = draw(fraction.strategy()) * out[large]
    S.check_values({k: np.asarray(v) for k, v in out.items()}, scope)
    return {nm: out[nm] for nm in names}


def admissible_constants(result: str | Result, variant: str | None = None,
                         bounds: Mapping[str, tuple[float, float]] | None = None,
                         fixed: Mapping[str, float] | None = None,
                         fraction: tuple[float, float] = (1e-3, 1.0),
                         variable: str | None = None) -> st.SearchStrategy[dict[str, float]]:
    """Constants of ``result`` (a :class:`fedbound.theory.Result` or its id) inside its domains and
    assumptions (:meth:`~fedbound.theory.Result.domain`), with a value of every step variable its
    variant's conditions constrain (gamma, eta_l, ...; a result without conditions gets its
    constants only) that satisfies every condition on it.

    The step variables not in ``fixed`` are drawn one after the other in the order of
    :func:`fedbound.theory.step_order` (each after those its caps depend on): v = f x
    ``max_step(variable=v, later=<the ones still to draw>)``, f drawn log-uniformly in ``fraction``
    (within (0, 1]; strict conditions use f < 1), so that every condition holds at the end,
    including those on a later variable that involve an earlier one. ``variable`` draws only that
    one; the variant's other step variables must then be in ``fixed``. Draws whose largest value is
    not finite and positive are rejected with ``assume``. The result's relations between two
    constants (B <= C) are drawn in order, and a draw its other relations exclude
    (:meth:`~fedbound.theory.Result.admissible`) is rejected. The result's predicates are not
    imposed (they are reported by :meth:`~fedbound.theory.Result.evaluate`). Arguments are checked when the
    strategy is made (FedboundError naming the argument).
    """
    result = get(result) if isinstance(result, str) else validate.instance(
        "result", result, Result, "a fedbound Result or a result id")
    v = result.variant(variant)
    if isinstance(fraction, (str, bytes)) or not hasattr(fraction, "__len__") or len(fraction) != 2:
        raise InputTypeError(f"fraction must be a pair (low, high) in (0, 1], got {fraction!r}")
    low = validate.number("fraction (low)", fraction[0], low=0.0, high=1.0, low_open=True)
    high = validate.number("fraction (high)", fraction[1], low=low, high=1.0)
    steps = v.variables()
    fixed = dict(fixed or {})
    if variable is not None:
        validate.one_of("variable", variable, steps)
        missing = [u for u in steps if u != variable and u not in fixed]
        if missing:
            raise ValidationError(f"{result.id} ({v.name}) constrains {', '.join(steps)}: with "
                                  f"variable={variable!r} give the other step variables in fixed= "
                                  f"({', '.join(missing)}), or leave variable out to draw them all")
        drawn = [variable]
    else:
        drawn = step_order(result, v.name, [u for u in steps if u not in fixed])
    names = [nm for nm in result.constants(v.name) if nm not in drawn]
    names += [u for u in steps if u in fixed and u not in names]
    base = constants(names, bounds, fixed, scope=result.scope,
                     domains={nm: result.domain(nm)[0] for nm in names}, order=_pairs(result))
    return _admissible(base, result, v.name, drawn, Range(low, high))


def _pairs(result: Result) -> list[tuple[str, str]]:
    """The result's relations between two constants as (smaller, larger) short names."""
    out = []
    for relation in result.relations:
        lhs, rhs = relation.lhs, relation.rhs
        if isinstance(lhs, sp.Symbol) and isinstance(rhs, sp.Symbol):
            names = S.short_name(lhs), S.short_name(rhs)
            out.append(names if relation.relation in ("<=", "<") else names[::-1])
    return out


@st.composite
def _admissible(draw, base, result, variant: str, drawn: list[str], fraction: Range) -> dict[str, float]:
    values = draw(base)
    assume(bool(np.all(result.admissible(values)[0])))      # before max_step, which refuses them
    for i, u in enumerate(drawn):
        cap, binding = result.max_step(variant, variable=u, later=drawn[i + 1:], **values)
        assume(bool(np.isfinite(cap) and cap > 0))
        f = draw(fraction.strategy())
        if "(strict)" in str(binding) and f >= 1.0:
            f = 0.5
        values[u] = float(f * float(cap))
    assume(bool(np.all(result.admissible(values)[0])))
    return values


def _draw_int(draw, value) -> int:
    return draw(value) if isinstance(value, st.SearchStrategy) else int(value)


def _count(name: str, value, low: int = 1):
    """A count argument: a hypothesis strategy of integers (drawn later), or an integer >= low."""
    return value if isinstance(value, st.SearchStrategy) else validate.integer(name, value, low=low)


def _interval(name: str, pair, low: float, low_open: bool = False) -> tuple[float, float]:
    """A (low, high) range argument of finite numbers inside [low, inf) ((low, inf) if
    ``low_open``) with low <= high."""
    if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
        raise InputTypeError(f"{name} must be a pair (low, high) of numbers, got {pair!r:.60}")
    a = validate.number(f"{name} (low)", pair[0], low=low, low_open=low_open)
    b = validate.number(f"{name} (high)", pair[1], low=a)
    return a, b


TOPOLOGIES = ("ring", "complete", "chain", "star", "grid", "erdos_renyi")


def networks(S: st.SearchStrategy[int] | int = st.integers(1, 4),
             m: st.SearchStrategy[int] | int = st.integers(1, 6),
             topologies: Sequence[str] = TOPOLOGIES, equal_sizes: bool = False) -> st.SearchStrategy:
    """A :class:`fedbound.network.Network`: S subnets of random sizes, each with a topology drawn
    from ``topologies`` (Metropolis-Hastings weights, AFGA ring weights for "ring"). Arguments are
    checked when the strategy is made (FedboundError naming the argument)."""
    S, m = _count("S", S), _count("m", m)
    if isinstance(topologies, (str, bytes)) or not hasattr(topologies, "__iter__"):
        raise InputTypeError(f"topologies must be a list of topology names, got {topologies!r:.60}")
    topologies = [validate.one_of("topology", t, TOPOLOGIES) for t in topologies]
    require(topologies, "topologies must name at least one topology")
    equal_sizes = validate.instance("equal_sizes", equal_sizes, bool, "True or False")
    return _networks(S, m, tuple(topologies), equal_sizes)


@st.composite
def _networks(draw, S, m, topologies, equal_sizes):
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


def quadratic_tasks(n: st.SearchStrategy[int] | int = st.integers(2, 8),
                    d: st.SearchStrategy[int] | int = st.integers(1, 6),
                    kappa: tuple[float, float] = (1.0, 20.0), mu: tuple[float, float] = (0.1, 1.0),
                    heterogeneity: tuple[float, float] = (0.0, 2.0)) -> st.SearchStrategy:
    """A random heterogeneous quadratic f_i(x) = 1/2 (x - b_i)^T H_i (x - b_i) with every f_i
    strongly convex (:meth:`fedbound.tasks.Quadratic.generate`: exact L = kappa mu, mu, x*, f*).
    Arguments are checked when the strategy is made: kappa in [1, inf), mu in (0, inf),
    heterogeneity in [0, inf), each a (low, high) pair."""
    return _quadratic_tasks(_count("n", n), _count("d", d), _interval("kappa", kappa, 1.0),
                            _interval("mu", mu, 0.0, low_open=True),
                            _interval("heterogeneity", heterogeneity, 0.0))


@st.composite
def _quadratic_tasks(draw, n, d, kappa, mu, heterogeneity):
    from fedbound.tasks import Quadratic

    return Quadratic.generate(_draw_int(draw, n), _draw_int(draw, d), kappa=draw(st.floats(*kappa)),
                              mu=draw(st.floats(*mu)), heterogeneity=draw(st.floats(*heterogeneity)),
                              seed=draw(st.integers(0, 2**31 - 1)))


def least_squares_tasks(n: st.SearchStrategy[int] | int = st.integers(2, 8),
                        d: st.SearchStrategy[int] | int = st.integers(1, 5),
                        rows: st.SearchStrategy[int] | int = st.integers(1, 12)) -> st.SearchStrategy:
    """Random least squares f_i(x) = ||A_i x - y_i||^2 / (2 m) built from arrays (the path of a
    user's data), with client-dependent row scales; per-client mu = 0 when rows < d. Arguments are
    checked when the strategy is made."""
    return _least_squares_tasks(_count("n", n), _count("d", d), _count("rows", rows))


@st.composite
def _least_squares_tasks(draw, n, d, rows):
    from fedbound.tasks import LeastSquares

    n, d, m = _draw_int(draw, n), _draw_int(draw, d), _draw_int(draw, rows)
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    A = rng.normal(size=(n, m, d)) * rng.uniform(0.5, 2.0, size=(n, 1, 1))
    return LeastSquares(A, rng.normal(size=(n, m)))


__all__ = ["constants", "constant_strategy", "admissible_constants", "networks", "quadratic_tasks",
           "least_squares_tasks", "Range", "DEFAULT_RANGES", "TOPOLOGIES"]
