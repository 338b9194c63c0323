"""Tasks by name: ``make_task(name, **kwargs)`` calls the seeded generator of the named task.

Names: "quadratic" (Quadratic.generate), "least_squares" (LeastSquares.generate), "logistic"
(LogisticRegression.generate), "robust_regression" (RobustRegression.generate), "heavy_tailed"
(HeavyTailedQuadratic.generate), "mlp" (MLPClassifier.generate). Keyword arguments go to the generator.
"""
from __future__ import annotations

from fedbound.errors import UnknownNameError
from fedbound.tasks.base import Task
from fedbound.tasks.classifier import MLPClassifier
from fedbound.tasks.heavy_tailed import HeavyTailedQuadratic
from fedbound.tasks.least_squares import LeastSquares
from fedbound.tasks.logistic import LogisticRegression
from fedbound.tasks.quadratic import Quadratic
from fedbound.tasks.robust_regression import RobustRegression

TASKS = {
    "quadratic": Quadratic,
    "least_squares": LeastSquares,
    "logistic": LogisticRegression,
    "robust_regression": RobustRegression,
    "heavy_tailed": HeavyTailedQuadratic,
    "mlp": MLPClassifier,
}


def make_task(name: str, **kwargs) -> Task:
    """The task ``name`` built by its seeded generator with ``kwargs``."""
    if name not in TASKS:
        raise UnknownNameError(f"unknown task {name!r}; valid names: {', '.join(TASKS)}")
    return TASKS[name].generate(**kwargs)
