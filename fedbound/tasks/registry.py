"""Tasks by name, as entries of the one registry (:mod:`fedbound.registry`): the task presets that
``fedbound run --task NAME``, sweep SPECs (``"task": {"name": ...}``) and :func:`make_task` build,
each with its options declared once.

    >>> from fedbound.tasks import make_task
    >>> task = make_task("lsq", n=4, d=3, rows=5, seed=1)
    >>> task.n, task.d
    (4, 3)

Options (the same names on the command line, ``--n``, ``--d``, ...): ``n`` clients (default 12),
``d`` dimension (default per task), ``rows`` per client of generated least squares (default 30),
``seed`` of the generator, ``float64`` (default float32; verification uses float64), ``weights``
(uniform, or by the clients' numbers of examples for the tasks whose clients hold examples),
``data`` (a user's .npz: least squares keys A (n, m, d) and y (n, m), f_i(x) = 1/(2m)
||A_i x - y_i||^2; quadratic keys H (n, d, d), b (n, d) and optional p (n,),
f_i(x) = 1/2 (x - b_i)^T H_i (x - b_i)). A task takes only the options that apply to it; another one
is an error naming it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import torch

from fedbound.deprecation import deprecated
from fedbound.errors import ValidationError, require
from fedbound.registry import Entry, Option, Registry, choice_option, integer_option
from fedbound.tasks.base import Task
from fedbound.validate import boolean
from fedbound.validate import seed as check_seed

DEFAULT_N = 12
DEFAULT_ROWS = 30


@dataclass(frozen=True, repr=False)
class TaskSpec(Entry):
    """A task preset: ``name``, ``build(**options) -> Task`` (the checked options by name),
    one-line ``summary``, ``options`` (those of :data:`TASK_OPTIONS` it takes, or its own)."""

    name: str
    build: Callable[..., Task]
    summary: str
    options: tuple[Option, ...] = ()


TASKS: Registry[TaskSpec] = Registry("task", TaskSpec, packages=("fedbound.tasks",))
register = TASKS.register


def _path(label, value) -> str:
    if not isinstance(value, (str, os.PathLike)):
        raise ValidationError(f"{label} must be a file path, got {value!r:.60}")
    if not os.path.isfile(value):
        raise ValidationError(f"{label}: data file {os.fspath(value)!r:.80} does not exist")
    return os.fspath(value)


N = integer_option("n", f"number of clients (default {DEFAULT_N}, or the data's)", low=1,
                   examples=(4, 6))
D = integer_option("d", "model / feature dimension (default per task)", low=1, examples=(3, 5))
ROWS = integer_option("rows", f"rows per client of generated least squares (default {DEFAULT_ROWS})",
                      low=1, examples=(5, 8))
SEED = Option("seed", "seed of the task generator (default 0)", lambda label, v: check_seed(v, label),
              int, default=0, examples=(0, 3))
FLOAT64 = Option("float64", "float64 tensors (default float32; verification uses float64)",
                 boolean, bool, examples=(True, False))
WEIGHTS = choice_option("weights", "aggregation weights p_i: uniform (default) or proportional to each "
                        "client's number of examples", ("uniform", "examples"),
                        examples=("uniform", "examples"))
DATA = Option("data", "a user's .npz data file (least squares: A, y; quadratic: H, b, optional p)",
              _path, examples=())
#: the options of every task preset: each takes those that apply to it
TASK_OPTIONS = (DATA, N, D, ROWS, SEED, FLOAT64, WEIGHTS)


def dtype_of(options: dict) -> torch.dtype:
    return torch.float64 if options.get("float64") else torch.float32


#: make_task's names before issue 20, which called the generators with their own keywords
_GENERATOR_NAMES = {"least_squares": ("lsq", "fedbound.tasks.least_squares:LeastSquares"),
                    "robust_regression": ("robust", "fedbound.tasks.robust_regression:RobustRegression"),
                    "heavy_tailed": ("heavy-tailed", "fedbound.tasks.heavy_tailed:HeavyTailedQuadratic"),
                    "mlp": ("mlp-gmm", "fedbound.tasks.classifier:MLPClassifier")}


def make_task(name: str, **options) -> Task:
    """The task ``name`` built with ``options`` (validated: unknown names refused, values checked).
    The old names least_squares, robust_regression, heavy_tailed and mlp still call their
    generators with the generators' keywords, and warn."""
    if name in _GENERATOR_NAMES:
        import importlib

        new, target = _GENERATOR_NAMES[name]
        module, _, cls = target.partition(":")
        deprecated(f"make_task({name!r}, ...)", f"make_task({new!r}, ...) or {cls}.generate(...)")
        return getattr(importlib.import_module(module), cls).generate(**options)
    spec = TASKS.get(name)
    return spec.build(**spec.check(options))


def read_data(path: str | os.PathLike, loader: Callable, kind: str, dtype: torch.dtype, n: int | None) -> Task:
    """The task of a user's .npz file ``path`` by ``loader`` (a ``from_npz``); an unreadable file is
    a ValidationError naming the keys of --task ``kind``; ``n`` if given must match."""
    require(os.path.isfile(path), f"data file {path!r} does not exist")
    try:
        task = loader(path, dtype=dtype)
    except ValidationError:
        raise
    except (ValueError, OSError, EOFError):
        raise ValidationError(f"data file {path!r} is not a readable .npz archive with the keys "
                              f"of --task {kind}") from None
    require(n is None or n == task.n, f"n = {n} does not match the {task.n} clients of {path}")
    return task


def n_or_default(n: int | None) -> int:
    return DEFAULT_N if n is None else n


__all__ = ["TaskSpec", "TASKS", "TASK_OPTIONS", "DEFAULT_N", "DEFAULT_ROWS", "make_task", "register",
           "read_data", "n_or_default", "dtype_of"]
