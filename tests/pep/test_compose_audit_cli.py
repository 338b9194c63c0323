"""Long horizons by composition, the PEP audit claims and `fedbound pep` (issue 13)."""
import json

import pytest

from fedbound.cli.main import main
from fedbound.pep import compose
from fedbound.pep.audit import claims
from fedbound.theory.audit import audit_claim

SMALL = dict(n=2, local_steps=2, lr=1.0, L=1.0, mu=0.1, zeta=0.3)


def test_composition_bounds_full_horizon_within_stated_gap():
    g = compose.gap({**SMALL, "rounds": 2})
    assert g["full"] <= g["composed"] * (1 + 1e-5)     # composing one-round certificates is valid
    assert g["ratio"] <= 1.01                           # and, here, within 1% of the full PEP


def test_contraction_and_long_run_fixed_point():
    assert compose.contraction(SMALL) == pytest.approx(0.9 ** 4, rel=1e-6)
    lr = compose.long_run(SMALL, rtol=1e-3)
    assert lr["bound"] == pytest.approx(lr["c"] * 0.3 ** 2)
    assert abs(lr["residual"]) < 1e-2                   # phi(e*) = e*: an invariant level
    assert compose.one_round(SMALL, 2 * lr["bound"]) < 2 * lr["bound"]


def test_pep_claims_hold():
    for claim in claims():
        report = audit_claim(claim)
        assert report.found_by == "pep" and report.n_evaluated >= 2
        assert report.verdict == "holds" and report.violation_ratio <= 1 + 1e-5


def run(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:   # argparse usage errors exit 2 with one line
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_json_keys(capsys):
    code, out, _ = run(["pep", "gd", "--steps", "5", "--L", "1", "--mu", "0.1", "--lr", "1", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and {"worst_case", "status", "lower_bound", "theory", "seconds"} <= set(data)
    assert abs(data["worst_case"] - 0.9 ** 10) <= 1e-6
    code, out, _ = run(["pep", "fedprox", "--local-steps", "1", "--rounds", "1", "--json"], capsys)
    assert code == 0 and json.loads(out)["theory"] is None


@pytest.mark.parametrize("argv", [["pep", "fedavg", "--local-steps", "0"], ["pep", "fedavg", "--mu", "nan"],
                                  ["pep", "fednova", "--local-steps", "2,,3"], ["pep", "dgd", "--W", "[[1]]"],
                                  ["pep", "fedavg", "--n", "16", "--local-steps", "64", "--rounds", "64"], ["pep", "nope"]])
def test_cli_bad_input_exit_2(argv, capsys):
    code, _, err = run(argv, capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("fedbound: error:")


def test_one_round_options_are_checked_as_given():
    """contraction and one_round certify one round, but a bad ``rounds`` is still refused by name
    (issue 31), also under its old name R (issue 33)."""
    from fedbound.errors import ValidationError
    from fedbound.pep import compose

    with pytest.raises(ValidationError, match=r"rounds must be an integer in \[1, "):
        compose.contraction({"rounds": 0})
    with pytest.raises(ValidationError, match=r"rounds must be an integer in \[1, "):
        compose.one_round({"R": 0}, 1.0)
