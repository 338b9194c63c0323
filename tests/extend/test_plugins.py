"""Plugins: loaded from ``--plugin`` (a module on sys.path or a .py file, repeatable), from
$FEDBOUND_PLUGINS (comma-separated) and from installed entry points; what they register is a
built-in for every command; every failure is one line naming the plugin, exit status 2. Each case
runs in its own process: a plugin registers into the process's registries."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]

ALGORITHM = """
from fedbound.extend import AlgorithmSpec, Federated, client, server, options, register_algorithm

class Mine(Federated):
    name = "Mine"
    def __init__(self, task, *, lr, local_steps=1, **round_options):
        super().__init__(task, client=client.sgd(lr), server=server.momentum(1.0, 0.5, nesterov=True),
                         local_steps=local_steps, **round_options)

register_algorithm(AlgorithmSpec({name!r}, Mine, "my method", "federated",
                                 (options.LR, options.LOCAL_STEPS, options.CLIENTS_PER_ROUND)))
"""


def fedbound(*args, plugins: dict[str, str] | None = None, env: dict | None = None, tmp: Path):
    """``python -m fedbound ARGS`` with the modules ``plugins`` (name -> source) written to ``tmp``
    and ``tmp`` on PYTHONPATH."""
    for name, source in (plugins or {}).items():
        (tmp / f"{name}.py").write_text(textwrap.dedent(source))
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp), str(ROOT)]), **(env or {})}
    environment.pop("FEDBOUND_PLUGINS", None) if "FEDBOUND_PLUGINS" not in (env or {}) else None
    out = subprocess.run([sys.executable, "-m", "fedbound", *args], capture_output=True, text=True,
                         env=environment, cwd=tmp, timeout=300)
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    return out


def one_error(out) -> str:
    """The single error line of a refused command (exit 2)."""
    errors = [line for line in out.stderr.splitlines() if line.startswith("fedbound: error:")]
    assert out.returncode == 2 and len(errors) == 1, (out.returncode, out.stderr)
    return errors[0]


def test_a_plugin_file_reaches_list_and_run(tmp_path):
    (tmp_path / "mine_file.py").write_text(ALGORITHM.format(name="mine"))
    out = fedbound("--plugin", str(tmp_path / "mine_file.py"), "list", "algorithms", tmp=tmp_path)
    assert out.returncode == 0 and "mine: my method" in out.stdout
    run = fedbound("--plugin", "mine_file.py", "run", "mine", "--lr", "0.05", "--rounds", "5",
                   "--out", "r", tmp=tmp_path)
    assert run.returncode == 0, run.stderr
    help_text = fedbound("--plugin", "mine_file.py", "run", "--help", tmp=tmp_path).stdout
    assert "mine" in help_text


def test_modules_from_the_environment_and_repeated_flags(tmp_path):
    plugins = {"first_plugin": ALGORITHM.format(name="first"), "second_plugin": ALGORITHM.format(name="second")}
    out = fedbound("list", "algorithms", "--json", plugins=plugins, tmp=tmp_path,
                   env={"FEDBOUND_PLUGINS": "first_plugin, second_plugin"})
    assert out.returncode == 0 and '"first"' in out.stdout and '"second"' in out.stdout
    out = fedbound("--plugin", "first_plugin", "--plugin", "second_plugin", "run", "second",
                   "--lr", "0.05", "--rounds", "3", "--out", "r2", tmp=tmp_path)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("source,words", [
    ("import no_such_module_anywhere\n", ["plugin broken", "failed to load", "ModuleNotFoundError",
                                          "no_such_module_anywhere"]),
    ("raise RuntimeError('my bug\\nsecond line')\n", ["plugin broken", "RuntimeError: my bug"]),
    (ALGORITHM.format(name="fedavg"), ["plugin broken", "algorithm 'fedavg' is already registered",
                                       "fedbound.algorithms.federated.fedopt", "broken registers it again"]),
    (ALGORITHM.replace("(options.LR,", "(number_option('lr', 'a step', low=0.0, default=-1.0),")
     .replace("import AlgorithmSpec", "import number_option, AlgorithmSpec").format(name="mine"),
     ["plugin broken", "option lr: its default -1.0 fails its own check"]),
    ("from fedbound.extend import Option\nOption('learning rate', 'x', lambda l, v: v)\n",
     ["plugin broken", "an option's name must be a Python identifier"]),
    ("from fedbound.extend import Option\nOption('lr', 'x', lambda l, v: v, required=True, default=1.0)\n",
     ["plugin broken", "a required option has no default"]),
])
def test_a_bad_plugin_is_one_line_naming_it(tmp_path, source, words):
    for how in (("--plugin", "broken", "list", "algorithms"), ("list", "algorithms")):
        env = {} if how[0] == "--plugin" else {"FEDBOUND_PLUGINS": "broken"}
        line = one_error(fedbound(*how, plugins={"broken": source}, env=env, tmp=tmp_path))
        for word in words:
            assert word in line, line
        assert ("--plugin" if how[0] == "--plugin" else "$FEDBOUND_PLUGINS") in line


def test_two_plugins_with_one_name_name_both(tmp_path):
    plugins = {"one_a": ALGORITHM.format(name="same"), "one_b": ALGORITHM.format(name="same")}
    line = one_error(fedbound("--plugin", "one_a", "--plugin", "one_b", "list", "algorithms",
                              plugins=plugins, tmp=tmp_path))
    assert "algorithm 'same' is already registered (by one_a); one_b registers it again" in line


def test_missing_file_and_broken_entry_point(tmp_path):
    line = one_error(fedbound("--plugin", "nowhere/mine.py", "list", tmp=tmp_path))
    assert "plugin nowhere/mine.py (--plugin): no such file" in line
    dist = tmp_path / "broken_dist-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-dist\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[fedbound.plugins]\nbroken = no_such_plugin_module\n")
    line = one_error(fedbound("list", "algorithms", tmp=tmp_path))
    assert "entry point 'broken' of fedbound.plugins" in line and "no_such_plugin_module" in line


@settings(max_examples=60, deadline=None)
@given(spec=st.one_of(st.sampled_from(["", " ", "\x00", "-", ".", "..", "a..b", "1abc", "x.py",
                                       "/", "no/such/file.py", "fedbound.__nonexistent__", "a,b"]),
                      st.text(max_size=30)))
def test_load_plugin_refuses_junk_with_a_plugin_error(spec):
    """Junk plugin names are a PluginError (one line), never another exception (in this process:
    none of them imports anything that registers)."""
    from fedbound.registry import PluginError, load_plugin
    if spec.strip() and spec.strip().replace(".", "").replace("_", "").isalnum() and not spec.strip()[0].isdigit():
        return      # could be an importable module of the environment: not junk
    try:
        load_plugin(spec)
    except PluginError as exc:
        assert str(exc) and "\n" not in str(exc).strip()


THEOREM = """
import numpy as np
from fedbound.extend import (Claim, PaperAudit, Param, Provenance, Result, Sampler, StepCondition,
                             Variant, compile_expr, register_paper, register_result, shared)

L, gamma = shared("L"), shared("gamma")
RATE = 1 - gamma * L
register_result(Result(
    id="toyproof.thm1", title="a contraction", statement="gamma <= 1/(2L) gives a rate in [1/2, 1)",
    provenance=Provenance("toyproof.py", "(1)", "1"), assumptions=("f L-smooth",),
    variants=[Variant("printed", "(1)", conditions=(StepCondition("(1)", 1 / (2 * L)),),
                      extras={"rate": RATE})]))
rate = compile_expr(RATE)
SAMPLER = Sampler((Param("L", 1e-3, 1e3), Param("gamma/cap", 1e-4, 1.0)),
                  lambda raw: {"L": raw["L"], "gamma": raw["gamma/cap"] / (2 * raw["L"])})


def claims():
    return [Claim("rate.half", "toyproof.thm1", "printed", "under (1), 1 - gamma L >= 1/2", "",
                  SAMPLER, lambda c: (np.full_like(c["L"], 0.5), rate(c))),
            Claim("rate.squared", "toyproof.thm1", "printed", "under (1), (1 - gamma L)^2 <= 1/2", "",
                  SAMPLER, lambda c: (rate(c) ** 2, np.full_like(c["L"], 0.5)))]


register_paper(PaperAudit("toyproof", "a contraction", "", claims))
"""


def test_a_plugins_sympy_theorem_gets_a_proof_and_an_exact_counterexample(tmp_path):
    """issue 32: claims written the ordinary way (compile_expr of the plugin's sympy), no certifier
    code: the true one is proved on its whole domain, the wrong one refuted in exact arithmetic."""
    import json

    out = fedbound("--plugin", "toyproof", "audit", "toyproof", "--samples", "300", "--iterations", "3",
                   "--json", plugins={"toyproof": THEOREM}, tmp=tmp_path)
    assert out.returncode == 0, out.stderr
    reports = {r["claim"]: r for r in json.loads(out.stdout)}
    half, squared = reports["rate.half"], reports["rate.squared"]
    assert half["verdict"] == "holds" and half["evidence"] == "proved"
    assert half["certificate"]["result"] == "unsat" and "L: (0, inf)" in half["certificate"]["domain"]
    assert squared["verdict"] == "fails" and squared["evidence"] == "refuted"
    point = squared["certificate"]["counterexample"]
    import sympy as sp
    L_, g = (sp.Rational(point["constants"][k]["exact"]) for k in ("L", "gamma"))
    assert g <= 1 / (2 * L_) and (1 - g * L_) ** 2 > sp.Rational(1, 2)          # re-checked here
    assert sp.Rational(point["ratio"]["exact"]) == 2 * (1 - g * L_) ** 2


def test_a_plugin_is_imported_only_by_the_commands_that_use_it(tmp_path):
    """Issue 33, item 6 (by module imports, not by timing; benchmarks/bench_cli_startup.py times
    it): what a plugin registers is indexed in the on-disk cache on its first import, after which
    a command that does not use it does not import it, one that does imports it, and an edited
    plugin is imported (and indexed) afresh."""
    seen = tmp_path / "imports.txt"
    source = f"open({str(seen)!r}, 'a').write('imported\\n')\n" + ALGORITHM.format(name="mine")
    env = {"FEDBOUND_PLUGINS": "sentinel_plugin", "FEDBOUND_CACHE_DIR": str(tmp_path / "cache")}
    plugins = {"sentinel_plugin": source}

    def imports() -> int:
        return seen.read_text().count("imported") if seen.exists() else 0

    assert fedbound("list", "algorithms", plugins=plugins, env=env, tmp=tmp_path).returncode == 0
    assert imports() == 1                                  # not indexed yet: imported, then indexed
    for argv in (["bound", "sdgt.thm3", "--set", "L=1", "mu=0.1", "K=2", "p=0.64", "q=0.5"],
                 ["stepsize", "sdgt.thm2", "--set", "L=1", "K=4", "p=0.64", "q=0.5"],
                 ["run", "fedavg", "--lr", "0.05", "--rounds", "2", "--out", "r1"],
                 ["list", "papers"]):
        out = fedbound(*argv, env=env, tmp=tmp_path)
        assert out.returncode == 0, out.stderr
        assert imports() == 1, f"fedbound {' '.join(argv)} imported a plugin it does not use"
    out = fedbound("run", "mine", "--lr", "0.05", "--rounds", "2", "--out", "r2", env=env, tmp=tmp_path)
    assert out.returncode == 0 and imports() == 2, out.stderr
    out = fedbound("run", "fedvg", "--lr", "0.05", env=env, tmp=tmp_path)    # did you mean, from the index
    assert "did you mean 'fedavg'" in one_error(out) and imports() == 2
    (tmp_path / "sentinel_plugin.py").write_text(source + "\n# edited\n")
    assert fedbound("bound", "sdgt.thm2", "--set", "L=1", "K=4", "p=0.64", "q=0.5", env=env,
                    tmp=tmp_path).returncode == 0
    assert imports() == 3                                  # a new version of its source: indexed again
