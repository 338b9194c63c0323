"""The property-test examples of fedbound.testing (code blocks that define ``test_`` functions, not
doctests: tests/test_docstring_examples.py runs the doctests of every module) stay runnable."""
import textwrap

import pytest

import fedbound.testing
import fedbound.testing.assertions
import fedbound.testing.strategies


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
