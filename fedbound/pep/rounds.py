r"""A federated round described in the algorithms' vocabulary, and the certified method built from
it (issue 21, item 5): a user certifies a method of their own in a few lines, without writing
against :mod:`fedbound.pep.env`.

:class:`RoundSpec` names the parts of a round with the option names of
:mod:`fedbound.vocabulary` (``lr``, ``local_steps``, ``proximal_mu``, ``momentum``, ``lr_decay``,
``server_lr``, ``server_momentum``, the aggregation ``mean`` / ``normalized``) and runs R rounds on
any backend (:meth:`RoundSpec.run`). Round t, from the server model x_t (x_0 = x0), all n clients
taking part with the weights p_i of the objective (1/n here):

1. client i starts at y_0 = x_t, u_0 = 0 and takes tau_i = ``local_steps`` (one count, or one per
   client) steps of the local solver of :mod:`fedbound.local_solver` (FedNova's linear solvers, seed
   001 (4) [L93], App. B [L389-L439]):

       d_k = grad f_i(y_k) [- c_i + c] + proximal_mu (y_k - x_t),
       u_{k+1} = momentum u_k + d_k,        y_{k+1} = y_k - lr lr_decay^k u_{k+1},

   plain GD (proximal_mu = momentum = 0, lr_decay = 1), FedProx's proximal step (proximal_mu > 0;
   seed 001 (31)),
   heavy-ball momentum with the buffer reset every round, a decayed step, or any combination; the
   bracket only with control variates (step 3);
2. aggregation: ``mean`` a_t = sum_i p_i y_i (FedAvg, seed 001 (2) [L52]) or ``normalized``
   (FedNova, seed 001 (12) [L198-L202]) a_t = x_t - tau_eff sum_i p_i (x_t - y_i)/||a_i||_1, with
   a_i the solver's accumulation vector over tau_i steps
   (:meth:`fedbound.local_solver.LocalSolver.accumulation`) and ``tau_eff`` the policy of
   :mod:`fedbound.algorithms.federated.aggregation`: "accumulation" sum_i p_i ||a_i||_1 (App. H
   [L961]), "steps" sum_i p_i tau_i, or a number;
3. control variates (``control_variates``: SCAFFOLD option II, Karimireddy et al., ICML 2020,
   Alg. 1, as :mod:`fedbound.algorithms.federated.control_variates`), starting at c_i = 0 ("zero")
   or c_i = grad f_i(x0) ("grad"): c_i <- c_i - c + (x_t - y_i)/(tau_i lr), c <- (1/n) sum_i c_i;
4. server: the momentum transform of :func:`fedbound.algorithms.optim.server.momentum` (FedAvgM,
   Hsu et al. 2019) on the pseudo-gradient g_t = x_t - a_t, with beta = ``server_momentum``:

       v_{t+1} = beta v_t + g_t (v_0 = 0),   x_{t+1} = x_t - server_lr v_{t+1}
       (``nesterov``: x_{t+1} = x_t - server_lr (g_t + beta v_{t+1})),

   which is x_{t+1} = a_t at server_lr = 1, beta = 0 (plain averaging, computed as such).

Each numeric field is a number (fixed), the name of an option of the method (declared with the
field's range, a default and examples: :data:`FIELDS`), or a :class:`fedbound.registry.Option`
(one's own declaration, e.g. another default; the built-ins pass theirs). ``control_variates`` is
None, "zero", "grad" or a choice Option over those two.

:func:`round_method` builds the registered :class:`~fedbound.pep.method.Method` of a round: n
clients (option ``n``, or the length of per-client local steps), each f_i L-smooth and
mu-strongly convex (convex at mu = 0), ||x0 - x*||^2 <= 1 and (1/n) sum_i ||grad f_i(x*)||^2 <=
zeta^2 at the minimizer x* of f = (1/n) sum_i f_i, R rounds, metric ||x_R - x*||^2 (the class and
metric of FedAvg, :mod:`fedbound.pep.methods.local`); conditions mu < L, lr L <= 4 and lr (1 +
mu/L) L <= 4 (:data:`fedbound.pep.methods.common.MAX_STEP_L`); the lower-bound family h in
[mu, L], g = 0 at zeta = 0; the theory a callable cfg -> Theory or a
:class:`~fedbound.pep.method.ResultTheory` (a registered result's bound at constants read from the
options). Its options: n, the local steps', rounds, the lr's, L, mu, zeta, then the other fields' in
field order. FedAvg, FedProx and SCAFFOLD are such methods (:mod:`fedbound.pep.methods.local`,
:mod:`fedbound.pep.methods.scaffold`); FedNova's round is a RoundSpec in another class.

FedAvg with server-side Nesterov momentum, registered with a theorem of one's own (a result
``"mine.thm1"`` with constants gamma, K, beta and T; the round's options are named by the one
vocabulary, ``lr``, ``local_steps`` and ``rounds``, and the theory maps them to the theorem's)::

    from fedbound.pep import RoundSpec, ResultTheory, certify, register_round_method

    register_round_method(
        "fedavg-nesterov", "FedAvg with Nesterov server momentum",
        RoundSpec(server_momentum="beta", nesterov=True),
        theory=ResultTheory("mine.thm1", {"lr": "gamma", "local_steps": "K", "beta": "beta",
                                          "rounds": "T"}))
    certify("fedavg-nesterov", local_steps=2, rounds=2, beta=0.5, zeta=0.3)

>>> m = round_method("fedavg-nesterov", "FedAvg with Nesterov server momentum",
...                  RoundSpec(server_momentum="beta", nesterov=True))
>>> [o.name for o in m.options]
['n', 'local_steps', 'rounds', 'lr', 'L', 'mu', 'zeta', 'beta']
>>> m.config(local_steps=2, beta=0.9)["beta"], m.setting(m.config())
(0.9, {'n': 2, 'L': 1.0, 'mu': 0.1})
>>> nova = round_method("nova", "FedNova's round", RoundSpec(local_steps=(1, 3), aggregation="normalized"))
>>> [o.name for o in nova.options], nova.setting(nova.config())["n"]
(['rounds', 'lr', 'L', 'mu', 'zeta'], 2)
>>> RoundSpec(server_momentum="mu")
Traceback (most recent call last):
...
fedbound.errors.ValidationError: RoundSpec.server_momentum: 'mu' is the setting's option (strong convexity); ...
"""
from __future__ import annotations


import numbers
from dataclasses import InitVar, dataclass, replace
from typing import Callable

from fedbound import guard, validate
from fedbound.errors import InputTypeError, ValidationError, require
from fedbound.local_solver import LocalSolver
from fedbound.argtypes import Count, NonNegativeInt
from fedbound.pep.env import Env, combine, mean
from fedbound.pep.method import PEP_METHODS, Method, ResultTheory, Theory
from fedbound.deprecation import deprecated
from fedbound.pep.methods.common import (LOCAL_STEPS, LR, MU, N_CLIENTS, ROUNDS, ZETA, L, below_L, family,
                                         start_and_heterogeneity, step_check)
from fedbound.registry import Option, integer_option, number_option


@dataclass(frozen=True)
class Field:
    """A numeric field of :class:`RoundSpec`: its range (a fixed value is checked against it), and
    the declaration of the option made for it when it is given as a name (``help``, ``default``,
    ``examples``)."""

    help: str
    low: float
    high: float
    low_open: bool
    high_open: bool
    default: float
    examples: tuple
    integer: bool = False

    def check(self, label: str, value: float) -> float | int:
        if self.integer:
            return validate.integer(label, value, low=int(self.low), high=int(self.high))
        return validate.number(label, value, low=self.low, high=self.high, low_open=self.low_open,
                               high_open=self.high_open)

    def option(self, name: str) -> Option:
        """The option ``name`` of this field."""
        text = f"{self.help} (default {self.default:g})"
        if self.integer:
            return integer_option(name, text, low=int(self.low), high=int(self.high), default=self.default,
                                  examples=self.examples)
        return number_option(name, text, low=self.low, high=self.high, low_open=self.low_open,
                             high_open=self.high_open, default=self.default, examples=self.examples)


#: the numeric fields of a round, by their names in :mod:`fedbound.algorithms.options`
FIELDS: dict[str, Field] = {
    "lr": Field("client step size lr", 0.0, 1e6, True, False, 1.0, (0.5, 1.0)),
    "local_steps": Field("local steps per round", 1, 64, False, False, 4, (1, 2), integer=True),
    "proximal_mu": Field("proximal coefficient (FedProx's mu)", 0.0, 1e6, False, False, 0.1, (0.0, 0.5)),
    "momentum": Field("client heavy-ball momentum, buffer reset every round", 0.0, 1.0, False, True, 0.5,
                      (0.0, 0.5)),
    "lr_decay": Field("per-step decay of the client step", 0.0, 1.0, True, False, 0.9, (0.5, 1.0)),
    "server_lr": Field("server learning rate", 0.0, 10.0, True, False, 1.0, (0.5, 1.0)),
    "server_momentum": Field("server momentum", 0.0, 1.0, False, True, 0.5, (0.0, 0.5)),
}
#: the options of the setting, which the round's fields cannot name
SETTING = {"n": "the number of clients", "rounds": "the number of rounds", "R": "the number of rounds",
           "L": "smoothness",
           "mu": "strong convexity", "zeta": "heterogeneity at x*"}
AGGREGATIONS = ("mean", "normalized")
TAU_EFF_POLICIES = ("accumulation", "steps")
CONTROL_VARIATES = ("zero", "grad")


@dataclass(frozen=True)
class RoundSpec:
    """One federated round (module doc). The defaults are FedAvg's round: the options ``lr`` and
    ``local_steps`` of the built-in methods, no proximal term, no momentum, plain averaging.
    ``mu=`` is the old name of ``proximal_mu=`` (it warns)."""

    lr: float | str | Option = LR
    local_steps: int | tuple[int, ...] | str | Option = LOCAL_STEPS
    proximal_mu: float | str | Option = 0.0
    momentum: float | str | Option = 0.0
    lr_decay: float | str | Option = 1.0
    server_lr: float | str | Option = 1.0
    server_momentum: float | str | Option = 0.0
    nesterov: bool = False
    aggregation: str = "mean"
    tau_eff: str | float = "accumulation"
    control_variates: str | Option | None = None
    mu: InitVar[float | str | Option | None] = None

    def __post_init__(self, mu=None):
        if mu is not None:
            require(self.proximal_mu == 0.0, "RoundSpec: give proximal_mu or its old name mu, not both")
            deprecated("RoundSpec(mu=...)", "proximal_mu=")
            object.__setattr__(self, "proximal_mu", mu)
        for name, spec in FIELDS.items():
            if self.declared(name) is None:
                object.__setattr__(self, name, self._fixed(name, spec, getattr(self, name)))
        named: dict[str, str] = {}
        for name in (*FIELDS, "control_variates"):
            option = self.declared(name)
            if option is None:
                continue
            require(option.isidentifier(), f"RoundSpec.{name}: an option name must be an identifier, "
                                           f"got {option!r}")
            require(option not in SETTING, f"RoundSpec.{name}: {option!r} is the setting's option "
                                           f"({SETTING.get(option)}); give the {name} option another name")
            require(option not in named, f"RoundSpec.{name}: the option {option!r} is RoundSpec."
                                         f"{named.get(option)}'s already")
            value = getattr(self, name)
            require(not isinstance(value, Option) or value.default is not None,
                    f"RoundSpec.{name}: the option {option!r} needs a default")
            named[option] = name
        validate.boolean("RoundSpec.nesterov", self.nesterov)
        require(not self.nesterov or self.server_momentum != 0.0,
                "RoundSpec.nesterov needs server momentum (Nesterov without it is the plain server step)")
        validate.one_of("RoundSpec.aggregation", self.aggregation, AGGREGATIONS)
        if self.aggregation == "mean":
            require(isinstance(self.tau_eff, str) and self.tau_eff == "accumulation",
                    f"RoundSpec.tau_eff applies to the normalized aggregation only, got "
                    f"{validate.show(self.tau_eff)} with mean")
        elif isinstance(self.tau_eff, str):
            validate.one_of("RoundSpec.tau_eff", self.tau_eff, TAU_EFF_POLICIES)
        else:
            object.__setattr__(self, "tau_eff", validate.number("RoundSpec.tau_eff", self.tau_eff, low=0.0,
                                                                low_open=True))
        cv = self.control_variates
        if isinstance(cv, str):
            validate.one_of("RoundSpec.control_variates", cv, CONTROL_VARIATES)
        elif cv is not None and not isinstance(cv, Option):
            raise InputTypeError(f"RoundSpec.control_variates must be None, one of "
                                 f"{', '.join(CONTROL_VARIATES)} or an Option, got {validate.show(cv)}")

    @staticmethod
    def _fixed(name: str, spec: Field, value):
        if name == "local_steps" and isinstance(value, (tuple, list)):
            require(len(value) >= 1, "RoundSpec.local_steps must hold at least one count")
            return tuple(spec.check(f"RoundSpec.local_steps[{i}]", v) for i, v in enumerate(value))
        if not isinstance(value, numbers.Real):
            raise InputTypeError(f"RoundSpec.{name} must be a number, the name of an option or a "
                                 f"fedbound.registry.Option, got {validate.show(value)}")
        return spec.check(f"RoundSpec.{name}", value)

    # ---- the method's options ------------------------------------------------------------------
    def declared(self, name: str) -> str | None:
        """The option that field ``name`` declares: its name, or None for a fixed value."""
        validate.one_of("field", name, (*FIELDS, "control_variates"))
        value = getattr(self, name)
        return value.name if isinstance(value, Option) else \
            value if isinstance(value, str) and name in FIELDS else None

    def options(self) -> dict[str, Option]:
        """field -> the option it declares (the fields given as names or Options), in field order."""
        out = {}
        for name in (*FIELDS, "control_variates"):
            value = getattr(self, name)
            if isinstance(value, Option):
                out[name] = value
            elif name in FIELDS and isinstance(value, str):
                out[name] = FIELDS[name].option(value)
        return out

    @property
    def per_client(self) -> bool:
        """Whether the local steps are one count per client (then n is their number)."""
        steps = self.local_steps
        if isinstance(steps, Option):
            steps = steps.check(steps.name, steps.default)
        return isinstance(steps, (tuple, list))

    def value(self, name: str, cfg: dict):
        """The field ``name`` at the options ``cfg``."""
        option = self.declared(name)
        require(option is None or option in cfg, f"cfg has no value for the option {option!r} of the {name}")
        return getattr(self, name) if option is None else cfg[option]

    def steps(self, cfg: dict, n: Count | None = None) -> list[int]:
        """tau_i of every client; ``n`` the number of clients where known (a list must have n)."""
        steps, label = self.value("local_steps", cfg), self.declared("local_steps") or "local_steps"
        if isinstance(steps, (tuple, list)):
            require(n is None or len(steps) == n, f"{label} must give one count for each of the n={n} "
                                                  f"clients, got {len(steps)}")
            return list(steps)
        require(n is not None, f"{label} must give one count per client, got {steps}")
        return [steps] * n

    def clients(self, cfg: dict) -> int:
        """n: the option ``n``, or the number of per-client local steps."""
        return cfg["n"] if not self.per_client else len(self.steps(cfg))

    # ---- the algorithm -------------------------------------------------------------------------
    def run(self, env: Env, cfg: dict, rounds: NonNegativeInt) -> list:
        """[x_0, ..., x_R]: the server models of ``rounds`` rounds from env.x0 (module doc)."""
        lr, mu, momentum, decay, server_lr, beta = (self.value(f, cfg) for f in (
            "lr", "proximal_mu", "momentum", "lr_decay", "server_lr", "server_momentum"))
        steps = self.steps(cfg, env.n)
        aggregate = self._aggregation(env, steps, cfg)
        start = self.value("control_variates", cfg)
        if start is not None:
            cs = [env.grad(i, env.x0) if start == "grad" else 0.0 * env.x0 for i in range(env.n)]
            c = mean(cs)
        x, v, out = env.x0, None, [env.x0]
        for _ in range(rounds):
            ys = [_client(env, i, x, tau, lr, mu, momentum, decay, None if start is None else (cs[i], c))
                  for i, tau in enumerate(steps)]
            if start is not None:
                cs = [cs[i] - c + (1.0 / (tau * lr)) * (x - y) for i, (tau, y) in enumerate(zip(steps, ys))]
            a = aggregate(x, ys)
            if server_lr == 1.0 and not beta:
                x = a
            else:
                g = x - a
                v = g if v is None or not beta else beta * v + g
                x = x - server_lr * (g + beta * v if self.nesterov and beta else v)
            if start is not None:
                c = mean(cs)
            out.append(x)
        return out

    def _aggregation(self, env, steps: list[int], cfg: dict) -> Callable:
        """(x, ys) -> the aggregate a_t (module doc, step 2)."""
        if self.aggregation == "mean":
            return lambda x, ys: combine(env.weights, ys)
        solver = LocalSolver(*(self.value(f, cfg) for f in ("lr", "proximal_mu", "momentum", "lr_decay")))
        norms = [float(solver.accumulation(tau).sum()) for tau in steps]
        policy = {"accumulation": norms, "steps": steps}.get(self.tau_eff) if isinstance(self.tau_eff, str) else None
        tau_eff = self.tau_eff if policy is None else sum(w * q for w, q in zip(env.weights, policy))
        factors = [w / a for w, a in zip(env.weights, norms)]
        return lambda x, ys: x - tau_eff * combine(factors, [x - y for y in ys])

    # ---- the method of the round ---------------------------------------------------------------
    def setting(self, cfg: dict) -> dict:
        return {"n": self.clients(cfg), "L": cfg["L"], "mu": cfg["mu"]}

    def build(self, env: Env, cfg: dict) -> None:
        """R rounds, ||x0 - x*||^2 <= 1, the heterogeneity at x*, metric ||x_R - x*||^2."""
        x = self.run(env, cfg, cfg["rounds"])[-1]
        start_and_heterogeneity(env, cfg["zeta"])
        env.measure(env.sq(x - env.xs))

    def conditions(self, cfg: dict) -> None:
        """mu < L, lr L <= 4 and lr (1 + proximal_mu/L) L <= 4, the local steps one per client."""
        below_L(cfg)
        self.steps(cfg, None if self.per_client else cfg["n"])
        lr, prox = self.value("lr", cfg), self.value("proximal_mu", cfg)
        label = self.declared("lr") or "lr"
        step_check(label, lr, cfg["L"])
        if prox:
            step_check(f"{label} (1 + {self.declared('proximal_mu') or 'proximal_mu'}/L)",
                       lr * (1 + prox / cfg["L"]), cfg["L"])


def _client(env, i: int, x, steps: int, lr: float, mu: float, momentum: float, decay: float, correction):
    """y_i after ``steps`` steps of the local solver from x (module doc, step 1); ``correction``
    (c_i, c) or None."""
    y, u = x, None
    for k in range(steps):
        d = env.grad(i, y)
        if correction is not None:
            d = d - correction[0] + correction[1]
        if mu:
            d = d + mu * (y - x)
        u = d if u is None or not momentum else momentum * u + d
        y = y - lr * decay ** k * u
    return y


def round_method(name: str, summary: str, round: RoundSpec, *,
                 theory: Callable[[dict], Theory | None] | ResultTheory | None = None, doc: str = "") -> Method:
    """The certified method of ``round`` (module doc): a :class:`~fedbound.pep.method.Method`
    named ``name`` with the one-line ``summary``, to register in
    :data:`fedbound.pep.method.PEP_METHODS` (:func:`register_round_method`). ``theory``: a callable
    cfg -> :class:`~fedbound.pep.method.Theory` or None, or a
    :class:`~fedbound.pep.method.ResultTheory` (whose options must be the method's)."""
    if not isinstance(round, RoundSpec):
        raise InputTypeError(f"round must be a fedbound.pep.RoundSpec, got {validate.show(round)}")
    own = round.options()
    steps, lr = ((own.pop(f),) if f in own else () for f in ("local_steps", "lr"))
    options = ((() if round.per_client else (N_CLIENTS,)) + steps + (ROUNDS,) + lr + (L, MU, ZETA)
               + tuple(own.values()))
    if theory is not None and not callable(theory):
        raise InputTypeError(f"theory must be a callable cfg -> Theory or a ResultTheory, got "
                             f"{validate.show(theory)}")
    if isinstance(theory, ResultTheory):
        theory = _renamed(theory, options)
        known = [o.name for o in options]
        for option in theory.options():
            if option not in known:
                raise ValidationError(f"theory: {option!r} is not an option of pep method {name} "
                                      f"({', '.join(known)}){validate.suggest(option, known)}")
    return Method(name, summary, options, setting=round.setting, build=round.build, family=family,
                  conditions=round.conditions, doc=doc, **({} if theory is None else {"theory": theory}))


def _renamed(theory: ResultTheory, options) -> ResultTheory:
    """``theory`` with the old names of the options it maps (``gamma``, ``K``, ``R``) renamed to
    the options' names, each with a deprecation warning."""
    if callable(theory.constants):
        return theory
    old = {alias: o.name for o in options for alias in o.aliases}
    mapping = {}
    for option, constant in theory.constants.items():
        if option in old:
            deprecated(f"ResultTheory's option name {option!r}", repr(old[option]))
        mapping[old.get(option, option)] = constant
    return replace(theory, constants=mapping)


def register_round_method(name: str, summary: str, round: RoundSpec, *,
                          theory: Callable[[dict], Theory | None] | ResultTheory | None = None,
                          doc: str = "") -> Method:
    """Register :func:`round_method` (``name``, ``summary``, ``round``, ``theory``, ``doc``) in
    :data:`fedbound.pep.method.PEP_METHODS` and return it: ``certify(name, ...)`` and ``fedbound pep
    NAME`` then certify it. The registry records the caller's module as the method's origin (a
    plugin's name clash names the plugin)."""
    origin = guard.caller_module(1)
    return PEP_METHODS.register(round_method(name, summary, round, theory=theory, doc=doc),
                                origin=origin)


__all__ = ["RoundSpec", "Field", "FIELDS", "round_method", "register_round_method"]
