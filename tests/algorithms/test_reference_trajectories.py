"""SD-GT, SD-FedAvg, SCAFFOLD, Scaffnew and ATC-GT reproduce the trajectories recorded from the code
before the federated-core refactor (tests/fixtures/reference_trajectories.npz, made once by
tests/fixtures/make_reference_trajectories.py and never regenerated): the same random draws in the
same order, so the same numbers up to float64 rounding. Rounding is all that may differ: sums over
clients taken in another order (SCAFFOLD runs on the federated round since issue 20: its
subnet-weighted mean is one weighted sum) and other CPUs' or BLAS kernels' summation order move
entries by a few ulps, never more than RTOL = 1e-12 of the trajectory's largest entry (a wrong
draw or a wrong formula moves them by orders of magnitude more)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

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


RTOL = 1e-12


@pytest.mark.parametrize("case", [c[0] for c in reference.CASES])
def test_trajectory_is_the_reference_to_rounding(case, recorded, today):
    assert recorded[case].shape == (reference.ROUNDS + 1, today[case].shape[1])
    scale = float(np.max(np.abs(recorded[case])))
    np.testing.assert_allclose(today[case], recorded[case], rtol=0, atol=RTOL * scale)
    np.testing.assert_allclose(today[case + "/comm"], recorded[case + "/comm"], rtol=RTOL, atol=0)
