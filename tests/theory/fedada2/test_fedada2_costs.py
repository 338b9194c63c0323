"""Table 2 of FedAda2 (seed 004 [L1627-L1633]) from parameter shapes (fedbound/theory/fedada2/costs.py)."""
import pytest

from fedbound.errors import InputTypeError, UnknownNameError, ValidationError
from fedbound.theory.fedada2.costs import (cover_size, parameter_count, relative_communication,
                                           sm3_accumulators, table2)

# a 50 -> 20 -> 10 MLP: W1 (50, 20), b1 (20,), W2 (20, 10), b2 (10,)
MLP = [(50, 20), (20,), (20, 10), (10,)]
D, Q = 50 * 20 + 20 + 20 * 10 + 10, (50 + 20) + 20 + (20 + 10) + 10


def test_counts_of_a_concrete_model():
    assert parameter_count(MLP) == D == 1230
    assert sm3_accumulators(MLP) == Q == 130
    assert cover_size(()) == 1 and cover_size((7,)) == 7 and cover_size((3, 4, 5)) == 12


def test_table2_as_printed():
    rows = table2(MLP)
    expected = {"FedAvg": (2460, 1230, 1), "FedAdaGrad": (2460, 1230, 1), "DJA": (3690, 2460, 1),
                "FedAda2": (2460, 2460, 1), "MIME": (6150, 4920, 3), "MIMELite": (4920, 3690, 2)}
    assert {m: (r.communication, r.memory, r.gradient_calls) for m, r in rows.items()} == expected
    assert all(r.source == "Table 2" for r in rows.values())


def test_refined_model_counts_sm3_accumulators():
    rows = table2(MLP, model="refined")
    assert rows["FedAda2"].memory == D + Q == 1360 and rows["FedAda2"].source.startswith("derived")
    assert rows["FedAda2 (SM3-Adam)"].memory == 2 * D + Q
    assert (rows["DJA (Adam)"].communication, rows["DJA (Adam)"].memory) == (4 * D, 3 * D)
    assert rows["JointZero"].memory == 2 * D > rows["FedAda2"].memory


def test_fedada2_communicates_like_fedavg_and_dja_half_more():
    rel = relative_communication(MLP)
    assert rel["FedAda2"] == rel["FedAdaGrad"] == rel["FedAvg"] == 1.0
    assert rel["DJA"] == 1.5


@pytest.mark.parametrize("bad,error", [([(3, 0)], ValidationError), ([], InputTypeError), ([3], InputTypeError),
                                       ([(2.5, 3)], InputTypeError), ("ab", InputTypeError)])
def test_bad_shapes(bad, error):
    with pytest.raises(error):
        table2(bad)
    with pytest.raises(UnknownNameError, match="printed, refined"):
        table2(MLP, model="exact")
