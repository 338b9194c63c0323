r"""One call that checks an algorithm against a theorem: :func:`assert_matches_theory` runs the
algorithm over Monte-Carlo seeds, maps the run to the theorem's constants through the paper's
adapter, and compares the mean of the quantity the theorem bounds (with its confidence interval)
with the bound at every round, and its fitted rate with the rate the result states.

The measured quantity is what the result bounds, its :class:`~fedbound.theory.statement.Measure`
(a user's result declares it with ``measure=``), or the ``measure`` given by short name (index t =
the global model after t rounds, 0 = the initial model):

==================  =================================================================================
measure             the value compared with the bound at T = 1 .. rounds
==================  =================================================================================
``loss_gap``        :math:`f(x^T) - f^\star` after T rounds (column ``loss_gap[T]``)
``dist2``           :math:`\|x^T - x^\star\|^2` after T rounds (column ``dist2[T]``)
``grad_norm2``      :math:`\|\nabla f(x^T)\|^2` after T rounds (column ``grad_norm2[T]``)
``avg_loss_gap``    :math:`(1/T)\sum_{t<T} (f(x^t) - f^\star)`: the running average over the models
                    at the start of each of the T rounds (columns 0 .. T-1)
``avg_dist2``       :math:`(1/T)\sum_{t<T} \|x^t - x^\star\|^2`
``avg_grad_norm2``  :math:`(1/T)\sum_{t<T} \|\nabla f(x^t)\|^2`
``min_...``         :math:`\min_{t<T}` of the per-round means (e.g. ``min_grad_norm2``)
==================  =================================================================================

The runs, the measure and the bound at every T come from
:func:`fedbound.verify.theorem.compare` (the engine of ``fedbound verify``), so a CI test and the
command measure the same thing.

The expectation of the theorem is the mean over seeds, per seed first (a running average is
averaged per seed), with its Student-t interval (:func:`fedbound.stats.mean_ci`). For the
built-in results: ``sdgt.thm3`` bounds the Lyapunov value :math:`\mathcal{L}_{T+1} \ge
E\|\bar x_g^{T+1} - x^\star\|^2` (``dist2``, seed 003 (98)); ``sdgt.thm1`` (76) and
``fednova.thm1`` (97) bound :math:`(1/T)\sum_{t<T} E\|\nabla f\|^2` (``avg_grad_norm2``; FedNova's
of the surrogate :math:`\tilde F = \sum_i w_i F_i`, which is the task's objective when w = p, as
for FedNova itself or equal local steps); ``sdgt.thm2`` (89) bounds :math:`(1/T)\sum_t
\mathcal{E}_t` (``avg_loss_gap``). SD-GT's results are about :math:`\bar x_g = E_{C'}[x_g]`, the
mean over the sampling ([L238-L240]); with partial participation the mean of
:math:`\|x_g - x^\star\|^2` is at least :math:`\|\bar x_g - x^\star\|^2` (Jensen), so a pass is
evidence for the theorem, and a failure may be the sampling's variance rather than the bound.

The rate: where the variant has an extra ``rate`` (a per-round contraction of the bound's
transient, SD-GT Theorem 3's :math:`1 - \mu K\gamma/4`), the measured contraction of a
last-iterate measure must be at most that (:func:`~fedbound.testing.assert_linear_rate`);
otherwise, where the bound has terms decaying as powers of the rounds
(:meth:`fedbound.theory.Result.rate_exponents`), the exponent of the slowest of them that does not
vanish at the run's constants (the one the bound's own slope approaches at T = 2^40) is compared
with the exponent fitted over the last half of the rounds (:func:`~fedbound.testing.assert_power_rate`).
A rate is checked only where the bound tends to 0 (its value at T = 2^40 at most
:data:`FLOOR_RTOL` x its value at the last round: a bound with a noise floor states convergence to
the floor, not a rate of the measurement) and over at least 4 rounds; otherwise, and where the
result states no rate, :attr:`TheoryMatch.rate_note` says why none was checked.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from fedbound import validate
from fedbound.algorithms import registry
from fedbound.display import box, brief, details, fields, plot, shown, table
from fedbound.errors import InputTypeError, UnknownNameError, ValidationError, require
from fedbound.network import Network
from fedbound.readout import ratio_words
from fedbound.stats import Estimate
from fedbound.tasks import Task
from fedbound.testing.assertions import _bound_verdict, assert_linear_rate, assert_power_rate
from fedbound.theory import adapters, get
from fedbound.theory import symbols as S
from fedbound.theory.result import Result
from fedbound.theory.statement import MEASURE_NAMES, Measure
from fedbound.verify.check import Check
from fedbound.verify.theorem import compare
from fedbound.verify.rates import SlopeFit

#: the quantities a bound is compared with, by short name (module doc)
MEASURES = MEASURE_NAMES
#: a bound whose value at T = 2^40 is above this fraction of its value at the last round tends to
#: a floor: no rate is checked
FLOOR_RTOL = 1e-3
#: the far rounds at which the bound's limit and slope are read
FAR_ROUNDS = np.array([2.0 ** 40, 2.0 ** 41])


@dataclass(frozen=True)
class TheoryMatch:
    """What :func:`assert_matches_theory` measured and compared: the result and variant, the
    measure, the rounds T = 1..R, the constants the bound was evaluated at, the measured
    :class:`~fedbound.stats.Estimate` and the bound per round, the bound's
    :class:`~fedbound.verify.check.Check`, and the rate checked (``rate``: "linear", "power" or
    "" with ``rate_note`` saying why none), the predicted factor or exponent and the fit."""

    result: str
    variant: str
    measure: str
    rounds: np.ndarray
    constants: dict
    measured: Estimate
    bound: np.ndarray
    check: Check
    rate: str
    predicted_rate: float | None
    fit: SlopeFit | None
    rate_note: str

    def summary(self) -> str:
        """One line per comparison."""
        lines = [f"{self.result} [{self.variant}]: {self.measure} over {self.measured.samples} seeds, "
                 f"T = 1..{self.rounds[-1]}: bound {self.check.status} (largest measured/predicted "
                 f"{self.check.ratio:.4g} at measured {self.check.measured:.6g}, predicted "
                 f"{self.check.predicted:.6g})"]
        if self.rate == "linear":
            lines.append(f"  rate: measured contraction {self.fit.factor:.8g} <= predicted "
                         f"{self.predicted_rate:.8g}")
        elif self.rate == "power":
            lines.append(f"  rate: measured exponent {self.fit.slope:.4g} <= predicted "
                         f"{self.predicted_rate:.4g}")
        else:
            lines.append(f"  rate: not checked ({self.rate_note})")
        return "\n".join(lines)

    # -- shown to a reader (:mod:`fedbound.display`) ---------------------------------------------
    def __repr__(self) -> str:
        return brief("TheoryMatch", f"{self.result} [{self.variant}]", measure=self.measure,
                     rounds=int(self.rounds[-1]), seeds=self.measured.samples, bound=self.check.status,
                     rate=self.rate or "not checked")

    def _repr_html_(self) -> str:
        """The measured mean with its interval against the bound at every round (a log axis where
        they span decades), the verdict of the bound with the ratio in words, the rate checked."""
        mean = np.asarray(self.measured.mean, dtype=float)
        rows = [("bound", f"{self.check.status}: largest measured/predicted {shown(self.check.ratio)} "
                          f"({ratio_words(self.check.ratio)}), at measured {shown(self.check.measured)}, "
                          f"predicted {shown(self.check.predicted)}"),
                ("rate", self.summary().splitlines()[1].strip().removeprefix("rate: ")),
                ("interval", self.measured.describe())]
        parts = [plot(self.rounds, {"measured": mean, "bound": np.asarray(self.bound, dtype=float)},
                      bands={"measured": (self.measured.low, self.measured.high)}, xlabel="T",
                      ylabel=self.measure),
                 fields(rows),
                 details(f"{len(self.constants)} constants", [table(["constant", "value"],
                                                                   [[k, v] for k, v in self.constants.items()])])]
        return box(f"{self.result} [{self.variant}] against runs", parts, subtitle=self.measure).text


def _runner(algorithm, task, network, options: dict, adapter):
    """(make(seed) -> Algorithm, name, checked options, adapter) for a registered name or a factory."""
    if isinstance(algorithm, str):
        checked = registry.get(algorithm).check(options)
        return (lambda seed: registry.build(algorithm, task, network, seed=seed, **options)), algorithm, \
            checked, adapter or adapters.constants
    if not callable(algorithm):
        raise InputTypeError(f"algorithm must be a registered name (`fedbound list algorithms`) or a "
                             f"factory seed -> algorithm, got {type(algorithm).__name__}")
    require(adapter is not None, "with a factory for algorithm, give adapter=(task, network, name, "
                                 "options) -> constants: the papers' adapters dispatch on a registered name")
    return algorithm, getattr(algorithm(0), "name", "algorithm"), options, adapter


def _mapping(name: str, value) -> dict:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputTypeError(f"{name} must be a mapping (dict), got {type(value).__name__}")
    return dict(value)


def _predicted_rate(result: Result, variant: str, constants: dict, bound: np.ndarray, extras: dict,
                    measure: Measure) -> tuple[str, float | None, str]:
    """("linear" | "power" | "", the predicted factor or exponent, why none) (module doc)."""
    v = result.variant(variant)
    if bound.size < 4:
        return "", None, f"a rate needs at least 4 rounds, got {bound.size}"
    far = np.asarray(result.bound(variant, **constants, **{result.rounds: FAR_ROUNDS}), dtype=float)
    horizon = float(bound[-1])
    if not np.isfinite(horizon):
        return "", None, f"the bound is {horizon} at the last round"
    if not far[0] <= FLOOR_RTOL * horizon:
        return "", None, (f"the bound tends to a floor ({far[0]:.4g} at {result.rounds} = 2^40, "
                          f"{horizon:.4g} at the last round), not to 0")
    if "rate" in v.extras:
        if measure.over != "last":
            return "", None, f"a running {measure.over} ({measure.name}) does not contract at the per-round rate"
        return "linear", float(np.asarray(extras["rate"], dtype=float).flat[0]), ""
    if v.bound is None:
        return "", None, f"{result.id} ({variant}) states no rate (no extra 'rate', no bound formula)"
    exponents = [float(e) for e in result.rate_exponents(variant).values()
                 if e != "geometric" and float(e) < 0]
    if not exponents:
        return "", None, (f"the bound of {result.id} ({variant}) has no term decaying as a power of "
                          f"{result.rounds}")
    if far[0] == 0.0:
        return "", None, "the bound vanishes faster than any power of the rounds and states no factor"
    slope = float(np.log2(far[1] / far[0]))
    return "power", min(exponents, key=lambda e: abs(e - slope)), ""


def _check_derived(result: Result, name: str, value, why: Callable[[], str]) -> None:
    """The constant ``name`` as the adapter derived it, checked against ``result``'s domain alone:
    outside it, a ValidationError naming the adapter's value, why it came out so and how to supply
    another (``why()``), instead of only the domain."""
    try:
        result.check({name: value})
    except ValidationError as exc:
        if isinstance(exc, UnknownNameError):
            return                      # a constant of the paper this result does not take
        raise ValidationError(f"{result.id}: the adapter derived {name} = {validate.show(value)} from "
                              f"the run, outside its domain ({exc}): {why()}") from None


def assert_matches_theory(algorithm: str | Callable, result: str | Result, task: Task,
                          network: Network | None = None, *, measure: str | None = None,
                          options: Mapping | None = None, rounds: int = 100, seeds: int | Sequence[int] = 10,
                          variant: str | None = None, constants: Mapping | None = None,
                          adapter: Callable | None = None, confidence: float = 0.95,
                          rtol: float = 1e-10, atol: float = 0.0, rate_rtol: float = 1e-10,
                          rate_atol: float = 0.05, check_rate: bool = True,
                          progress: bool = False) -> TheoryMatch:
    r"""Assert that ``algorithm`` on ``task`` (and ``network``) behaves as ``result`` predicts: its
    bound holds for the Monte-Carlo mean of ``measure`` at every T = 1..``rounds``, with the whole
    confidence interval, and the measured rate is at least the stated one (module doc).

    * ``algorithm``: a registered name (``fedbound list algorithms``) run with ``options`` (the
      registry's option names), or a factory ``seed -> Algorithm`` (then ``adapter`` is required
      and receives ``options`` as given);
    * ``result``: a result id or a :class:`~fedbound.theory.Result` (a user's own, too), and its
      ``variant`` (default: the result's); ``measure``: a short name of the module doc, default
      the result's own :class:`~fedbound.theory.statement.Measure`;
    * ``seeds``: a number R (seeds 0..R-1) or a list; seeds run batched where the algorithm allows
      (:func:`fedbound.sweep.runs`);
    * ``adapter(task, network, name, options) -> dict``: the run's constants in the paper's
      notation (default :func:`fedbound.theory.adapters.constants`, the adapter of the paper that
      covers the registered name); ``constants`` adds or overrides values the run does not fix
      (initial values such as SD-GT's Lyap1 or FedNova's Delta, a paper's absolute constants); the
      rounds variable (T or R) is set from ``rounds`` and may not be given; ``name`` is the
      registered name, or the built algorithm's ``name`` for a factory. With the papers' adapters,
      a constant given is checked against the task where it can compute it
      (:func:`fedbound.theory.adapters.check_given`: FedNova's kappa2 at least the task's at that
      beta2), and a derived constant outside the result's domain is an error saying why it came
      out so and how to supply it (:func:`fedbound.theory.adapters.explain`);
    * tolerances: ``rtol``, ``atol`` of the bound (:func:`~fedbound.testing.assert_bound_held`;
      defaults 1e-10 and 0), ``rate_rtol`` of a linear rate (1e-10), ``rate_atol`` of a power
      exponent (0.05), ``confidence`` of every interval (0.95); ``check_rate=False`` checks the
      bound only.

    The run must satisfy the result's step-size conditions (a ValidationError naming the failing
    condition otherwise: the theorem says nothing about that run). Returns a :class:`TheoryMatch`;
    a failure is an AssertionError saying the measured and the predicted values and where.
    """
    result = get(result) if isinstance(result, str) else validate.instance(
        "result", result, Result, "a fedbound Result or a result id")
    v = result.variant(variant)
    validate.instance("task", task, Task, "a fedbound Task")
    if network is not None:
        validate.instance("network", network, Network, "a fedbound Network or None")
    if measure is None:
        require(result.measure is not None, f"{result.id} declares no measure (what it bounds in terms "
                                            f"of a run): give measure= ({', '.join(MEASURES)})")
        measure = result.measure
    else:
        measure = Measure.named(measure)
    rounds = validate.integer("rounds", rounds, low=1, high=1_000_000)
    seeds = validate.seeds(seeds)
    confidence = validate.number("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    rtol, atol, rate_rtol, rate_atol = (validate.number(name, value, low=0.0) for name, value in (
        ("rtol", rtol), ("atol", atol), ("rate_rtol", rate_rtol), ("rate_atol", rate_atol)))
    check_rate = validate.boolean("check_rate", check_rate)
    progress = validate.boolean("progress", progress)
    options, given = _mapping("options", options), _mapping("constants", constants)
    if adapter is not None and not callable(adapter):
        raise InputTypeError(f"adapter must be a function (task, network, name, options) -> constants, "
                             f"got {type(adapter).__name__}")
    require(result.rounds not in given, f"{result.rounds} is set from rounds=, not in constants=")
    own_adapter = adapter is None and isinstance(algorithm, str)
    make, name, checked, adapter = _runner(algorithm, task, network, options, adapter)
    derived = adapter(task, network, name, checked)
    if own_adapter:   # the user's constants checked against the task where it can compute them
        derived.update(adapters.check_given(task, network, name, checked, given))
    for constant, value in derived.items():
        if constant not in given:
            _check_derived(result, constant, value, lambda: adapters.explain(
                task, network, name, checked, constant, value) if own_adapter else
                "the adapter= function derived it; pass the value in constants=")
    k = {**derived, **given}
    prepared = result.check(k)
    missing = [nm for nm in v.constants() if nm not in prepared and nm != result.rounds]
    require(not missing, f"{result.id} ({v.name}) needs "
                         f"{', '.join(S.explain(nm, result.scope) for nm in missing)}, which the adapter "
                         f"does not give: pass it in constants=")
    T = np.arange(1, rounds + 1)
    ev = result.evaluate(v.name, **k, **{result.rounds: T})
    require(ev.bound is not None, f"{result.id} ({v.name}) states no bound to compare with")
    for c in v.conditions:
        require(c.name in ev.conditions_hold, f"{result.id} ({v.name}): the run's "
                                              f"{S.explain(c.variable_name, result.scope)} is not known: "
                                              f"the adapter does not give it")
        if not np.all(ev.conditions_hold[c.name]):
            raise ValidationError(
                f"{result.id} ({v.name}) does not apply to this run: its condition {c.name}, {c}, fails at "
                f"{c.variable_name} = {float(np.ravel(prepared[c.variable_name])[0]):g} (cap "
                f"{float(np.ravel(ev.caps[c.name])[0]):g})")
    comparison = compare(result, make, k, T, seeds, variants=[v.name], measure=measure,
                         confidence=confidence, progress=progress)
    measured, bound = comparison.measured, comparison.bound(v.name)
    context = f"{name} against {result.id} [{v.name}], {measure.name} over {len(seeds)} seeds"
    check, message = _bound_verdict(measured, bound, rtol, atol, f"{context}: bound",
                                    lambda i: f"T = {T[i[0]]}")
    assert check.holds, message
    kind, predicted, note = (_predicted_rate(result, v.name, k, bound, ev.extras, measure) if check_rate
                             else ("", None, "check_rate=False"))
    fit = None
    try:
        if kind == "linear":
            fit = assert_linear_rate(measured.mean, at_most=predicted, rtol=rate_rtol, confidence=confidence)
        elif kind == "power":
            tail = T >= (rounds + 1) // 2
            fit = assert_power_rate(measured.mean[tail], at_most=predicted, rounds=T[tail], atol=rate_atol,
                                    confidence=confidence)
    except AssertionError as exc:
        raise AssertionError(f"{context}: {exc}") from None
    return TheoryMatch(result.id, v.name, measure.name, T, k, measured, bound, check, kind, predicted,
                       fit, note)


__all__ = ["MEASURES", "FLOOR_RTOL", "TheoryMatch", "assert_matches_theory"]
