"""fedbound.run with an algorithm already built (fedbound.api.run): it runs as built, and any of the
arguments that would build one (task, seed, sigma, options) is a clear error, not ignored."""
import numpy as np
import pytest

import fedbound
from fedbound.algorithms import registry
from fedbound.algorithms import run as run_rounds
from fedbound.errors import InputTypeError, ValidationError
from fedbound.tasks import make_task


def built():
    return registry.build("fedavg", make_task("quadratic", n=6, d=3, float64=True), lr=0.1,
                          clients_per_round=3, seed=4)


def test_a_built_algorithm_runs_as_the_algorithms_run_does():
    mine = fedbound.run(built(), rounds=12, eval_every=4)
    theirs = run_rounds(built(), 12, eval_every=4)
    for name in ("loss", "dist2", "grad_norm2"):   # float64, the same rounds in one process
        np.testing.assert_allclose(mine.metrics[name], theirs.metrics[name], rtol=1e-12, atol=0)
    assert len(mine.metrics["loss"]) == 13


@pytest.mark.parametrize("given, named", [
    ({"task": "lsq"}, "task"),
    ({"seed": 0}, "seed"),
    ({"sigma": 0.1}, "sigma"),
    ({"task_options": {}}, "task_options"),
    ({"network_options": {"subnets": 2}}, "network_options"),
    ({"lr": 0.2, "local_steps": 3}, "local_steps, lr"),
])
def test_building_arguments_with_a_built_algorithm_are_an_error(given, named):
    with pytest.raises(ValidationError, match=f"already built.*not {named}$"):
        fedbound.run(built(), rounds=2, **given)


def test_the_defaults_of_a_named_algorithm_are_unchanged():
    """task None is the quadratic preset and seed None is 0, as the defaults were before."""
    options = {"rounds": 5, "lr": 0.1, "clients_per_round": 2, "task_options": {"n": 5, "d": 2}}
    default = fedbound.run("fedavg", **options)
    spelled = fedbound.run("fedavg", "quadratic", seed=0, **options)
    np.testing.assert_allclose(default.metrics["loss"], spelled.metrics["loss"], rtol=1e-12, atol=0)


def test_neither_a_name_nor_an_algorithm_is_a_type_error():
    with pytest.raises(InputTypeError, match="a string or a fedbound Algorithm"):
        fedbound.run(3)
