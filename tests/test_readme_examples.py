"""The command lines of the README run as written (issue 20: "the CLI examples of the README keep
working"), scaled down where they would take minutes (fewer rounds, seeds and audit samples; Ray
left out: tests/sweep/test_ray.py covers it), with the data files the README describes (mine.npz,
quad.npz, and its net.json and grid.json blocks)."""
import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from fedbound.cli.main import main

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
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
    net, grid = JSON_BLOCKS
    (path / "net.json").write_text(json.dumps(net))
    (path / "grid.json").write_text(json.dumps({**grid, "rounds": 5}))
    return path


def test_the_readme_has_commands():
    assert len(COMMANDS) >= 25 and len(JSON_BLOCKS) == 2


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_runs(command, folder, monkeypatch, capsys):
    monkeypatch.chdir(folder)
    argv = scaled(shlex.split(command)[1:])
    if argv[:2] == ["sweep", "report"]:     # the report reads the README's sweep: run it here
        assert main(["sweep", "grid.json", "--out", argv[2], "--overwrite"]) == 0
    if "--out" in argv:
        argv.append("--overwrite")
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 0 or (code == 1 and argv[0] == "verify"), f"{command}: exit {code}\n{err[-800:]}"
    assert "warning" not in err, f"{command}: {err[-800:]}"   # the README uses no deprecated spelling
