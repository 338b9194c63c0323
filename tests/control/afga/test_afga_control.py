"""AFGA's communication-time model against Tables 1 and 7 (seed 000, L482-494, L902-913) and the
chooser of (I, topology, clusters) against enumeration and the bound it uses."""
import numpy as np
import pytest

from fedbound.control.afga import (TABLE1_ROUNDS_78, TABLE7_ACCURACY, TABLE7_HOURS, CommTimeModel, choose,
                                   implied_rounds, table7_hours)
from fedbound.errors import InputTypeError, UnknownNameError, ValidationError
from fedbound.theory import get

PROBLEM = dict(L=1.0, sigma=1.0, G=1.0, d=10, eps_ams=0.1, beta1=0.9, f_gap=1.0)
HET = {1: (1.0, 0.0), 5: (0.8, 0.5)}


def test_table7_78_percent_column_from_table1_rounds():
    predicted = table7_hours()
    column = TABLE7_ACCURACY.index(78)
    for method, hours in TABLE7_HOURS.items():
        assert predicted[method] == pytest.approx(hours[column], abs=1e-9), method
    assert TABLE1_ROUNDS_78["setting1"]["AFGA"] == 302
    model = CommTimeModel()
    assert model.round_seconds(24, gossip=False) == 1800.0 and model.round_seconds(24) == pytest.approx(2664.0)


def test_every_table7_cell_implies_an_integer_round_count():
    rounds = implied_rounds()
    for method, r in rounds.items():
        np.testing.assert_allclose(r, np.round(r), atol=1e-9, err_msg=method)
    rounds = {method: np.round(r).astype(int) for method, r in rounds.items()}
    assert list(rounds["FedAMSGrad"]) == [152, 256, 388, 562]      # 562 > 500 rounds (flag 31)
    assert list(rounds["AFGA"]) == [124, 177, 302, 339]
    assert list(rounds["CAFGA"]) == [103, 139, 233, 243]


def test_comm_time_model_validates():
    with pytest.raises(ValidationError, match="client_client_s"):
        CommTimeModel(client_client_s=-1.0)
    with pytest.raises(InputTypeError, match="I must be an integer"):
        CommTimeModel().round_seconds(2.5)
    with pytest.raises(ValidationError, match="rounds"):
        CommTimeModel().hours(-3, 24)


@pytest.fixture(scope="module")
def choice():
    return choose(N=50, M=5, eps=0.5, constants=PROBLEM, heterogeneity=HET, clusters=(1, 5),
                  topologies=("ring", "complete", "chain"), local_steps=(1, 4, 16, 32), c_l=0.1)


def test_chooser_picks_the_fastest_feasible_candidate(choice):
    feasible = [r for r in choice.table if r.feasible]
    assert len(choice.table) == 2 * 3 * 4
    assert choice.best.seconds == min(r.seconds for r in feasible)
    # the ring and chain violate the rho-condition (30) at every size here, the complete graph holds
    assert all(r.feasible == (r.topology == "complete") for r in choice.table)
    assert all("does not apply" in r.note for r in choice.table if not r.feasible)


def test_chooser_rounds_are_the_least_admissible(choice):
    thm = get("afga.thmD3")
    for r in choice.table[:8]:
        c = {**PROBLEM, "C": 1.0, "C1": 64.0, "C2": 1.0, "C3": 1.0, "C4": 1.0,
             "I": r.I, "K": r.clusters, "n": r.n, "m": r.m,
             "rho": r.rho_max, "sigma_l": HET[r.clusters][0], "sigma_c": HET[r.clusters][1],
             "c_eta": 1.0, "c_l": 0.1}
        bound = thm.bound("rederived-schedule", **{k: c[k] for k in thm.constants("rederived-schedule")
                                                  if k != "R"}, R=r.rounds)
        assert bound <= 0.5
        step = get("afga.stepsize").evaluate("rederived", **c, eta=r.n * np.sqrt(r.I / r.m),
                                             alpha=1.0, eta_l=0.1 / (r.I * np.sqrt(r.rounds)))
        assert step.all_conditions_hold
        if r.rounds > r.rounds_step_size:
            assert thm.bound("rederived-schedule", **{k: c[k] for k in thm.constants("rederived-schedule")
                                                     if k != "R"}, R=r.rounds - 1) > 0.5


def test_chooser_can_extrapolate_outside_the_rho_condition():
    ch = choose(N=50, M=5, eps=0.5, constants=PROBLEM, heterogeneity=HET, topologies=("ring",),
                local_steps=(8,), enforce_rho_condition=False, c_l=0.1)
    (row,) = ch.table
    assert row.feasible and not row.rho_holds and "extrapolated" in row.note and ch.best == row


def test_chooser_rejects_bad_input():
    kw = dict(N=50, M=5, eps=0.5, constants=PROBLEM, heterogeneity=HET)
    with pytest.raises(ValidationError, match="divide"):
        choose(**kw, clusters=(3,))
    with pytest.raises(UnknownNameError):
        choose(**kw, topologies=("erdos_renyi",))
    with pytest.raises(ValidationError, match="needs constant"):
        choose(**{**kw, "constants": {"L": 1.0}})
    with pytest.raises(ValidationError, match="heterogeneity"):
        choose(**{**kw, "heterogeneity": {1: (1.0, 0.0)}}, clusters=(5,))
