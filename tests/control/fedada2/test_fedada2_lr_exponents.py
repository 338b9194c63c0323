"""The learning-rate exponent LP of FedAda2's Corollaries 23/24 (fedbound/control/fedada2), against a
grid enumeration and the paper's stated conditions (seed 004 [L1075-L1126], notes 4.10, 5.1)."""
import numpy as np
import pytest

from fedbound.control.fedada2 import enumerate_exponents, exponents_at, printed_conditions, solve_exponents
from fedbound.errors import UnknownNameError, ValidationError
from fedbound.theory import get

COMBOS = [(c, s, k) for c in ("A", "B") for s in ("L", "L2") for k in ("adagrad", "adam")]


@pytest.mark.parametrize("case,smooth,client", COMBOS)
def test_lp_agrees_with_grid_enumeration(case, smooth, client):
    lp = solve_exponents(case, smooth, client, delta=1e-3)
    p1, p2, s = enumerate_exponents(case, smooth, client, delta=1e-3, step=1 / 200)
    assert lp.feasible == np.isfinite(s)
    if lp.feasible:
        assert lp.violation <= 1e-7
        assert lp.s <= s + 1e-7                      # the LP is at least as good as every grid point
        assert s - lp.s <= 2 * (1 / 200) + 1e-7      # and the grid comes within its spacing
        # the LP point satisfies the theory's exponents (the extras of fedada2.cor23) as well
        name = f"case_{case}" + ("" if smooth == "L" else "_L2") + ("" if client == "adagrad" else "_adam")
        ev = get("fedada2.cor23").evaluate(name, p1=lp.p1, p2=lp.p2).extras
        assert max(float(ev[f"psi{i}/psi6"]) for i in range(1, 6)) <= lp.s + 1e-7


def test_rates_of_corollary_24():
    """Case A attains s = -1/2 (e.g. p1 = 0, p2 = -1/2); case B approaches -1/2 as the margin shrinks;
    with L~^2 (notes 8.2) no exponents make the bound vanish."""
    assert solve_exponents("A").s == pytest.approx(-0.5, abs=1e-7)
    assert max(exponents_at("A", 0.0, -0.5)[f"psi{i}/psi6"] for i in range(1, 6)) == pytest.approx(-0.5)
    rates = [solve_exponents("B", delta=d).s for d in (0.1, 0.01, 0.001)]
    assert rates[0] > rates[1] > rates[2] > -0.5 and rates[2] == pytest.approx(-0.5, abs=2e-3)
    assert not solve_exponents("A", "L2").feasible and not solve_exponents("B", "L2").feasible


def test_printed_conditions_are_sufficient_except_at_p2_minus_quarter():
    """On a grid, every point meeting Cor. 23's stated conditions makes all exponents negative, except
    case B's boundary p2 = -1/4 where psi3/psi6 = T^0 (notes 8.6: <= should be <)."""
    grid = np.arange(-400, 401) / 200
    p1, p2 = np.meshgrid(grid, grid, indexing="ij")
    for case in ("A", "B"):
        values = exponents_at(case, p1, p2)
        worst = np.max(np.stack([values[f"psi{i}/psi6"] for i in range(1, 6)]), axis=0)
        stated = printed_conditions(case, p1, p2)
        bad = stated & (worst >= 0)
        if case == "A":
            assert stated.any() and not bad.any()
        else:
            assert bad.any() and np.all(p2[bad] == -0.25)
    # the example of case B [L1114]: p2 = -0.49, p1 < 0.48
    assert printed_conditions("B", 0.47, -0.49) and not printed_conditions("B", 0.49, -0.49)


def test_bad_arguments():
    with pytest.raises(UnknownNameError):
        solve_exponents("C")
    with pytest.raises(ValidationError):
        solve_exponents("A", delta=0.0)
