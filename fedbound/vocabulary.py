"""One vocabulary: the name of every concept an option can carry, in one place that the registries
draw from (issue 33, item 1).

A :class:`Term` is one concept with its one name (the Python keyword, the sweep SPEC key, the JSON
field; the command-line flag is ``--`` + the name with dashes), what it means, the old spellings
that still work and warn (``aliases``: ``gamma`` for ``lr``), the names other papers and libraries
give it (``synonyms``: ``learning_rate``, ``eta_l``; never a live name in fedbound, offered by the
did-you-mean of :func:`fedbound.validate.suggest`) and the values it takes (``accepts``).

Names live in three namespaces, one table each:

* :data:`OPTIONS`: what a run, a check, a task, a network or a PEP method is configured with (the
  options of :mod:`fedbound.registry` entries): ``lr``, ``local_steps``, ``rounds``,
  ``clients_per_round``, ``proximal_mu``, ...;
* :data:`CONSTANTS`: the constants of a function class in the papers' notation, shared with
  :mod:`fedbound.theory` (``bound --set``) and the tasks' attributes: ``L``, ``mu`` (strong
  convexity), ``zeta``, ``Delta``, ``beta2`` and ``kappa2`` (FedNova's Assumption 3), ... An
  option that is such a constant (a PEP method's function class) says so (``Option.constant``);
* :data:`TRANSFORMS`: the keywords of the optax-style optimizer transforms
  (:mod:`fedbound.algorithms.optim`, the registries created with ``namespace="transform"``), which
  keep optax's spellings (``b1``, ``b2``, ``eps``); each says which option it is
  (:attr:`Term.option`), and the algorithms map their options onto them.

In each namespace a name has one meaning and a concept one name: a live name is never another
term's old spelling or synonym (a plugin's option ``gamma`` is refused: it is ``lr``), and an
option with a term's name takes that term's values (:func:`problems`; tests/test_vocabulary.py walks
every registry, plugins included, and plugins are checked when they register).

    >>> OPTIONS["lr"].concept
    "the clients' step size (SD-GT's gamma, FedNova's eta, AFGA's eta_l)"
    >>> live_name("learning_rate"), live_name("gamma"), live_name("mu_prox")
    ('lr', 'lr', 'proximal_mu')
    >>> OPTIONS["local_steps"].accepts([1, 3, 5]), OPTIONS["lr"].accepts(-1.0)
    (True, False)
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Callable, Iterable

from fedbound.errors import InputTypeError, UnknownNameError

#: the namespaces of names (module doc)
NAMESPACES = ("option", "constant", "transform")


# ---- the values a concept takes ------------------------------------------------------------------
def _real(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(float(x))


def _count(x: object) -> bool:
    return _real(x) and float(x) == int(x) and int(x) >= 1


def positive(x: object) -> bool:
    """A real number > 0."""
    return _real(x) and x > 0


def nonnegative(x: object) -> bool:
    """A real number >= 0."""
    return _real(x) and x >= 0


def real(x: object) -> bool:
    """A finite real number."""
    return _real(x)


def decay(x: object) -> bool:
    """A factor in [0, 1) (decays, momentum factors)."""
    return _real(x) and 0 <= x < 1


def fraction(x: object) -> bool:
    """A number in (0, 1] (probabilities of taking part, step decays)."""
    return _real(x) and 0 < x <= 1


def count(x: object) -> bool:
    """An integer >= 1 (as a number, or text of one)."""
    if isinstance(x, str):
        return x.strip().isdigit() and int(x) >= 1
    return _count(x)


def counts(x: object) -> bool:
    """A count (:func:`count`) or one per client: a sequence, or comma-separated text, of counts."""
    if isinstance(x, str):
        return all(count(part) for part in x.split(",")) and x.strip() != ""
    if isinstance(x, (list, tuple)):
        return len(x) > 0 and all(count(v) for v in x)
    return count(x)


def nonnegative_int(x: object) -> bool:
    """An integer >= 0."""
    return _real(x) and float(x) == int(x) and int(x) >= 0


def text(x: object) -> bool:
    """A name (choices, file paths): a string."""
    return isinstance(x, str)


def switch(x: object) -> bool:
    """On or off."""
    return isinstance(x, bool)


def anything(x: object) -> bool:
    """Any value (a matrix, a choice that may also be a number); the entry's own check decides."""
    return True


@dataclass(frozen=True)
class Term:
    """One concept (module doc): ``name``, what it means (``concept``), its old spellings that
    still work (``aliases``), other papers' and libraries' names for it (``synonyms``), the values
    it takes (``accepts``: value -> bool) and, for a transform keyword, the option it is
    (``option``)."""

    name: str
    concept: str
    accepts: Callable[[object], bool] = anything
    aliases: tuple[str, ...] = ()
    synonyms: tuple[str, ...] = ()
    option: tuple[str, ...] = ()
    namespace: str = field(default="option", compare=False)

    def spellings(self) -> tuple[str, ...]:
        """Every other spelling of the concept: its old names, then its synonyms."""
        return (*self.aliases, *self.synonyms)


def _table(namespace: str, terms: Iterable[Term]) -> dict[str, Term]:
    out: dict[str, Term] = {}
    for t in terms:
        t = Term(t.name, t.concept, t.accepts, t.aliases, t.synonyms, t.option, namespace)
        assert t.name not in out, f"{namespace} {t.name} declared twice"
        out[t.name] = t
    return out


#: the options of runs, checks, tasks, networks and PEP methods (module doc)
OPTIONS: dict[str, Term] = _table("option", [
    # -- the clients' steps and the rounds
    Term("lr", "the clients' step size (SD-GT's gamma, FedNova's eta, AFGA's eta_l)", positive,
         aliases=("gamma", "eta"),
         synonyms=("learning_rate", "step_size", "stepsize", "eta_l", "client_lr", "lr_client",
                   "local_lr")),
    Term("local_steps", "local steps per round (SD-GT's K D2D rounds, AFGA's I, FedNova's tau_i; "
         "one count or one per client)", counts, aliases=("K", "taus"),
         synonyms=("local_iters", "local_iterations", "local_epochs", "local_updates",
                   "num_local_steps", "tau_i", "localsteps")),
    Term("rounds", "global (communication) rounds; the iterations of a gossip method", count,
         aliases=("R", "T"), synonyms=("num_rounds", "n_rounds", "communication_rounds",
                                      "iterations", "global_rounds")),
    Term("steps", "iterations of a method without rounds (GD's gradient steps; Scaffnew's steps, "
         "each followed by an average with probability p)", count, aliases=("N", "T"),
         synonyms=("num_steps", "n_steps")),
    Term("lr_decay", "the local solver's per-step decay of the step size", fraction,
         synonyms=("step_decay",)),
    Term("mc_lr", "the step size of a check's Monte-Carlo part (SD-GT's noise floor)", positive,
         aliases=("mc_gamma",)),
    # -- participation
    Term("clients_per_round", "participants per round, uniformly (AFGA's M)", count,
         synonyms=("num_clients_per_round", "clients_per_step", "sample_size", "cohort_size",
                   "min_fit_clients")),
    Term("clients_per_subnet", "participants per subnet and round (SD-GT's h_s)", count,
         aliases=("h",), synonyms=("sample", "h_s", "samples_per_subnet")),
    Term("participation", "the participation scheme by name (fedbound.network.sampling)", text,
         synonyms=("sampling", "client_sampling")),
    Term("adapted_compute", "clients per cluster computing at each step in AFGA's (a) variants",
         count),
    # -- the server and adaptive optimizers
    Term("server_lr", "the server optimizer's step size", positive, aliases=("eta_g",),
         synonyms=("server_learning_rate", "global_lr", "server_step_size", "eta_s")),
    Term("server_momentum", "the server optimizer's momentum factor", decay,
         synonyms=("server_beta",)),
    Term("server_optimizer", "the server optimizer by name", text, aliases=("server",)),
    Term("client_optimizer", "the clients' optimizer by name", text),
    Term("beta1", "an adaptive optimizer's first-moment decay (the server's; DAdam: every "
         "client's)", decay, synonyms=("b1",)),
    Term("beta2", "an adaptive optimizer's second-moment decay (the server's; DAdam: every "
         "client's)", decay, synonyms=("b2",)),
    Term("tau", "an adaptive optimizer's adaptivity constant epsilon (the server's; DAdam: every "
         "client's)", positive, aliases=("eps",), synonyms=("epsilon", "amsgrad_eps")),
    Term("bias_correction", "an adaptive optimizer's bias correction (none, adam, flower)", anything),
    Term("v0", "an adaptive optimizer's initial second moment", nonnegative,
         aliases=("initial_accumulator",), synonyms=("initial_accumulator_value",)),
    Term("eps_inside_sqrt", "the adaptivity constant inside the square root", switch),
    Term("nesterov", "Nesterov momentum instead of heavy ball", switch),
    Term("client_beta1", "the client Adam's first-moment decay", decay),
    Term("client_beta2", "the client Adam's second-moment decay", decay),
    Term("client_eps", "the client optimizer's adaptivity constant", positive),
    Term("client_bias_correction", "the client Adam's bias correction of its moments", switch),
    Term("client_v0", "the AdaGrad client's initial second moment", nonnegative),
    Term("delay", "the client preconditioner's delay z (FedAda2)", count),
    Term("eps_s", "client steps with norm below eps_s are zeroed (FedAda2)", nonnegative),
    Term("carry_over", "SM3's carry-over of mu between refreshes", switch),
    Term("sm3_variant", "SM3 variant I or II", text),
    # -- local solvers and algorithm-specific terms
    Term("proximal_mu", "the proximal coefficient (FedProx's mu, Flower's proximal_mu; FedNova's "
         "proximal solver)", nonnegative, aliases=("mu", "mu_prox"), synonyms=("prox_mu", "mu_p")),
    Term("momentum", "the clients' momentum factor (buffer reset every round)", decay,
         synonyms=("client_momentum",)),
    Term("alpha", "FedDyn's dynamic regularization coefficient", positive),
    Term("period", "iterations between global averages (Gossip-PGA's H)", count),
    Term("tau_eff", "FedNova's effective local steps tau_eff (a policy name or a number)", anything),
    Term("vr", "FedNova's cross-client variance reduction", text),
    Term("clusters", "equal clusters of CAFGA when no network is given", count),
    Term("control_variates", "the initial control variates of SCAFFOLD: zero or grad", text,
         aliases=("c0",)),
    Term("p", "Scaffnew's probability of averaging after a step", fraction),
    # -- tasks
    Term("n", "the number of clients", count, synonyms=("num_clients", "n_clients", "clients")),
    Term("d", "the model / feature dimension", count, synonyms=("dim", "dimension")),
    Term("data", "a user's .npz data file", text, synonyms=("data_file",)),
    Term("rows", "rows per client of generated least squares", count),
    Term("seed", "the seed of a generator", nonnegative_int, synonyms=("random_seed",)),
    Term("float64", "float64 tensors (default float32)", switch, synonyms=("double",)),
    Term("weights", "the aggregation weights p_i: uniform or examples", text),
    Term("sigma", "the standard deviation of the gradient noise added to the task", nonnegative,
         synonyms=("noise", "noise_std")),
    Term("batch_size", "samples per minibatch of each client's stochastic gradients (full gradients "
         "without it)", count, synonyms=("minibatch_size", "batchsize", "bs")),
    Term("batch_seed", "the seed of the clients' minibatch order", nonnegative_int,
         synonyms=("minibatch_seed",)),
    # -- networks
    Term("subnets", "the number of subnets", count, aliases=("S",), synonyms=("num_subnets",)),
    Term("per_subnet", "clients per subnet", count, aliases=("m",)),
    Term("topology", "the topology of every subnet by name", text),
    Term("rgg", "SD-GT's random geometric network", switch),
    Term("network", "a network spec file", text),
    Term("W", "a doubly stochastic mixing matrix", anything),
    Term("lam", "the non-consensus eigenvalue of W_s = J + lam (I - J)", real),
    Term("lam_lo", "the smallest non-consensus eigenvalue of a spectral class of W", real),
    Term("lam_hi", "the largest non-consensus eigenvalue of a spectral class of W", real),
    # -- checks
    Term("seeds", "Monte-Carlo seeds", count, synonyms=("num_seeds", "n_seeds", "repeats")),
    Term("beta2_scale", "FedNova checks: Assumption 3's beta^2 as a multiple of the smallest one "
         "the task admits", positive),
])

#: constants of a function class in the papers' notation (module doc), as registries' options name them
CONSTANTS: dict[str, Term] = _table("constant", [
    Term("L", "smoothness", positive, synonyms=("lipschitz", "Lipschitz", "smoothness")),
    Term("mu", "strong convexity", nonnegative, synonyms=("strong_convexity",)),
    Term("zeta", "heterogeneity at the optimum: (1/n) sum_i ||grad f_i(x*)||^2 <= zeta^2",
         nonnegative),
    Term("Delta", "the initial gap f(x0) - f_inf", positive),
    Term("beta2", "FedNova's Assumption 3 beta^2", nonnegative),
    Term("kappa2", "FedNova's Assumption 3 kappa^2", nonnegative),
    Term("c2", "SD-GT Theorem 1's Lyapunov constant c2 > 2 of (74)", positive),
    Term("D5", "SD-GT Theorem 1's constant D5", positive),
])

#: the optax-style transforms' keywords (module doc); ``option``: the algorithms' option(s) each is
TRANSFORMS: dict[str, Term] = _table("transform", [
    Term("lr", "the transform's step size", positive, option=("lr", "server_lr")),
    Term("b1", "first-moment decay", decay, option=("beta1", "client_beta1")),
    Term("b2", "second-moment decay", decay, option=("beta2", "client_beta2")),
    Term("eps", "adaptivity constant", positive, option=("tau", "client_eps")),
    Term("beta", "momentum factor", decay, option=("momentum", "server_momentum")),
    Term("decay", "per-step step-size decay", fraction, option=("lr_decay",)),
    Term("mu", "proximal coefficient", nonnegative, option=("proximal_mu",)),
    Term("nesterov", "Nesterov momentum", switch, option=("nesterov",)),
    Term("v0", "initial second moment", nonnegative, aliases=("initial_accumulator",),
         option=("v0", "client_v0")),
    Term("delay", "preconditioner delay", count, option=("delay",)),
    Term("bias_correction", "bias correction", anything,
         option=("bias_correction", "client_bias_correction")),
    Term("variant", "SM3 variant", text, option=("sm3_variant",)),
    Term("carry_over", "SM3's carry-over", switch, option=("carry_over",)),
    Term("eps_inside_sqrt", "adaptivity constant inside the root", switch, option=("eps_inside_sqrt",)),
])

TABLES = {"option": OPTIONS, "constant": CONSTANTS, "transform": TRANSFORMS}


def table(namespace: str) -> dict[str, Term]:
    """The terms of ``namespace`` (:data:`NAMESPACES`)."""
    if namespace not in TABLES:
        raise UnknownNameError(f"namespace must be one of {', '.join(NAMESPACES)}, got {namespace!r}")
    return TABLES[namespace]


def live_name(spelling: str, namespace: str = "option") -> str | None:
    """The live name of the concept ``spelling`` names in ``namespace``: itself for a term, the
    term of an old spelling or a synonym, else None (an old spelling of two terms: the first)."""
    terms = table(namespace)
    if spelling in terms:
        return spelling
    folded = spelling.lower()
    for t in terms.values():
        if spelling in t.aliases:
            return t.name
    for t in terms.values():
        if folded in (s.lower() for s in t.synonyms) or folded == t.name.lower():
            return t.name
    return None


def problems(option: object, namespace: str = "option") -> list[str]:
    """What is wrong with ``option`` (a :class:`fedbound.registry.Option`) under the vocabulary of
    ``namespace`` (the option's own namespace is :data:`CONSTANTS` when ``option.constant``):

    * its name is another term's old spelling or synonym (a concept with two names);
    * its name is a term whose values its default or examples are not (a name with two meanings);
    * an old spelling it accepts is not one of its term's (a rename the vocabulary does not record).

    Names the vocabulary does not know are an entry's own (``[]``)."""
    if not all(hasattr(option, a) for a in ("name", "default", "examples", "aliases", "constant")):
        raise InputTypeError(f"option must be a fedbound.registry.Option, got {type(option).__name__}")
    space = "constant" if option.constant else namespace
    terms = table(space)
    out = []
    term = terms.get(option.name)
    if term is None:
        for t in terms.values():
            if option.name in t.spellings():
                kind = "an old name" if option.name in t.aliases else "another name"
                out.append(f"option {option.name!r} is {kind} of {t.name!r} ({t.concept}); "
                           f"name it {t.name!r}")
                break
        return out
    for what, value in (("default", option.default), *(("example", e) for e in option.examples)):
        if value is not None and not term.accepts(value):
            out.append(f"option {option.name!r}: its {what} {value!r:.40} is not a value of "
                       f"{term.name!r} ({term.concept}); an option of another meaning needs "
                       f"another name")
            break
    for alias in option.aliases:
        if alias not in term.aliases:
            out.append(f"option {option.name!r} accepts the old name {alias!r}, which the "
                       f"vocabulary does not record for {term.name!r}")
    return out


__all__ = ["NAMESPACES", "Term", "OPTIONS", "CONSTANTS", "TRANSFORMS", "TABLES", "table",
           "live_name", "problems", "positive", "nonnegative", "real", "decay", "fraction", "count",
           "counts", "nonnegative_int", "text", "switch", "anything"]
