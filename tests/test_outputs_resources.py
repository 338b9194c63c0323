"""fedbound.outputs (atomic files, output folders) and fedbound.resources (memory budget)."""
import os

import numpy as np
import pytest

from fedbound import resources
from fedbound.errors import OutputError, ResourceLimitError, ValidationError
from fedbound.network import Network
from fedbound.outputs import (STATUS_FILE, OutputFolder, atomic_open, atomic_path, status,
                              write_json, write_text)
from fedbound.tasks import LeastSquares


def test_atomic_write_replaces_whole_file_or_nothing(tmp_path):
    path = tmp_path / "a.txt"
    write_text(path, "old")
    with pytest.raises(RuntimeError):
        with atomic_open(path) as fh:
            fh.write("half of the new")
            raise RuntimeError("interrupted")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["a.txt"]
    with atomic_path(tmp_path / "x.npy") as tmp:
        assert tmp.suffix == ".npy" and tmp.parent == tmp_path
        np.save(tmp, np.arange(3))
    assert np.load(tmp_path / "x.npy").tolist() == [0, 1, 2]
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "x.npy"]


def test_write_json_is_strict(tmp_path):
    write_json(tmp_path / "v.json", {"a": float("nan"), "b": [float("inf")], "c": np.float32(2)})
    assert (tmp_path / "v.json").read_text().replace(" ", "").replace("\n", "") == \
        '{"a":"nan","b":["inf"],"c":2.0}'


def test_output_folder_rules(tmp_path):
    new = OutputFolder(tmp_path / "a" / "b").check()
    assert not (tmp_path / "a").exists()            # check has no side effect
    assert new.create() == tmp_path / "a" / "b" and status(tmp_path / "a" / "b") == "incomplete"
    new.complete()
    assert status(tmp_path / "a" / "b") == "complete"
    with pytest.raises(OutputError, match="holds a complete fedbound output; pass --overwrite"):
        OutputFolder(tmp_path / "a" / "b").check()
    OutputFolder(tmp_path / "a" / "b", overwrite=True).check()
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="is a file, not a folder"):
        OutputFolder(tmp_path / "f").check()
    with pytest.raises(OutputError, match="cannot be created: .* is a file"):
        OutputFolder(tmp_path / "f" / "sub").check()
    with pytest.raises(OutputError, match="is not empty"):
        OutputFolder(tmp_path / "a").check()
    with pytest.raises(OutputError, match="NUL"):
        OutputFolder("bad\x00name").check()
    incomplete = OutputFolder(tmp_path / "c")
    incomplete.create()
    OutputFolder(tmp_path / "c", resume=True).check()   # a command that can resume may continue it
    empty = tmp_path / "empty"
    empty.mkdir()
    OutputFolder(empty).check()                          # an empty folder is fine
    assert STATUS_FILE not in os.listdir(empty)


def test_memory_budget_setter_and_environment(monkeypatch):
    monkeypatch.setenv(resources.ENV_VAR, "1M")
    assert resources.memory_budget() == 2 ** 20
    with pytest.raises(ResourceLimitError, match=r"needs about 7.63 MiB of memory, over the budget of 1 MiB"):
        resources.require_memory("a thing", 10 ** 6)
    with pytest.raises(ResourceLimitError, match="memory"):
        Network.from_topology("ring", 4, 300)
    with pytest.raises(ResourceLimitError, match="least squares with n = 30, m = 30, d = 200"):
        LeastSquares.generate(30, 30, 200)
    monkeypatch.setenv(resources.ENV_VAR, "lots")
    with pytest.raises(ValidationError, match="FEDBOUND_MEMORY_BUDGET must be a number of bytes"):
        resources.memory_budget()
    resources.set_memory_budget("2G")
    try:
        assert resources.memory_budget() == 2 * 2 ** 30   # the setter wins over the environment
        Network.from_topology("ring", 4, 300)
    finally:
        resources.set_memory_budget(None)
    monkeypatch.delenv(resources.ENV_VAR)
    assert resources.memory_budget() == resources.physical_memory() // 2
    with pytest.raises(ValidationError):
        resources.set_memory_budget(0)
    with pytest.raises(ResourceLimitError):
        resources.require_memory("an absurd thing", 10 ** 400)
