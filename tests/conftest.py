"""Suite-wide hypothesis settings, the suite's cache folder, and the ``register_temporarily`` and
``lsq_file`` fixtures.

No per-example deadline: CI shares 2 cores and timing is not what these properties test. Under CI
(the CI environment variable) the examples are derandomized, so a CI run is reproducible; locally
hypothesis explores new examples on every run.
"""
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))  # html_checks (the suite runs with importlib mode)

# the suite's own on-disk cache (fedbound.cache): a user's cache is neither read nor written
os.environ.setdefault("FEDBOUND_CACHE_DIR", tempfile.mkdtemp(prefix="fedbound-test-cache-"))

settings.register_profile("fedbound", deadline=None, print_blob=True)
settings.register_profile("ci", parent=settings.get_profile("fedbound"), derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "fedbound")


# hypothesis's pytest plugin wraps a parametrized test's settings in a new Settings (parent = the
# previous ones) at every invocation (_hypothesis_pytestplugin.py, "differing_executors"), so one
# function with ~1000 parametrized cases in one process ends in a RecursionError when hypothesis
# walks the chain. Each invocation starts again from the settings the test was decorated with.
_DECORATED_SETTINGS: dict = {}


def _test_function(item):
    obj = getattr(item, "obj", None)
    return getattr(obj, "__func__", obj)


def pytest_runtest_setup(item):
    fn = _test_function(item)
    if fn is not None and hasattr(fn, "_hypothesis_internal_use_settings"):
        original = _DECORATED_SETTINGS.setdefault(fn, fn._hypothesis_internal_use_settings)
        fn._hypothesis_internal_use_settings = original


#: the test modules that take a minute or more of one core (pytest --durations), in that order:
#: collected first, so that each starts while the other worker has work too, instead of one of
#: them running alone at the end (``make test`` schedules with ``--dist worksteal``: an idle worker
#: takes the other's queue from its end, so these, at the front, are never split)
FIRST = ("test_docs.py", "golden/test_golden.py", "test_readme_examples.py", "cli/test_demo_cli.py",
         "cli/test_theory_cli.py", "theory/test_sdgt_referee.py", "extend/test_plugin_package.py",
         "theory/test_sdgt_thm3.py", "test_notebooks.py", "sweep/test_ray.py")
TESTS = Path(__file__).parent


def pytest_collection_modifyitems(config, items):
    """The modules of :data:`FIRST` first (a stable sort: every other order is kept)."""
    rank = {name: i for i, name in enumerate(FIRST)}

    def key(item):
        try:
            return rank.get(Path(str(item.fspath)).relative_to(TESTS).as_posix(), len(FIRST))
        except ValueError:      # a test outside tests/ (a doctest of the package)
            return len(FIRST)
    items.sort(key=key)


@pytest.fixture(autouse=True)
def _deprecations_warn_again(monkeypatch):
    """Every test starts with no deprecation warned yet (fedbound.deprecation warns once per
    process): a test that expects a warning gets it whatever ran before it on its worker."""
    from fedbound import deprecation

    monkeypatch.setattr(deprecation, "_WARNED", set())


@pytest.fixture
def register_temporarily(monkeypatch):
    """``register_temporarily(registry, *entries)``: the entries registered in the registry
    (:class:`fedbound.registry.Registry`) for this test only; its entries are restored after it."""
    def register(registry, *entries):
        registry.load()
        for attribute in ("_entries", "_origins"):
            monkeypatch.setattr(registry, attribute, dict(getattr(registry, attribute)))
        monkeypatch.setattr(registry, "_order", None)
        for entry in entries:
            registry.register(entry)
    return register


@pytest.fixture
def register_toy_results(monkeypatch, register_temporarily):
    """``register_toy_results(build)``: the results ``build()`` returns (by id), registered with the
    constants it declares, in result and symbol registries restored after the test."""
    from fedbound.theory import RESULTS, results
    from fedbound.theory import symbols as S

    def register(build):
        results()
        monkeypatch.setattr(S, "_REGISTRY", dict(S._REGISTRY))
        monkeypatch.setattr(S, "_BY_SYMBOL", dict(S._BY_SYMBOL))
        built = build()
        register_temporarily(RESULTS, *built.values())
        return built
    return register


@pytest.fixture
def lsq_file(tmp_path):
    """A least-squares data file (A (8, 10, 3), y (8, 10), seeded) for ``--data`` and
    LeastSquares.from_npz."""
    rng = np.random.default_rng(0)
    path = tmp_path / "data.npz"
    np.savez(path, A=rng.normal(size=(8, 10, 3)), y=rng.normal(size=(8, 10)))
    return path
