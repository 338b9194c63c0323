r"""fedbound.extend: your own algorithm, theorem, paper, PEP method or task, reaching every command.

What a plugin registers goes into the same registries as fedbound's own entries
(:mod:`fedbound.registry`), with the same types, so it is indistinguishable from a built-in: its
options are validated, become flags with ``--help``, appear in ``--json``, in sweeps and in the
registry-driven fuzz suite.

===========================  ===================================================  =======================
function                     takes (the type the built-ins use)                   reaches
===========================  ===================================================  =======================
:func:`register_algorithm`   :class:`fedbound.algorithms.registry.AlgorithmSpec`  run, sweep, fixed-point
:func:`register_result`      :class:`fedbound.theory.result.Result`               bound, stepsize, rounds,
                                                                                  constants, list
:func:`register_paper`       :class:`fedbound.papers.PaperAudit`                  audit, verify
:func:`register_check`       :class:`fedbound.verify.registry.VerifyCheck`        verify PAPER CHECK
:func:`register_pep_method`  :class:`fedbound.pep.method.Method`                  pep
:func:`register_task`        :class:`fedbound.tasks.registry.TaskSpec`            run, verify, sweep
:func:`declare_constant`     a theorem's constant: domain, meaning, source        bound --set, constants
===========================  ===================================================  =======================

A plugin is a module that calls these at import. fedbound loads plugins from the entry-point
group ``fedbound.plugins`` (an installed package: ``[project.entry-points."fedbound.plugins"]
myplugin = "myplugin"``), from ``fedbound --plugin MODULE_OR_FILE.py`` (repeatable) and from the
environment variable ``FEDBOUND_PLUGINS`` (comma-separated); sweeps load them in every Ray worker.
A plugin that fails to import, registers a name that exists, or declares an option whose default or
examples fail its own check is a one-line :class:`PluginError` naming the plugin (exit status 2 on
the command line). ``fedbound new plugin DIR --name NAME`` writes a complete, pip-installable
example.

Example: FedAvg with server-side Nesterov momentum, one module::

    from fedbound.extend import AlgorithmSpec, Federated, client, server, options, register_algorithm

    class NesterovAvg(Federated):
        name = "NesterovAvg"
        def __init__(self, task, *, lr, local_steps=1, server_momentum=0.9, **round_options):
            super().__init__(task, client=client.sgd(lr),
                             server=server.momentum(1.0, server_momentum, nesterov=True),
                             local_steps=local_steps, **round_options)

    register_algorithm(AlgorithmSpec(
        "nesterov-avg", NesterovAvg, "FedAvg with server Nesterov momentum", "federated",
        (options.LR, options.LOCAL_STEPS, options.CLIENTS_PER_ROUND, options.SERVER_MOMENTUM)))

after which ``fedbound --plugin mymodule run nesterov-avg --lr 0.05`` runs it.

The building blocks load on first use (``import fedbound.extend`` imports neither torch nor sympy
nor cvxpy; a plugin pays for what it uses), and what a plugin registers is indexed in the on-disk
cache, so that a command that does not use it never imports it (:mod:`fedbound.registry`).
Option names come from the one vocabulary (:mod:`fedbound.vocabulary`): ``lr``, ``local_steps``,
``server_momentum``, ...; a plugin whose option is named as another concept (``gamma`` for ``lr``)
or takes another concept's name with other values is refused when it registers.
"""
from __future__ import annotations

import importlib

from fedbound import guard
from fedbound.registry import (PluginError, Option, choice_option, integer_option, load_plugin,
                               number_option)

#: the names this module gives from the layers below, each imported on first use (PEP 562), so
#: that ``import fedbound.extend`` costs nothing (torch, sympy, cvxpy load with what a plugin uses)
_EXPORTS = {
    "options": "fedbound.algorithms.options:", "Federated": "fedbound.algorithms.federated.round",
    "client": "fedbound.algorithms.optim.client:", "server": "fedbound.algorithms.optim.server:",
    "AlgorithmSpec": "fedbound.algorithms.registry", "PaperAudit": "fedbound.papers",
    "Method": "fedbound.pep.method", "ResultTheory": "fedbound.pep.method", "Theory": "fedbound.pep.method",
    "RoundSpec": "fedbound.pep.rounds", "round_method": "fedbound.pep.rounds",
    "TaskSpec": "fedbound.tasks.registry", "Claim": "fedbound.theory.claim", "Param": "fedbound.theory.claim",
    "Sampler": "fedbound.theory.claim", "compile_expr": "fedbound.theory.claim",
    "Result": "fedbound.theory.result", "Measure": "fedbound.theory.statement",
    "Provenance": "fedbound.theory.statement", "Domain": "fedbound.theory.symbols",
    "Predicate": "fedbound.theory.variant", "StepCondition": "fedbound.theory.variant",
    "Variant": "fedbound.theory.variant", "VerifyCheck": "fedbound.verify.registry",
    "theorem_check": "fedbound.verify.registry", "new_plugin": "fedbound.extend.template",
    "clipped_round": "fedbound.theory.certify.trace",
}


def __getattr__(name: str):
    """The building blocks of :data:`_EXPORTS`, from their modules on first use (a module itself
    where the entry ends in ``:``)."""
    if name in _EXPORTS:
        module, _, whole = _EXPORTS[name].partition(":")
        found = importlib.import_module(module)
        return found if whole == "" and _EXPORTS[name].endswith(":") else getattr(found, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _registry(module: str, name: str):
    return getattr(importlib.import_module(module), name)


def _caller() -> str:
    """The module that called the registering function (the registry records it as the origin,
    so that a clash names the plugin)."""
    return guard.caller_module(2)


def register_algorithm(spec: AlgorithmSpec) -> AlgorithmSpec:
    """Register an algorithm: ``fedbound run NAME``, sweeps, ``fixed-point NAME``, the fuzz suite."""
    return _registry("fedbound.algorithms.registry", "ALGORITHMS").register(spec, origin=_caller())


def register_result(result: Result) -> Result:
    """Register a theorem (its id ``"<scope>.<name>"``; its constants declared with
    :func:`declare_constant` in that scope): ``bound``, ``stepsize``, ``rounds``, ``constants``."""
    return _registry("fedbound.theory.registry", "RESULTS").register(result, origin=_caller())


def register_paper(paper: PaperAudit) -> PaperAudit:
    """Register a paper: its claims (``fedbound audit NAME``), its adapter (run -> constants) and
    hence its theorem checks (``fedbound verify NAME``)."""
    return _registry("fedbound.papers", "PAPERS").register(paper, origin=_caller())


def register_check(check: VerifyCheck) -> VerifyCheck:
    """Register a check of a paper's theory against runs (``fedbound verify PAPER CHECK``); most
    papers need only :func:`fedbound.verify.registry.theorem_check` of their main theorem."""
    return _registry("fedbound.verify.registry", "CHECKS").register(check, origin=_caller())


def register_pep_method(method: Method) -> Method:
    """Register a method for performance estimation (``fedbound pep NAME``)."""
    return _registry("fedbound.pep.method", "PEP_METHODS").register(method, origin=_caller())


def register_task(spec: TaskSpec) -> TaskSpec:
    """Register a task preset (``--task NAME`` of run, verify and sweep SPECs)."""
    return _registry("fedbound.tasks.registry", "TASKS").register(spec, origin=_caller())


def shared(name: str):
    """The sympy symbol of one of fedbound's shared constants (``L``, ``mu``, ``sigma``, ``gamma``,
    ``T``, ``n``, ``eps``), which every theorem sees under its short name."""
    return _registry("fedbound.theory.symbols", "constant")(name).symbol


def declare_constant(name: str, domain: Domain, meaning: str, *, scope: str, **fields):
    """Declare a constant of a theorem in ``scope`` (the paper's name, the prefix of its results'
    ids) with its domain and its meaning; ``fedbound constants RESULT`` lists it with the parts of
    the result that use it and the sources they cite, and errors about it quote the meaning.
    Declaring the same constant again with the same meaning is allowed (a re-imported plugin)."""
    return _registry("fedbound.theory.symbols", "declare")(name, domain, meaning, scope=scope, **fields)


__all__ = [
    "register_algorithm", "register_result", "register_paper", "register_check",
    "register_pep_method", "register_task", "declare_constant", "load_plugin", "PluginError",
    # the types and building blocks the built-ins use
    "AlgorithmSpec", "Federated", "client", "server", "options", "Option", "number_option",
    "integer_option", "choice_option", "TaskSpec", "Result", "Variant", "StepCondition",
    "Predicate", "Provenance", "Measure", "Domain", "shared", "PaperAudit", "Claim", "Param",
    "Sampler", "compile_expr", "VerifyCheck", "theorem_check", "Method", "Theory", "RoundSpec",
    "round_method", "ResultTheory", "new_plugin",
]
