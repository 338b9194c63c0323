"""The task and network flags of ``fedbound run``, ``fedbound verify`` and the closed-loop
controller run: declared by the task presets (:mod:`fedbound.tasks.registry`) and the network
options (:mod:`fedbound.network.build`), read back into a :class:`fedbound.algorithms.problem.Problem`.

The task is a preset (--task NAME with --n, --d, --rows, --seed, --float64, --weights) or a user's
.npz file (--data FILE.npz); the network is an SD-GT random geometric network (--rgg), S subnets of
one topology (--subnets S --topology NAME), or a JSON file (--network FILE.json).
"""
from __future__ import annotations

import argparse

from fedbound.cli.flags import add_flags, flag_table, given
from fedbound.network.build import NETWORK
from fedbound.tasks.registry import TASKS


def task_table(tasks=None):
    return flag_table(TASKS.get(t) for t in (tasks or TASKS.names()))


def add_problem_arguments(parser: argparse.ArgumentParser, tasks=None,
                          default_task: str = "quadratic") -> None:
    """Task and network flags (``tasks``: the presets the command takes; default all)."""
    names = tuple(tasks or TASKS.names())
    group = parser.add_argument_group("task")
    group.add_argument("--task", choices=names, default=default_task,
                       help=f"task preset (default {default_task}): " + "; ".join(
                           f"{t}: {TASKS.get(t).summary}" for t in names))
    add_flags(group, task_table(names))
    net = parser.add_argument_group("network (one of --rgg, --subnets/--topology, --network)")
    add_flags(net, flag_table([NETWORK]), users=False)


def task_options(args) -> dict:
    """The options of ``--task`` given on the command line (a flag the task does not take is an
    error naming it)."""
    return given(args, TASKS.get(args.task), task_table(), what=f"--task {args.task}")


def network_options(args) -> dict:
    return given(args, NETWORK, flag_table([NETWORK]), what="the network")


def problem_from(args, *, n: int | None = None, **task_defaults):
    """The :class:`~fedbound.algorithms.problem.Problem` of the flags (``task_defaults`` fill
    task options not given, e.g. float64 for verification)."""
    from fedbound.algorithms.problem import Problem   # imports torch: only for the commands that run

    options = {**task_defaults, **task_options(args)}
    return Problem(args.task, options, network_options(args), n=n,
                   device=getattr(args, "device", "cpu"))


__all__ = ["add_problem_arguments", "task_options", "network_options", "problem_from"]
