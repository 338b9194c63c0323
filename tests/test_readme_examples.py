"""The command lines of the README run as written (issue 20: "the CLI examples of the README keep
working"), scaled down where they would take minutes (fewer rounds, seeds and audit samples; Ray
left out: tests/sweep/test_ray.py covers it), with the data files the README describes (mine.npz,
quad.npz, clients.npz, and its net.json and grid.json blocks). The commands of "Extending fedbound" run in a
subprocess with the plugin the README writes (`fedbound new plugin mine --name nesterov`) on
PYTHONPATH and in FEDBOUND_PLUGINS, so that it registers nothing in this process."""
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fedbound.cli.commands import EXIT_VIOLATED
from fedbound.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
#: the README's plugin (its "Extending fedbound" section)
PLUGIN, PLUGIN_DIR = "nesterov", "mine"
COMMANDS = [line.split("  #")[0].strip() for block in re.findall(r"```bash\n(.*?)```", README, re.S)
            for line in block.splitlines() if line.startswith("fedbound ")]
JSON_BLOCKS = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", README, re.S)]

#: flag -> the largest value the test gives it
CAPS = {"--rounds": 5, "--seeds": 4, "--samples": 200, "--iterations": 2}


def scaled(argv: list[str]) -> list[str]:
    out, i = [], 0
    while i < len(argv):
        if argv[i] == "--ray":
            i += 1
            continue
        if argv[i] in CAPS and i + 1 < len(argv):
            out += [argv[i], str(min(int(argv[i + 1]), CAPS[argv[i]]))]
            i += 2
            continue
        out.append(argv[i])
        i += 1
    if out[0] == "audit":
        out += [flag for name, value in (("--samples", "200"), ("--iterations", "2"))
                if name not in out for flag in (name, value)]
    if out[0] == "verify" and "--rounds" not in out:
        out += ["--rounds", "60"]
    return out


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The files the README's commands read."""
    path = tmp_path_factory.mktemp("readme")
    rng = np.random.default_rng(0)
    np.savez(path / "mine.npz", A=rng.normal(size=(12, 8, 5)), y=rng.normal(size=(12, 8)))
    np.savez(path / "quad.npz", H=np.stack([np.diag(rng.uniform(0.5, 2.0, 3)) for _ in range(5)]),
             b=rng.normal(size=(5, 3)))
    np.savez(path / "clients.npz", features=rng.uniform(0, 1, size=(60, 64)), labels=np.arange(60) % 10,
             partition=np.arange(60) % 12)
    net, grid = JSON_BLOCKS
    (path / "net.json").write_text(json.dumps(net))
    (path / "grid.json").write_text(json.dumps({**grid, "rounds": 5}))
    return path


def test_the_readme_has_commands():
    assert len(COMMANDS) >= 25 and len(JSON_BLOCKS) == 2


def uses_the_plugin(argv: list[str]) -> bool:
    return argv[:2] != ["new", "plugin"] and any(a.split(".")[0] == PLUGIN for a in argv)


@pytest.fixture(scope="module")
def plugin_env(folder):
    """The environment of a shell where the README's plugin is installed."""
    assert main(["new", "plugin", str(folder / PLUGIN_DIR), "--name", PLUGIN, "--overwrite"]) == 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder / PLUGIN_DIR), str(ROOT)]),
           "FEDBOUND_PLUGINS": f"fedbound_{PLUGIN}"}
    return env


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_runs(command, folder, monkeypatch, capsys, request):
    monkeypatch.chdir(folder)
    argv = scaled(shlex.split(command)[1:])
    if argv[:2] == ["new", "plugin"]:       # written elsewhere: the plugin's commands use `mine`
        argv[2] = str(folder / "new-plugin")
    if uses_the_plugin(argv):
        if "--out" in argv:
            argv.append("--overwrite")
        out = subprocess.run([sys.executable, "-m", "fedbound", *argv], capture_output=True, text=True,
                             cwd=folder, env=request.getfixturevalue("plugin_env"), timeout=600)
        assert out.returncode == 0, f"{command}: exit {out.returncode}\n{out.stderr[-800:]}"
        assert "warning" not in out.stderr and PLUGIN in out.stdout, f"{command}: {out.stderr[-800:]}"
        return
    if argv[:2] == ["sweep", "report"]:     # the report reads the README's sweep: run it here
        assert main(["sweep", "grid.json", "--out", argv[2], "--overwrite"]) == 0
    if "--out" in argv:
        argv.append("--overwrite")
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 0 or (code == EXIT_VIOLATED and argv[0] == "verify"), f"{command}: exit {code}\n{err[-800:]}"
    assert "warning" not in err, f"{command}: {err[-800:]}"   # the README uses no deprecated spelling


PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


def test_the_readme_has_a_python_example_per_job():
    """Issue 33, item 2: a Python example of every job's entry, and the Result example."""
    code = "\n".join(PYTHON_BLOCKS)
    import fedbound

    assert all(f"fedbound.{job}(" in code for job in fedbound.JOBS), [j for j in fedbound.JOBS
                                                                      if f"fedbound.{j}(" not in code]
    assert "Result(" in code


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_readme_python_runs(index, tmp_path, monkeypatch, capsys):
    """Every Python block of the README runs as written (in a scratch folder), without a
    deprecation warning (the README uses no old spelling)."""
    import warnings

    from fedbound.deprecation import FedboundDeprecationWarning

    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FedboundDeprecationWarning)
        exec(compile(PYTHON_BLOCKS[index], f"README python block {index}", "exec"), {})
