"""Table 2 of FedAda2 (seed 004 [L1627-L1633]) from parameter shapes (fedbound/theory/fedada2/costs.py)."""
import pytest

from fedbound.errors import InputTypeError, UnknownNameError, ValidationError
from fedbound.theory.fedada2.costs import (client_state_floats, cover_size, parameter_count,
                                           relative_communication, sm3_accumulators, table2)

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
    """d parameters + the optimizer state (q accumulators + the step counter for SM3-II)."""
    rows = table2(MLP, model="refined")
    assert rows["FedAda2"].memory == D + Q + 1 == 1361 and rows["FedAda2"].source.startswith("derived")
    assert rows["FedAda2 (SM3-Adam)"].memory == 2 * D + Q + 1
    assert (rows["DJA (Adam)"].communication, rows["DJA (Adam)"].memory) == (4 * D, 3 * D + 1)
    assert (rows["DJA"].communication, rows["DJA"].memory) == (3 * D, 2 * D + 1)
    assert rows["JointZero"].memory == 2 * D + 1 > rows["FedAda2"].memory
    assert rows["JointZero (Adam)"].memory == 3 * D + 1
    # SM3-II with a delay keeps the last nu (d floats): the saving is gone
    assert table2(MLP, model="refined", delay=2)["FedAda2"].memory == 2 * D + Q + 1


@pytest.mark.parametrize("shapes", [MLP, [(4, 5, 6)], [(), (7,)], [(3, 2), (2, 3)]])
@pytest.mark.parametrize("delay", [1, 3])
def test_refined_memory_is_the_optimizers_own_state_floats(shapes, delay):
    """The theory counts the client state from its formulas (it imports no algorithm); they equal
    the state_floats(d) of fedbound.algorithms.optim.client's transforms, and SM3's q is the cover
    size counted here (sm3_accumulators)."""
    from fedbound.algorithms.optim import client
    d = parameter_count(shapes)
    transforms = {"sm3": client.sm3(0.1, shapes, delay=delay),
                  "sm3_adam": client.sm3_adam(0.1, shapes, delay=delay),
                  "adagrad": client.adagrad(0.1, 1e-8, delay=delay), "adam": client.adam(0.1, delay=delay)}
    for name, transform in transforms.items():
        assert client_state_floats(shapes, name, delay) == transform.state_floats(d), name
    rows = table2(shapes, model="refined", delay=delay)
    assert rows["FedAda2"].memory - d == transforms["sm3"].state_floats(d)
    assert transforms["sm3"].state_floats(d) == sm3_accumulators(shapes) + 1 + (d if delay > 1 else 0)
    assert rows["FedAda2 (SM3-Adam)"].memory - d == transforms["sm3_adam"].state_floats(d)
    assert rows["JointZero"].memory - d == transforms["adagrad"].state_floats(d)
    assert rows["JointZero (Adam)"].memory - d == transforms["adam"].state_floats(d)


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
