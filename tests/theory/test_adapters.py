"""The contract of the per-paper adapters (fedbound.theory.adapters): every adapter reads exactly
the registry's options of the algorithms it covers, its defaults give the same runs as the
algorithms' own, the dispatch finds the paper of an algorithm, and the theory imports no algorithm."""
import doctest
import os
import pathlib
import subprocess
import sys

import pytest
import torch

import fedbound.theory.sdgt.adapter
import fedbound.verify.setting
from fedbound.algorithms import registry, run
from fedbound.errors import UnknownNameError, ValidationError
from fedbound.network import Network
from fedbound.tasks import Quadratic
from fedbound.theory import adapters
from fedbound.theory.adapters import REQUIRED

ADAPTERS = [adapters.paper_adapter(paper) for paper in adapters.papers()]
COVERED = [(module, name) for module in ADAPTERS for name in module.ALGORITHMS]
#: options an algorithm needs besides the adapter's REQUIRED ones, for a run to exist at all
BASE = {"lr": 0.05, "proximal_mu": 0.2}


@pytest.mark.parametrize("case", COVERED, ids=lambda c: c[1])
def test_adapter_reads_exactly_the_registry_options(case):
    module, name = case
    registered = {o.name for o in registry.get(name).options}
    assert set(module.DEFAULTS[name]) | set(module.IGNORED[name]) == registered
    assert not set(module.DEFAULTS[name]) & set(module.IGNORED[name])


def _problem(name):
    """(task, network) small enough for two rounds of any covered algorithm (CAFGA: 5 clusters)."""
    task = Quadratic.generate(10, 3, kappa=4.0, mu=0.5, seed=0)
    return task, (Network.from_topology("ring", 2, 5) if registry.get(name).network == "required" else None)


def _final(name, options):
    task, network = _problem(name)
    return run(registry.build(name, task, network, seed=3, **options), 2).x_g[-1]


DEFAULTED = [(module, name, option, default) for module, name in COVERED
             for option, default in module.DEFAULTS[name].items()
             if default is not None and default is not REQUIRED]


@pytest.mark.parametrize("case", DEFAULTED, ids=lambda c: f"{c[1]}-{c[2]}")
def test_adapter_default_is_the_algorithms_default(case):
    """Giving the adapter's default explicitly runs exactly what leaving the option out runs."""
    module, name, option, default = case
    base = {k: v for k, v in BASE.items() if module.DEFAULTS[name].get(k) is REQUIRED}
    assert torch.equal(_final(name, base), _final(name, {**base, option: default}))


@pytest.mark.parametrize("case", COVERED, ids=lambda c: c[1])
def test_dispatch_finds_the_paper(case):
    module, name = case
    assert adapters.adapter(name) is module


def test_uncovered_algorithms_are_named():
    with pytest.raises(UnknownNameError, match="no paper's theorems cover the algorithm 'fedadam'"):
        adapters.adapter("fedadam")
    with pytest.raises(UnknownNameError, match="did you mean 'sdgt'"):
        adapters.adapter("sdg")
    with pytest.raises(UnknownNameError, match="SD-GT's theorems do not cover the algorithm 'fedavg'"):
        fedbound.theory.sdgt.adapter.constants(*_problem("sdgt"), "fedavg", {})


def test_run_options_refuses_unknown_and_missing_options():
    defaults = {"lr": REQUIRED, "local_steps": 1}
    with pytest.raises(UnknownNameError, match="did you mean 'local_steps'"):
        adapters.run_options("P", "alg", {"lr": 1.0, "local_step": 2}, defaults)
    with pytest.raises(ValidationError, match="need the option.s. lr"):
        adapters.run_options("P", "alg", {}, defaults)
    assert adapters.run_options("P", "alg", {"lr": 1.0, "local_steps": None, "x": 3}, defaults, ("x",)) == \
        {"lr": 1.0, "local_steps": 1, "x": 3}


def test_deprecated_option_names_are_refused():
    """The adapters read the registry's names only: an old spelling is an error, not a silent default."""
    with pytest.raises(UnknownNameError, match="gamma"):
        adapters.constants(*_problem("sdgt"), "sdgt", {"gamma": 0.1})


def test_theory_adapters_import_no_algorithm():
    code = ("import sys, fedbound.theory.adapters as a\n"
            "for p in a.papers(): a.paper_adapter(p)\n"
            "bad = sorted(m for m in sys.modules if m.startswith(('fedbound.algorithms', 'fedbound.verify')))\n"
            "assert not bad, bad\n")
    root = str(pathlib.Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


@pytest.mark.parametrize("module", [fedbound.theory.sdgt.adapter, fedbound.verify.setting],
                         ids=lambda m: m.__name__)
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
