"""glibc's heap thresholds (fedbound.algorithms.heap): set once, at the first round, to glibc's own
ceilings; never where the user set malloc in the environment or the C library has no mallopt."""
import os
import subprocess
import sys

import pytest

from fedbound.algorithms import heap, registry
from fedbound.tasks import Quadratic


@pytest.fixture
def fresh(monkeypatch):
    """settle() not yet called in this process (its cache cleared before and after), no malloc
    variable in the environment, and the mallopt calls recorded instead of made."""
    calls = []
    for name in [n for n in os.environ if n.startswith("MALLOC_") or n == "GLIBC_TUNABLES"]:
        monkeypatch.delenv(name)
    monkeypatch.setattr(heap, "_mallopt", lambda: lambda param, value: calls.append((param, value)) or 1)
    heap.settle.cache_clear()
    yield calls
    heap.settle.cache_clear()


def test_the_first_round_sets_both_thresholds_once(fresh):
    alg = registry.build("fedavg", Quadratic.generate(4, 3, seed=0), seed=0, lr=0.1, local_steps=2)
    state = alg.init()
    for _ in range(3):
        state = alg.step(state)
    assert fresh == [(heap.M_MMAP_THRESHOLD, 32 * 2**20), (heap.M_TRIM_THRESHOLD, 64 * 2**20)]


@pytest.mark.parametrize("name", ["MALLOC_TRIM_THRESHOLD_", "MALLOC_ARENA_MAX", "GLIBC_TUNABLES"])
def test_a_users_malloc_setting_wins(fresh, monkeypatch, name):
    monkeypatch.setenv(name, "1")
    assert heap.settle() is False
    assert fresh == []


def test_no_glibc_no_setting_and_no_error(fresh, monkeypatch):
    monkeypatch.setattr(heap, "_mallopt", lambda: None)
    assert heap.settle() is False


def test_a_refused_setting_reads_as_not_set(fresh, monkeypatch):
    monkeypatch.setattr(heap, "_mallopt", lambda: lambda param, value: 0)   # mallopt's failure
    assert heap.settle() is False


@pytest.mark.skipif(not sys.platform.startswith("linux") or heap._mallopt() is None,
                    reason="glibc's mallopt only")
def test_glibc_takes_the_thresholds_in_a_fresh_process():
    code = ("from fedbound.algorithms import heap, registry\nfrom fedbound.tasks import Quadratic\n"
            "a = registry.build('fedavg', Quadratic.generate(4, 3, seed=0), seed=0, lr=0.1)\n"
            "a.step(a.init())\nprint(heap.settle())")
    env = {k: v for k, v in os.environ.items() if not (k.startswith("MALLOC_") or k == "GLIBC_TUNABLES")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**env, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.split() == ["True"]   # glibc's mallopt accepted both values
