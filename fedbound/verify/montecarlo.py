r"""Monte-Carlo expectations of a function of the seed, with confidence intervals
(:func:`fedbound.stats.mean_ci`), computed through :func:`fedbound.sweep.evaluate` (in this process,
or on Ray inside ``fedbound.sweep.using``).

>>> import numpy as np
>>> float(monte_carlo(lambda seed: np.float64(seed), 4).mean)
1.5
"""
from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from fedbound import validate
from fedbound.stats import Estimate, mean_ci
from fedbound.sweep import evaluate


def monte_carlo(fn: Callable[[int], np.ndarray], seeds: Iterable[int] | int,
                confidence: float = 0.95, nonnegative: bool = False) -> Estimate:
    """Run ``fn(seed)`` for every seed (``seeds`` an int R means seeds 0..R-1) and estimate the
    expectation of its (array) output with :func:`mean_ci`; ``nonnegative``: the output cannot be
    negative, and the interval stays within [0, inf). The runs go through
    :func:`fedbound.sweep.evaluate`: in this process, or on Ray inside ``fedbound.sweep.using``."""
    confidence = validate.number("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    outputs = evaluate(lambda seed: np.asarray(fn(seed)), seeds=seeds)
    return outputs.estimate(confidence, nonnegative)


__all__ = ["Estimate", "mean_ci", "monte_carlo"]
