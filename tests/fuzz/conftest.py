"""The fuzz suite (issue 8): a low memory budget so that a valid but huge value is refused up
front instead of allocating, and the number of cases in the terminal summary."""
import os
import sys
from pathlib import Path

import pytest
from hypothesis import Phase, settings

from fedbound import resources

sys.path.insert(0, str(Path(__file__).parent))  # fuzz_values (the suite runs with importlib mode)

FUZZ_BUDGET = "256M"

if os.environ.get("FEDBOUND_FUZZ_NO_SHRINK"):   # a quick list of failures, without minimal examples
    settings.register_profile("fuzz-no-shrink", parent=settings.get_profile(settings._current_profile),
                              phases=[Phase.explicit, Phase.reuse, Phase.generate])
    settings.load_profile("fuzz-no-shrink")


@pytest.fixture(autouse=True, scope="module")
def _small_memory_budget():
    resources.set_memory_budget(FUZZ_BUDGET)
    yield
    resources.set_memory_budget(None)


@pytest.fixture(autouse=True, scope="module")
def _scratch_directory(tmp_path_factory):
    """Fuzzed relative paths (an --out of "nan") land in a scratch folder, not in the checkout."""
    before = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(before)


def pytest_terminal_summary(terminalreporter):
    CASES = getattr(sys.modules.get("fuzz_values"), "CASES", None)
    if CASES:
        parts = ", ".join(f"{k} {v}" for k, v in sorted(CASES.items()))
        terminalreporter.write_line(f"fuzz cases: {sum(CASES.values())} ({parts})")
