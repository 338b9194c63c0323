"""The jobs of fedbound, one short entry each (issue 33, item 2), also at the top of the package
(``fedbound.evaluate``, ``fedbound.run``, ...; loaded on first use, so that ``import fedbound``
stays fast). Each is the Python twin of a command and takes the same names:

==================  ===================================  ==========================================
job                 Python                               command line
==================  ===================================  ==========================================
evaluate a bound    :func:`evaluate` -> Evaluation       ``fedbound bound ID --set ...``
largest step size   :func:`max_step` -> StepSize         ``fedbound stepsize ID --set ...``
controller plan     :func:`plan` -> Plan                 ``fedbound control plan --spec NET.json``
run an algorithm    :func:`run` -> Trajectory            ``fedbound run ALGORITHM --task ...``
audit a paper       :func:`audit` -> list of ClaimReport ``fedbound audit PAPER``
verify against runs :func:`verify_theory` -> Verified    ``fedbound verify PAPER [CHECK]``
PEP certificate     :func:`certify` -> Certificate       ``fedbound pep METHOD ...``
sweep a grid        :func:`sweep_grid` -> GridCell list  ``fedbound sweep SPEC.json --out DIR``
==================  ===================================  ==========================================

Results are the objects of the layers below (:class:`fedbound.theory.Evaluation`,
:class:`fedbound.theory.stepsize.StepSize`, :class:`fedbound.control.Plan`,
:class:`fedbound.algorithms.Trajectory`, :class:`fedbound.theory.audit_report.ClaimReport`,
:class:`fedbound.pep.Certificate`) and two named tuples of this module (:class:`Verified`,
:class:`GridCell`). Every argument is checked as everywhere in fedbound (a one-line
:class:`~fedbound.errors.FedboundError` naming it); unknown names get the closest known ones.
"""
from __future__ import annotations

import os
from typing import NamedTuple, Sequence

from fedbound.algorithms.base import Algorithm
from fedbound.algorithms.problem import Problem
from fedbound.algorithms.registry import build, get as algorithm_spec
from fedbound.algorithms.run import Trajectory, run as run_rounds
from fedbound.argtypes import Count, NonNegative, NonNegativeInt, Seed
from fedbound.control.sdgt.objective import DEFAULT_K_CAP, DEFAULT_LAMBDAS, ControlProblem
from fedbound.control.sdgt.spec import NetSpec, load_spec, spec_from_dict
from fedbound.errors import InputTypeError, ValidationError
from fedbound.network.build import NETWORK, build_network
from fedbound.pep.certificate import Certificate, certify
from fedbound.sweep import spec as sweep_spec
from fedbound.sweep.runner import collect
from fedbound.sweep.spec import Cell
from fedbound.sweep.store import CellResult
from fedbound.tasks.base import Task
from fedbound.theory.evaluation import Evaluation
from fedbound.theory.registry import get
from fedbound.theory.stepsize import StepSize
from fedbound.validate import known_names, one_of, show, unknown


def evaluate(result: str, variant: str | None = None, **constants) -> Evaluation:
    """The bound of ``result`` (a result id, ``fedbound list``) at ``constants`` in the paper's
    notation, with its step-size conditions, predicates and terms (variant: the result's default
    unless named; arrays of constants evaluate elementwise).

    >>> import fedbound
    >>> ev = fedbound.evaluate("sdgt.thm3", L=1, mu=0.1, K=2, p=0.64, q=0.5, n=30, sigma=0.0,
    ...                        gamma=1e-6, T=100, Lyap1=1)
    >>> ev.variant, float(ev.bound) < 1, bool(ev.all_conditions_hold)
    ('appendix', True, True)
    """
    return get(result).evaluate(variant, **constants)


def max_step(result: str, variable: str | None = None, variant: str | None = None,
             **constants) -> StepSize:
    """The largest step size ``variable`` (``gamma``, ``eta_l``, ...; needed only where a variant
    constrains several) that the conditions of ``result`` admit at ``constants``, and the binding
    condition.

    >>> import fedbound
    >>> step = fedbound.max_step("sdgt.thm2", K=5, L=1.0, p=0.64, q=0.5)
    >>> step
    StepSize(value=0.000129..., binding='thm2 (83a)')
    >>> value, binding = step          # unpacks like the tuple it is
    """
    return get(result).max_step(variant, variable=variable, **constants)


def plan(spec: dict | NetSpec | str | os.PathLike, *, H: float = 1.0,
         lambdas: Sequence[float] = DEFAULT_LAMBDAS, K_cap: Count = DEFAULT_K_CAP,
         variant: str = "paper", method: str = "gp"):
    """SD-GT's controller (seed 003, problem (31)): the certified integer number of D2D rounds K and
    per-subnet samples h_s for the network ``spec`` (a NET.json dict ``{"subnets": [{"m", "E",
    "E_d2d"}, ...]}``, a :class:`~fedbound.control.NetSpec` or the path of such a file), with the
    objective, the energy per round and the continuous lower bound
    (:func:`fedbound.control.plan`).

    >>> import fedbound
    >>> p = fedbound.plan({"subnets": [{"m": 4, "E": 42.0, "E_d2d": 0.4}, {"m": 4, "E": 17.0, "E_d2d": 0.2}]})
    >>> p.K >= 1 and len(p.h) == 2 and p.lower_bound <= p.objective + 1e-9
    True
    """
    from fedbound.control.sdgt.integer import plan as certified_plan

    if isinstance(spec, dict):
        spec = spec_from_dict(spec)
    elif isinstance(spec, (str, os.PathLike)):
        spec = load_spec(spec)
    elif not isinstance(spec, NetSpec):
        raise InputTypeError(f"spec must be a NET.json dict, a NetSpec or a file path, got {show(spec)}")
    problem = ControlProblem(spec, H=H, lambdas=lambdas, K_cap=K_cap, variant=variant)
    return certified_plan(problem, method=method)


def run(algorithm: str | Algorithm, task: str | Task | None = None, *, rounds: NonNegativeInt = 100,
        seed: Seed | None = None, sigma: NonNegative = 0.0, task_options: dict | None = None,
        network_options: dict | None = None, eval_every: Count = 1, **options) -> Trajectory:
    """``rounds`` rounds of ``algorithm`` (a registered name, ``fedbound list algorithms``) with its
    ``options`` (``lr``, ``local_steps``, ``clients_per_round``, ...) on ``task``: a task preset's
    name with ``task_options`` (``n``, ``d``, ``data``, ``float64``, ...) or a
    :class:`~fedbound.tasks.Task` (default: the ``quadratic`` preset); ``network_options``
    (``subnets``, ``topology``, ``rgg``, ``network``) for the algorithms that take a network;
    ``seed`` (default 0); ``sigma``: the std of the gradient noise added. What ``fedbound run``
    runs, as a :class:`~fedbound.algorithms.Trajectory`.

    ``algorithm`` may also be an :class:`~fedbound.algorithms.base.Algorithm` already built
    (``registry.build``, a class of :mod:`fedbound.algorithms`): it runs as built, so its task,
    seed and options are its own and giving any of them here is an error
    (:func:`fedbound.algorithms.run` takes a start state and a callback besides).

    >>> import fedbound
    >>> traj = fedbound.run("fedavg", "quadratic", rounds=20, lr=0.1, local_steps=2,
    ...                     task_options={"n": 6, "d": 3, "float64": True})
    >>> bool(traj.metrics["dist2"][-1] < traj.metrics["dist2"][0])
    True
    >>> from fedbound.algorithms import registry
    >>> from fedbound.tasks import make_task
    >>> alg = registry.build("fedavg", make_task("quadratic", n=6, d=3, float64=True), lr=0.1)
    >>> mine = fedbound.run(alg, rounds=20)
    >>> bool(mine.metrics["dist2"][-1] < mine.metrics["dist2"][0])
    True
    """
    if isinstance(algorithm, Algorithm):
        given = [name for name, value in (("task", task), ("seed", seed), ("task_options", task_options),
                                           ("network_options", network_options)) if value is not None]
        given += ["sigma"] * (sigma != 0) + sorted(options)
        if given:
            raise ValidationError(f"algorithm {algorithm.name!r} is already built, with its own task, seed "
                                  f"and options: give rounds and eval_every only, not {', '.join(given)}")
        return run_rounds(algorithm, rounds, eval_every=eval_every)
    task = "quadratic" if task is None else task
    seed = 0 if seed is None else seed
    if isinstance(task, Task):
        spec = algorithm_spec(algorithm)
        network = None if spec.network == "none" else build_network(
            task.n, default_subnets=spec.default_subnets, **NETWORK.check(network_options or {}))
        alg = build(algorithm, task.with_noise(sigma) if sigma > 0 else task, network, seed=seed, **options)
    else:
        problem = Problem(task, dict(task_options or {}), network_options)
        alg = problem.algorithm(algorithm, options, seed=seed, sigma=sigma, rounds=rounds)
    return run_rounds(alg, rounds, eval_every=eval_every)


def audit(paper: str, *, samples: Count = 20000, seed: Seed = 0, iterations: Count = 40,
          only: Sequence[str] | None = None) -> list:
    """The audit of ``paper``'s printed claims (``fedbound list papers``; ``"all"`` for every
    paper), or of those whose id starts with one of ``only``: one
    :class:`~fedbound.theory.audit_report.ClaimReport` per claim and variant, with its verdict,
    severity and counterexample (:func:`fedbound.theory.audit.run_audits`).

    >>> import fedbound
    >>> [r.verdict for r in fedbound.audit("sdgt", only=["lemma2"], samples=200, iterations=2)]
    ['holds']
    """
    from fedbound.theory.audit import run_audits

    found = run_audits(paper, samples=samples, seed=seed, iterations=iterations,
                       only=None if only is None else list(only))
    return [report for reports in found.values() for report in reports]


class Verified(NamedTuple):
    """One check of :func:`verify_theory`: its ``paper`` and ``check`` names, the run it measured
    (``setting``) and its :class:`~fedbound.verify.check.Check` s (``results``: holds, violated or
    not applicable, with measured and predicted values)."""

    paper: str
    check: str
    setting: dict
    results: list

    @property
    def violated(self) -> bool:
        """Whether a result of the check is violated (a counterexample)."""
        return any(c.violated for c in self.results)


def verify_theory(paper: str, check: str | None = None, *, task: str = "quadratic",
                  task_options: dict | None = None, network_options: dict | None = None,
                  **options) -> list[Verified]:
    """A paper's theory against measured runs (``fedbound verify PAPER [CHECK]``): the check
    ``check`` of ``paper`` (a name of ``fedbound list checks``, with or without its paper), or
    every check of the paper, each with its ``options`` (``seeds``, ``rounds``, the algorithm's),
    on ``task`` in float64.

    >>> import fedbound
    >>> [v] = fedbound.verify_theory("sdgt", "fixed-point", rounds=600)
    >>> v.check, v.violated
    ('fixed-point', False)
    """
    from fedbound.verify.registry import CHECKS, of_paper, verify_problem

    if check is None:
        chosen = of_paper(paper)
        if not chosen:
            raise unknown("paper with checks", paper, sorted({c.paper for c in CHECKS.entries()}))
    else:
        chosen = [CHECKS.get(check if check.startswith(f"{paper}.") else f"{paper}.{check}")]
    if len(chosen) > 1:        # each check takes its own options; one that none takes is an error
        taken = {s for c in chosen for o in c.options for s in (o.name, *o.aliases)}
        known_names(f"option of verify {paper}", [k for k in options if k not in taken],
                    sorted({o.name for c in chosen for o in c.options}))
    for c in chosen:
        one_of(f"task of verify {c.name}", task, c.tasks)
    problem = verify_problem(task, task_options, network_options)
    out = []
    for c in chosen:
        own = {s for o in c.options for s in (o.name, *o.aliases)}
        mine = options if len(chosen) == 1 else {k: v for k, v in options.items() if k in own}
        setting, results = c.run(problem, **c.check(mine))
        out.append(Verified(c.paper, c.check_name, setting, list(results)))
    return out


class GridCell(NamedTuple):
    """One cell of :func:`sweep_grid`: the :class:`~fedbound.sweep.Cell` (algorithm, options, seed)
    and its ``result`` (``status``, the per-round ``columns``)."""

    cell: Cell
    result: CellResult


def sweep_grid(spec: dict | str | os.PathLike) -> list[GridCell]:
    """Every cell of the sweep SPEC ``spec`` (a dict, or the path of a SPEC.json; the format of
    :mod:`fedbound.sweep.spec`) computed in this process without a results store (``fedbound
    sweep SPEC --out DIR`` stores and resumes; :func:`fedbound.sweep.run_sweep`), seeds batched as
    a sweep batches them.

    >>> import fedbound
    >>> cells = fedbound.sweep_grid({"algorithm": "fedavg", "task": {"name": "quadratic", "n": 6, "d": 3},
    ...                              "rounds": 5, "grid": {"lr": [0.05, 0.1], "seed": [0, 1]}})
    >>> len(cells), cells[0].cell.options["lr"], cells[0].result.status
    (4, 0.05, 'done')
    """
    if isinstance(spec, dict):
        parsed = sweep_spec.parse(spec)
    elif isinstance(spec, (str, os.PathLike)):
        parsed = sweep_spec.load(spec)
    elif isinstance(spec, sweep_spec.Spec):
        parsed = spec
    else:
        raise InputTypeError(f"spec must be a SPEC dict, a file path or a Spec, got {show(spec)}")
    return [GridCell(cell, result) for cell, result in collect(parsed)]


__all__ = ["evaluate", "max_step", "plan", "run", "audit", "verify_theory", "Verified", "certify",
           "Certificate", "sweep_grid", "GridCell"]
