"""Every docstring example of the package runs (issue 20 item 9): the doctests (``>>>`` lines) of
every module of fedbound, found by walking the package (a new module's examples are covered without
being listed), with their printed results compared."""
import doctest
import importlib
import pkgutil

import pytest

import fedbound

#: modules that are not imported for their examples: the command's entry point runs on import
NOT_IMPORTED = ("fedbound.__main__",)


def modules_with_examples() -> list[str]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    out = []
    names = ["fedbound"] + [info.name for info in pkgutil.walk_packages(fedbound.__path__, "fedbound.")]
    for name in names:      # the package itself too: its face shows the job entries
        if name in NOT_IMPORTED:
            continue
        module = importlib.import_module(name)
        if any(t.examples for t in finder.find(module, module=module)):
            out.append(name)
    return sorted(out)


MODULES = modules_with_examples()


def test_the_examples_are_found():
    """The walk finds the examples of every layer (an empty walk would pass every test below)."""
    layers = {name.split(".")[1] for name in MODULES if "." in name}
    assert {"algorithms", "tasks", "theory", "verify", "sweep", "registry", "api"} <= layers, layers
    assert "fedbound" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed"
