"""Solving a result for a step size or a number of rounds.

:func:`max_step` gives the largest admissible value of a variable its step-size conditions constrain
(the min of explicit caps, a vectorized bisection where a cap depends on the variable itself or
where a condition on another step variable involves it); :func:`step_order` the order in which
several step variables can be chosen one after the other; :func:`rounds_to_eps` the smallest number
of rounds at which the bound reaches a target.
"""
from __future__ import annotations

from typing import Annotated, Iterable, Mapping, NamedTuple

import numpy as np
import sympy as sp

from fedbound import validate
from fedbound.argtypes import Positive, PositiveArray, Range
from fedbound.display import box, fields, table
from fedbound.errors import ValidationError
from fedbound.theory.certify.trace import Untraceable, is_traced, substitute
from fedbound.theory.evaluation import bound, call
from fedbound.theory import symbols as S
from fedbound.theory.statement import Statement
from fedbound.theory.variant import RELATIONS, StepCondition, Variant

#: default relative tolerance of the implicit step-size solve (:func:`max_step`)
IMPLICIT_RTOL = 1e-12
#: smallest and largest values the implicit solve brackets in (binary orders of magnitude)
_TINY, _HUGE = 2.0 ** -1000, 2.0 ** 1000
#: default limit of the rounds :func:`rounds_to_eps` searches up to
ROUNDS_MAX = 2.0 ** 60
#: the relative tolerance of the implicit solve: in [1e-15, 0.1]
Rtol = Annotated[float, Range(1e-15, 0.1)]
#: the largest number of rounds searched: in [1, 2^1000]
RoundsLimit = Annotated[float, Range(1.0, 2.0 ** 1000)]


class StepSize(NamedTuple):
    """What :func:`max_step` finds: the largest admissible ``value`` of the step variable and the
    ``binding`` condition (its name; ``(strict)``: the value is a supremum, ``(on u)``: a condition
    on another step variable u). Python scalars for scalar constants, arrays for arrays of them;
    unpacks as ``value, binding = ...``.

    >>> StepSize(3.3e-05, "gamma_bar[5]")
    StepSize(value=3.3e-05, binding='gamma_bar[5]')
    """

    value: float | np.ndarray
    binding: str | np.ndarray

    def _repr_html_(self) -> str:
        """The largest step and its binding condition; for arrays of constants, a row per entry
        (long ones cut, :func:`fedbound.display.table`)."""
        if np.ndim(self.value) == 0:
            return box("largest step", [fields([("value", self.value), ("binding", str(self.binding))])]).text
        values, names = np.ravel(self.value), np.ravel(np.broadcast_to(self.binding, np.shape(self.value)))
        return box("largest step", [table(["entry", "value", "binding"],
                                          [[i, v, str(b)] for i, (v, b) in enumerate(zip(values, names))])],
                   subtitle=f"{values.size} constants' values").text


def _plain(x):
    """A 0-d array or numpy scalar as the Python scalar it holds; an array unchanged."""
    return x.item() if isinstance(x, (np.generic, np.ndarray)) and np.ndim(x) == 0 else x


def max_step(result: Statement, /, variant: str | None = None, variable: str | None = None,
             rtol: Rtol = IMPLICIT_RTOL, later: Iterable[str] | str = (), **constants) -> StepSize:
    """The largest value of ``variable`` satisfying every condition that bounds it, and the name of
    the binding condition (a :class:`StepSize`). ``variable`` may be omitted when the variant
    constrains only one.

    Several step variables (a variant with conditions on gamma and on eta, say): the conditions
    that bound ``variable`` are its own, ``variable <= cap``, and every condition ``u <= cap(variable,
    ...)`` on another step variable u whose cap involves ``variable`` (at the given u it bounds
    ``variable``; its name is marked ``(on u)``). So every other step variable such a condition
    involves must be given: one that a cap of ``variable`` depends on always, and a u whose own
    condition involves ``variable`` unless u is named in ``later`` (u is chosen afterwards, by
    ``max_step(variable=u)`` at the value found here, under its own conditions). A missing one is a
    ValidationError naming the condition and what to give. :func:`step_order` orders the step
    variables so that each can be chosen after the ones before it.

    Strict conditions ``v < cap`` have no maximum; the supremum is returned and the binding name
    is marked with ``(strict)``. Explicit caps give the min of the caps. Implicit ones (a cap
    depending on ``variable``, or a condition on another variable) are solved numerically,
    vectorized: with g(v) = whether every condition holds at v, the solve brackets the boundary of
    {v > 0 : g(v)} by doubling from the explicit min (or 1) and halving down to 2^-1000, then
    bisects until hi <= lo (1 + rtol); it returns lo, an admissible v with an inadmissible point
    within relative ``rtol`` above it. That is the largest admissible v whenever the admissible set
    is an interval (0, v*] (each condition's slack changes sign once, e.g. a cap non-increasing in
    v). The binding condition is the one with the largest ratio of its left side to its cap at the
    answer (a strict one where several tie: the answer is then not attained). No admissible v > 0:
    ValidationError. A value given for ``variable`` itself is ignored (one setting serves every
    call).
    """
    v = result.variant(variant)
    if not v.conditions:
        raise ValidationError(f"{result.id} ({v.name}) has no step-size condition")
    variables = v.variables()
    if variable is None:
        if len(variables) > 1:
            raise ValidationError(f"{result.id} ({v.name}) constrains {', '.join(variables)}; "
                                  f"say which with variable=")
        variable = variables[0]
    validate.one_of("variable", variable, variables)
    rtol = validate.number("rtol", rtol, low=1e-15, high=0.1)
    if isinstance(later, str):
        later = (later,)
    later = [validate.one_of("later", u, [x for x in variables if x != variable]) for u in later]
    if is_traced(*constants.values()):
        return _traced_max_step(result, v, variable, constants)
    given = result.check(constants)
    given.pop(variable, None)  # solved for, not used
    both = [u for u in later if u in given]
    if both:
        raise ValidationError(f"{result.id} ({v.name}): {both[0]} is given and named in later=; "
                              f"give it, or choose it later, not both")
    conds = _bounding(result, v, variable, given, later)
    needed = sorted(({nm for c in conds for nm in v.names_of(f"cap:{c.name}")}
                     | {c.variable_name for c in conds}) - {variable})
    result.require(v, given, needed)
    values = {nm: given[nm] for nm in needed}
    names = np.array([c.name + (" (strict)" if c.strict else "")
                      + ("" if c.variable_name == variable else f" (on {c.variable_name})") for c in conds])
    if any(_solved(c, variable) for c in conds):
        best = _solve_implicit(result, v, conds, values, variable, rtol)
        at = {**values, variable: best}
    else:
        best = np.min(_caps(result, v, conds, values), axis=0)
        _admissible(result, v, variable, best > 0, values)
        at = values
    return StepSize(_plain(best), _plain(names[_binding(result, v, conds, at, variable, best)]))


def _bounding(result: Statement, v: Variant, variable: str, given: Mapping[str, np.ndarray],
              later: list[str]) -> list[StepCondition]:
    """The conditions that bound ``variable`` (see :func:`max_step`); a ValidationError where one
    needs a step variable that is not given."""
    others = set(v.variables()) - {variable}
    out = []
    for c in v.conditions:
        uses = set(v.names_of(f"cap:{c.name}"))
        if c.variable_name == variable:
            missing = sorted((uses & others) - set(given))
            if missing:
                u = missing[0]
                raise ValidationError(
                    f"{result.id} ({v.name}): the cap of {c.name}, {c}, depends on the step variable "
                    f"{S.explain(u, result.scope)}; give {u}")
            out.append(c)
        elif variable in uses:
            u = c.variable_name
            if u in given:
                out.append(c)
            elif u not in later:
                raise ValidationError(
                    f"{result.id} ({v.name}): the condition {c.name} on the step variable "
                    f"{S.explain(u, result.scope)}, {c}, involves {variable}: give {u} (the largest "
                    f"{variable} at that {u}), or name {u} in later= (chosen afterwards under its own "
                    f"conditions at the {variable} found)")
    return out


def _traced_max_step(result: Statement, v: Variant, variable: str, constants: Mapping) -> tuple:
    """max_step at traced numbers (the certifier's exact or symbolic evaluation of a claim,
    :mod:`fedbound.theory.certify.trace`): the min of the explicit caps (their supremum where
    strict), substituted; at exact numbers an implicit cap x <= h(x) with h non-increasing in x
    (shown by the sign of sympy's derivative) is the exact root of x - h(x) on [0, h(0)]
    (:func:`_exact_implicit`); other implicit conditions are solved numerically only: Untraceable."""
    conds = _bounding(result, v, variable, constants, [])
    names = sorted({nm for c in conds for nm in v.names_of(f"cap:{c.name}")} - {variable})
    symbols = {S.resolve(nm, result.scope).symbol: constants[nm] for nm in names}
    if any(_solved(c, variable) for c in conds):
        return _exact_implicit(result, v, variable, conds, symbols), None
    cap = sp.Min(*(c.cap for c in conds)) if len(conds) > 1 else conds[0].cap
    return substitute(cap, symbols), None


def _exact_implicit(result: Statement, v: Variant, variable: str, conds: list[StepCondition],
                    symbols: dict) -> np.ndarray:
    """The largest admissible ``variable`` at exact numbers where some caps depend on it: for each
    such condition x <= h(x) with h non-increasing on x > 0, x - h(x) rises strictly from -h(0), so
    the admissible x are (0, r] with r its root (an exact number with proved digits,
    :class:`~fedbound.theory.certify.roots.MonotoneRoot`); the cap is the min of the explicit caps
    and these roots -- what :func:`_solve_implicit`'s bisection approximates."""
    from fedbound.theory.certify import trace as T
    from fedbound.theory.certify.roots import monotone_root

    def refuse(why):
        return Untraceable(f"{result.id} ({v.name}): {variable} is solved numerically (implicit caps: {why})")

    if any(c.variable_name != variable or c.strict for c in conds if _solved(c, variable)):
        raise refuse("a condition on another step variable, or a strict one")
    x = S.resolve(variable, result.scope).symbol
    t = sp.Dummy(variable, positive=True)
    keys = list(symbols)
    arrays = np.broadcast_arrays(*(np.asarray(symbols[k], dtype=object) for k in keys)) if keys else []
    out = np.empty(arrays[0].shape if arrays else (), dtype=object)
    for i in np.ndindex(out.shape):
        env = {k: T.to_sympy(a[i]) for k, a in zip(keys, arrays)}
        if any(val.free_symbols for val in env.values()):
            raise refuse("over symbols")
        caps = []
        for c in conds:
            if not _solved(c, variable):
                caps.append(T.substitute(c.cap, {k: T.array([val]) for k, val in env.items()})[0].e)
                continue
            h = T._rationalized(c.cap).xreplace({**env, x: t})   # numbers combined by sympy, t kept
            if not sp.diff(h, t).is_nonpositive:
                raise refuse(f"{c.name}'s cap is not shown non-increasing in {variable}")
            top = h.subs(t, 0)
            if not (top.is_finite and T.decide(sp.Gt(top, 0))):
                raise refuse(f"{c.name}'s cap at {variable} = 0 is not finite and positive")
            caps.append(monotone_root(sp.Lambda(t, t - h), sp.Integer(0), top))
        out[i] = T.Traced(T._extreme(sp.Min, caps))
    return out


def _solved(c: StepCondition, variable: str) -> bool:
    """Whether the condition is solved numerically for ``variable``: its cap depends on its own
    variable, or it constrains another step variable (its cap then involves ``variable``)."""
    return c.implicit or c.variable_name != variable


def step_order(result: Statement, /, variant: str | None = None,
               variables: Iterable[str] | None = None) -> list[str]:
    """The step variables ``variables`` (default: all the variant's) in an order in which each can
    be chosen after the ones before it: u comes before v where a cap of a condition on v depends on
    u (step variables not in ``variables`` count as given). A cycle (caps of each depending on the
    other) is a ValidationError naming the conditions: give one of the variables."""
    v = result.variant(variant)
    steps = v.variables()
    todo = list(steps if variables is None else
                [validate.one_of("variable", u, steps) for u in variables])
    needs = {u: {w for c in v.conditions if c.variable_name == u
                 for w in v.names_of(f"cap:{c.name}") if w in todo and w != u} for u in todo}
    order: list[str] = []
    while todo:
        ready = [u for u in todo if not needs[u] - set(order)]
        if not ready:
            cycle = [f"{c.name}: {c}" for c in v.conditions if c.variable_name in todo
                     and needs[c.variable_name] & set(v.names_of(f"cap:{c.name}"))]
            raise ValidationError(f"{result.id} ({v.name}): the conditions on {', '.join(todo)} "
                                  f"depend on each other ({'; '.join(cycle)}); give one of them")
        order.append(ready[0])
        todo.remove(ready[0])
    return order


def _caps(result: Statement, v: Variant, conds: list[StepCondition], values: Mapping[str, np.ndarray],
          guard: bool = True) -> np.ndarray:
    return np.stack(np.broadcast_arrays(*(call(result, v, f"cap:{c.name}", values, guard)
                                          for c in conds)))


def _sides(conds: list[StepCondition], values: Mapping[str, np.ndarray], variable: str, x) -> list:
    """The left side of each condition at ``variable`` = x: x itself, or the given value of the
    other step variable the condition constrains."""
    return [x if c.variable_name == variable else values[c.variable_name] for c in conds]


def _binding(result: Statement, v: Variant, conds: list[StepCondition], at: Mapping[str, np.ndarray],
             variable: str, best: np.ndarray) -> np.ndarray:
    """Index of the binding condition at the answer ``best``: the largest left side / cap (NaN,
    e.g. inf/inf where nothing binds, counts as the smallest); of several with that ratio, the
    first strict one (the answer is then a supremum, not attained), else the first."""
    sides, caps = np.broadcast_arrays(np.stack(np.broadcast_arrays(*_sides(conds, at, variable, best))),
                                      _caps(result, v, conds, at))
    with np.errstate(all="ignore"):
        ratio = np.where(np.isnan(sides / caps), -np.inf, sides / caps)
    strict = np.array([c.strict for c in conds]).reshape((-1,) + (1,) * (ratio.ndim - 1))
    return np.argmax(np.where(ratio == np.max(ratio, axis=0), 1 + strict, 0), axis=0)


def _admissible(result: Statement, v: Variant, variable: str, ok: np.ndarray, values) -> None:
    if not np.all(ok):
        i = np.argwhere(~np.asarray(ok))[0] if np.ndim(ok) else ()
        point = ", ".join(f"{nm}={float(np.broadcast_to(x, np.shape(ok))[tuple(i)]):g}"
                          for nm, x in values.items())
        raise ValidationError(f"{result.id} ({v.name}): no admissible {variable} > 0 at {point}")


def _solve_implicit(result: Statement, v: Variant, conds: list[StepCondition], values: dict,
                    variable: str, rtol: float) -> np.ndarray:
    """The implicit solve of :func:`max_step` (bounded loops: about 2000 halvings/doublings and
    60 bisection steps at most)."""
    shape = np.broadcast_shapes(*(np.shape(x) for x in values.values())) if values else ()
    explicit = [c for c in conds if not _solved(c, variable)]

    def admissible(x: np.ndarray) -> np.ndarray:
        """Every condition holds at x (a cap that is NaN at a probe point counts as failing)."""
        caps = _caps(result, v, conds, {**values, variable: x}, guard=False)
        ok = [RELATIONS[c.relation](side, cap)
              for c, side, cap in zip(conds, _sides(conds, values, variable, x), caps)]
        return np.logical_and.reduce(ok)

    top = np.broadcast_to(np.min(_caps(result, v, explicit, values), axis=0), shape) \
        if explicit else np.full(shape, np.inf)
    capped = np.isfinite(top) & (top > 0)   # a finite explicit cap bounds the search
    hi = np.where(capped, top, 1.0)
    ok = admissible(hi)
    for _ in range(2000):   # without a finite cap: double while admissible
        grow = ok & ~capped & (hi < _HUGE)
        if not np.any(grow):
            break
        hi = np.where(grow, hi * 2, hi)
        ok = admissible(hi)
    done = ok  # the explicit cap itself is admissible, or no cap binds up to 2^1000 (inf below)
    lo = hi / 2
    for _ in range(2000):
        shrink = ~done & ~admissible(lo) & (lo > _TINY)
        if not np.any(shrink):
            break
        hi = np.where(shrink, lo, hi)
        lo = np.where(shrink, lo / 2, lo)
    _admissible(result, v, variable, done | admissible(lo), values)
    for _ in range(200):
        open_ = ~done & (hi > lo * (1 + rtol))
        if not np.any(open_):
            break
        mid = lo + (hi - lo) / 2
        good = admissible(mid)
        lo = np.where(open_ & good, mid, lo)
        hi = np.where(open_ & ~good, mid, hi)
    grown_out = done & (hi >= _HUGE) & ~capped
    return np.where(grown_out, np.inf, np.where(done, hi, lo))


def rounds_to_eps(result: Statement, eps: Positive | PositiveArray, /, variant: str | None = None,
                  t_max: RoundsLimit = ROUNDS_MAX, **constants) -> float | np.ndarray:
    """Smallest integer value of the result's rounds variable (``result.rounds``: T or R) >= 1
    with bound <= eps (``inf`` if none below ``t_max``); eps must be finite and > 0. A Python
    float for scalar eps and constants, an array of the broadcast shape otherwise.

    Assumes the bound is non-increasing in the rounds (true of every rate bound here);
    vectorized exponential search followed by bisection on integers (at most about
    2 log2(t_max) bound evaluations; above 2^53, where floats no longer hold every integer, the
    answer is the smallest representable value found).
    """
    t = result.rounds
    if isinstance(eps, (list, tuple)) or (isinstance(eps, np.ndarray) and eps.ndim):
        eps = validate.real_array("eps", eps)
        if np.any(eps <= 0):
            raise ValidationError(f"eps must be > 0, got {eps[eps <= 0].flat[0]:g}")
    else:
        eps = validate.number("eps", eps, low=0.0, low_open=True)
    t_max = validate.number("t_max", t_max, low=1.0, high=2.0 ** 1000)
    if t not in result.constants(variant):
        raise ValidationError(f"{result.id} does not depend on {t}; no rounds-to-epsilon")
    if t in constants:
        raise ValidationError(f"rounds_to_eps solves for {t}; do not give it")
    result.check(constants)

    def f(x):
        return bound(result, variant, **{**constants, t: x})

    shape = np.broadcast_shapes(np.shape(eps), *(np.shape(c) for c in constants.values()))
    lo = np.zeros(shape)  # bound(lo) > eps or lo = 0
    hi = np.ones(shape)
    done = f(hi) <= eps
    for _ in range(1100):   # doubling up to t_max <= 2^1000
        if np.all(done) or np.max(hi) >= t_max:
            break
        lo = np.where(done, lo, hi)
        hi = np.where(done, hi, hi * 2)
        done = f(hi) <= eps
    reached = done
    hi = np.where(done, hi, lo + 1)
    for _ in range(1100):   # integer bisection; stops where floats no longer split the gap
        mid = np.floor((lo + hi) / 2)
        open_ = (hi - lo > 1) & (mid > lo) & (mid < hi)
        if not np.any(open_):
            break
        ok = f(np.where(open_, np.maximum(mid, 1), hi)) <= eps
        hi = np.where(open_ & ok, mid, hi)
        lo = np.where(open_ & ~ok, mid, lo)
    return _plain(np.where(reached, hi, np.inf))


__all__ = ["IMPLICIT_RTOL", "ROUNDS_MAX", "StepSize", "max_step", "step_order", "rounds_to_eps"]
