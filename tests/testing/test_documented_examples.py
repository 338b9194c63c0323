"""The runnable examples in the docstrings of fedbound.testing, fedbound.verify and the Python grids
of fedbound.sweep stay runnable."""
import doctest
import textwrap

import pytest

import fedbound.sweep.evaluation
import fedbound.sweep.grid
import fedbound.testing
import fedbound.testing.assertions
import fedbound.testing.strategies
import fedbound.verify
import fedbound.verify.montecarlo
import fedbound.verify.rates


@pytest.mark.parametrize("module", [fedbound.testing, fedbound.testing.assertions,
                                    fedbound.testing.strategies])
def test_code_block_example_runs(module):
    block = module.__doc__.split("::\n\n", 1)[1]
    lines = [line for line in block.splitlines() if line.startswith("    ") or not line.strip()]
    namespace: dict = {}
    exec(textwrap.dedent("\n".join(lines)), namespace)
    for name, value in namespace.items():
        if name.startswith("test_") and callable(value):
            value()


@pytest.mark.parametrize("module", [fedbound.verify, fedbound.verify.montecarlo,
                                    fedbound.verify.rates, fedbound.sweep.grid,
                                    fedbound.sweep.evaluation])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
