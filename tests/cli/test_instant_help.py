"""The CLI answers without the heavy dependencies (issue 24, item 2): importing ``fedbound.cli.main``
and ``fedbound --help`` (and the theory commands' ``--help``) load neither torch, cvxpy, PEPit, Ray
nor sympy (each costs seconds); the help lists every command with the summary its own parser
shows."""
import argparse
import subprocess
import sys

import pytest

from fedbound.cli.commands import COMMANDS, SUMMARIES
from fedbound.cli.main import build_parser

HEAVY = ("torch", "cvxpy", "PEPit", "ray", "sympy")


def _loaded_after(code: str) -> list[str]:
    probe = code + f"\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-1000:]
    return out.stdout.split()


def test_importing_the_cli_loads_no_heavy_dependency():
    assert _loaded_after("import fedbound.cli.main") == []


@pytest.mark.parametrize("argv", [["--help"], ["bound", "--help"], ["stepsize", "--help"],
                                  ["constants", "--help"], ["rounds", "--help"], ["list", "--help"]])
def test_help_loads_no_heavy_dependency(argv):
    code = ("import contextlib, io\nfrom fedbound.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    try:\n        main({argv!r})\n    except SystemExit:\n        pass")
    assert _loaded_after(code) == []


def test_every_command_has_its_summary_in_the_full_parser_too():
    assert set(SUMMARIES) == set(COMMANDS)
    sub = next(a for a in build_parser([])._actions if isinstance(a, argparse._SubParsersAction))
    assert {c.dest: c.help for c in sub._choices_actions} == SUMMARIES


def test_evaluating_a_bound_loads_no_torch():
    """`fedbound bound` reads the theory registry only: no torch (the adapters check a Task by
    fedbound.argtypes.InstanceOf, without importing fedbound.tasks), no cvxpy, PEPit or Ray."""
    code = ("import contextlib, io\nfrom fedbound.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['bound', 'sdgt.thm3', '--set', 'L=1', 'mu=0.1', 'K=2', 'p=0.64', 'q=0.5',"
            " 'n=30', 'sigma=0', 'gamma=1e-6', 'T=100', 'Lyap1=1', '--json']) == 0")
    assert [m for m in _loaded_after(code) if m != "sympy"] == []
