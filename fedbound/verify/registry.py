r"""The checks of ``fedbound verify PAPER [CHECK]``, as entries of the one registry
(:mod:`fedbound.registry`): each paper's theory against measured runs.

A :class:`VerifyCheck` is named ``"<paper>.<check>"`` (``sdgt.linear-rate``, ``fednova.thm1``),
declares its options (flags of ``fedbound verify``, validated and fuzzed like every option) and the
task presets it runs on, and ``run(problem, **options) -> (setting, checks)``: a description of
the run (JSON-ready) and its :class:`~fedbound.verify.check.Check` s. The modules that define
checks register them (SD-GT's in :mod:`fedbound.verify.checks`); :func:`theorem_check` makes the
check of a theorem's bound against runs of an algorithm of its paper
(:func:`fedbound.verify.theorem.theorem_checks`), which is all most papers, and plugins, need.

    >>> from fedbound.verify.registry import CHECKS
    >>> [c.name for c in CHECKS.entries() if c.paper == "sdgt"][:2]
    ['sdgt.fixed-point', 'sdgt.server-recursion']
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

from fedbound.algorithms import registry as algorithms
from fedbound.errors import require
from fedbound.registry import Entry, Option, Registry, integer_option, number_option

#: the task presets a check runs on unless it says otherwise (exact L, mu, x*, f*)
QUADRATIC_TASKS = ("quadratic", "lsq", "lsq-convex")


@dataclass(frozen=True, repr=False)
class VerifyCheck(Entry):
    """A check of ``fedbound verify`` (module doc): ``name`` ``"<paper>.<check>"``, one-line
    ``summary``, ``run(problem, **options) -> (setting dict, list of Check)``, its ``options``,
    the task presets it takes (``tasks``) and whether it runs one deterministic seed
    (``deterministic``: no Monte-Carlo, so no Ray)."""

    name: str
    summary: str
    run: Callable
    options: tuple[Option, ...] = ()
    tasks: tuple[str, ...] = QUADRATIC_TASKS
    deterministic: bool = False

    def __post_init__(self):
        super().__post_init__()
        paper, dot, check = self.name.partition(".")
        require(dot and paper and check, f"a verify check is named '<paper>.<check>', got {self.name!r}")
        require(callable(self.run), f"{self.name}: run must be callable")

    @property
    def paper(self) -> str:
        return self.name.partition(".")[0]

    @property
    def check_name(self) -> str:
        """The name within the paper (``linear-rate``)."""
        return self.name.partition(".")[2]


CHECKS: Registry[VerifyCheck] = Registry("check", VerifyCheck, packages=("fedbound.verify",))
register = CHECKS.register


#: the dimension of the quadratic task the checks run on unless told otherwise
QUADRATIC_D = 5


def verify_problem(task: str, task_options: dict | None = None, network_options: dict | None = None):
    """The :class:`~fedbound.algorithms.problem.Problem` the checks measure on (``fedbound verify``
    and :func:`fedbound.api.verify_theory`): ``task`` in float64, the quadratic of dimension
    :data:`QUADRATIC_D` unless the options say otherwise."""
    from fedbound.algorithms.problem import Problem

    options = {"float64": True, **(task_options or {})}
    if task == "quadratic" and "data" not in options:
        options.setdefault("d", QUADRATIC_D)
    return Problem(task, options, network_options)


def of_paper(paper: str) -> list[VerifyCheck]:
    """The checks of ``paper``, in registration order."""
    return [c for c in CHECKS.entries() if c.paper == paper]


SIGMA = number_option("sigma", "gradient-noise std added to the task", low=0.0, high=1e6,
                      examples=(0.0, 0.3))
ROUNDS = integer_option("rounds", "global rounds (the largest horizon)", low=1, high=1_000_000,
                        examples=(5, 20))
SEEDS = integer_option("seeds", "Monte-Carlo seeds", low=2, high=100_000, examples=(2, 8))


def _with_default(option: Option, default) -> Option:
    return replace(option, default=default, required=option.required and default is None)


def theorem_check(result_id: str, algorithm: str, *, check: str | None = None,
                  defaults: dict | None = None, step_option: str | None = None,
                  sigma: float = 0.3, rounds: int = 100, seeds: int = 20,
                  constants: dict | None = None, tasks: Sequence[str] = QUADRATIC_TASKS,
                  summary: str | None = None) -> VerifyCheck:
    """The check ``"<paper>.<check>"`` (default check name: the result's, ``thm1``) of
    ``result_id``'s bound against runs of ``algorithm`` (:func:`fedbound.verify.theorem.theorem_checks`).
    Its options: the algorithm's own (``defaults`` overrides their defaults, e.g. ``{"lr": 0.05}``;
    ``step_option``, e.g. ``"lr"``, defaults to the largest step the theorem admits at the run's
    constants, :func:`fedbound.verify.theorem.largest_step`) and ``sigma``, ``rounds``, ``seeds``
    with the given defaults; ``constants``: the theorem's constants a run does not fix."""
    paper, _, short = result_id.partition(".")
    sigma, rounds, seeds = (o.check(o.name, v) for o, v in ((SIGMA, sigma), (ROUNDS, rounds), (SEEDS, seeds)))
    spec = algorithms.ALGORITHMS.find(algorithm)     # no loading while the package is imported
    defaults = dict(defaults or {})
    for name in (*defaults, *([step_option] if step_option else [])):
        spec.option(name)           # an unknown option is an error with a did-you-mean
    own = tuple(_with_default(o, defaults[o.name]) if o.name in defaults else o for o in spec.options)
    if step_option is not None:
        own = tuple(replace(o, required=False, help=f"{o.help}; default: the largest step "
                                                     f"{result_id} admits at the run's constants")
                    if o.name == step_option else o for o in own)
    run_options = (_with_default(SIGMA, sigma), _with_default(ROUNDS, rounds),
                   _with_default(SEEDS, seeds))

    def run(problem, *, sigma, rounds, seeds, **options):
        from fedbound.verify.theorem import theorem_checks

        task, network = problem.task, problem.network(algorithm)
        checks = theorem_checks(result_id, algorithm, task, network, options, sigma=sigma,
                                rounds=rounds, seeds=seeds, variants="all", constants=constants,
                                step_option=step_option)
        options = checks[0].details["options"] if checks else options
        setting = {"algorithm": algorithm, "task": problem.task_name, "n": task.n, "d": task.d,
                   **options, "sigma": sigma, "rounds": rounds, "seeds": seeds}
        return setting, checks

    return VerifyCheck(f"{paper}.{check or short}", summary or
                       f"{result_id}'s bound against Monte-Carlo runs of {algorithm}", run,
                       (*own, *run_options), tuple(tasks))


def on_task(check: VerifyCheck, task: str, label: str | None = None,
            task_options: dict | None = None) -> VerifyCheck:
    """``check`` on the task preset ``task`` whatever ``--task`` says (the check
    ``"<paper>.<check>-<label>"``, label default the task's name), so that ``fedbound verify PAPER``
    covers several tasks in one call: its run builds that task (float64, ``task_options``), with
    the network options of the command line."""
    from fedbound.algorithms.problem import Problem

    require(task in check.tasks, f"{check.name} does not run on task {task!r} (its tasks: "
                                 f"{', '.join(check.tasks)})")

    def run(problem, **options):
        if problem.task_name != task:
            problem = Problem(task, {"float64": True, **(task_options or {})}, problem.network_options)
        return check.run(problem, **options)

    return replace(check, name=f"{check.name}-{label or task}", run=run,
                   summary=f"{check.summary} (on {task}, whatever --task says)")


__all__ = ["VerifyCheck", "CHECKS", "register", "of_paper", "verify_problem", "QUADRATIC_D", "theorem_check", "on_task",
           "QUADRATIC_TASKS", "SIGMA", "ROUNDS", "SEEDS"]
