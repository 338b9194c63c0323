"""SD-GT, SD-FedAvg, SCAFFOLD, Scaffnew and ATC-GT reproduce, bitwise, the trajectories recorded
from the code before the federated-core refactor (tests/fixtures/reference_trajectories.npz, made
once by tests/fixtures/make_reference_trajectories.py and never regenerated)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
_spec = importlib.util.spec_from_file_location("reference_trajectories",
                                               FIXTURES / "make_reference_trajectories.py")
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


@pytest.fixture(scope="module")
def recorded():
    with np.load(FIXTURES / "reference_trajectories.npz") as data:
        return {k: data[k] for k in data.files}


@pytest.fixture(scope="module")
def today():
    return reference.trajectories()


@pytest.mark.parametrize("case", [c[0] for c in reference.CASES])
def test_trajectory_is_bitwise_identical_to_the_reference(case, recorded, today):
    assert recorded[case].shape == (reference.ROUNDS + 1, today[case].shape[1])
    assert torch.equal(torch.from_numpy(today[case]), torch.from_numpy(recorded[case]))
    assert torch.equal(torch.from_numpy(today[case + "/comm"]),
                       torch.from_numpy(recorded[case + "/comm"]))
