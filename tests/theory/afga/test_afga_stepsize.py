"""AFGA step-size conditions (seed 000, (25)-(27), Lemma F.1): the engine's implicit solve
(``afga.stepsize.max_step``) against an independent reference (a bracketed fixed-point bisection,
itself checked against a brute-force scan and the closed forms), and Lemma F.1's algebra (flag 17)."""
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.cli.main import main
from fedbound.errors import ValidationError
from fedbound.theory import get

BASE = dict(I=24, L=1.0, K=1, n=50, m=5, eta=1.0, beta1=0.9,
            eps_ams=1e-2, G=1.0, C1=64.0, rho=0.5, alpha=1.0)


def solve_implicit_cap(a, k, b, eps, max_iterations: int = 200, rtol: float = 4e-16) -> np.ndarray:
    r"""Reference: the largest x >= 0 with x <= a (b^2 x^2 + eps)^(-k/2), vectorized (for (25)
    k = 1, for (27) k = 1/2, b = I G: (b^2x^2+eps)^(1/2) = C0(x)). g(x) = a(b^2x^2+eps)^(-k/2) is
    decreasing, so g(g(0)) <= x* <= g(0) brackets the fixed point; bisection on log x."""
    a, k, b, eps = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (a, k, b, eps)))
    if np.any(~(a > 0) | ~(k > 0) | ~(b >= 0) | ~(eps > 0)):
        raise ValidationError("solve_implicit_cap needs a > 0, k > 0, b >= 0, eps > 0")

    def admissible(x):
        return x * (b ** 2 * x ** 2 + eps) ** (k / 2) <= a

    hi = a * eps ** (-k / 2)
    lo = a * (b ** 2 * hi ** 2 + eps) ** (-k / 2)
    lo = np.where(admissible(lo), lo, 0.0)
    done = admissible(hi)
    lo = np.where(done, hi, lo)
    for _ in range(max_iterations):
        open_ = ~done & (hi - lo > rtol * hi)
        if not np.any(open_):
            break
        mid = np.where(lo > 0, np.sqrt(lo * hi), hi / 2)
        ok = admissible(mid)
        lo = np.where(open_ & ok, mid, lo)
        hi = np.where(open_ & ~ok, mid, hi)
    return lo


def admissible(x, a, k, b, eps):
    """In numpy arithmetic, as the reference computes it (Python's float power and numpy's can
    differ in the last bit, which decides a point on the boundary)."""
    x, a, k, b, eps = (np.asarray(v, dtype=float) for v in (x, a, k, b, eps))
    return x * (b ** 2 * x ** 2 + eps) ** (k / 2) <= a


@given(st.floats(-8, 4), st.sampled_from([0.5, 1.0]), st.floats(-3, 3), st.floats(-10, 0))
@settings(max_examples=60, deadline=None)
def test_implicit_solve_matches_a_brute_force_scan(log_a, k, log_b, log_eps):
    a, b, eps = 10.0 ** log_a, 10.0 ** log_b, 10.0 ** log_eps
    x = float(solve_implicit_cap(a, k, b, eps))
    assert admissible(x, a, k, b, eps)
    grid = np.geomspace(x * 1e-3, x * 1e3, 200001)          # relative spacing 6.9e-5
    ok = admissible(grid, a, k, b, eps)
    largest = grid[ok].max()
    assert largest <= x * (1 + 1e-12)
    assert grid[np.searchsorted(grid, largest) + 1] > x      # the next grid point is inadmissible


def test_implicit_solve_matches_the_closed_forms():
    rng = np.random.default_rng(0)
    a, b, eps = 10.0 ** rng.uniform(-6, 2, 500), 10.0 ** rng.uniform(-3, 3, 500), 10.0 ** rng.uniform(-10, 0, 500)
    # k = 1: x^2 (b^2 x^2 + eps) = a^2, a quadratic in y = x^2
    y = 2 * a ** 2 / (eps + np.sqrt(eps ** 2 + 4 * b ** 2 * a ** 2))
    np.testing.assert_allclose(solve_implicit_cap(a, 1.0, b, eps), np.sqrt(y), rtol=1e-13)
    # k = 1/2: x^4 (b^2 x^2 + eps) = a^4, the cubic b^2 y^3 + eps y^2 - a^4 = 0
    roots = [np.roots([bb ** 2, ee, 0.0, -aa ** 4]) for aa, bb, ee in zip(a, b, eps)]
    y = np.array([r[(abs(r.imag) < 1e-9 * abs(r)) & (r.real > 0)].real.max() for r in roots])
    np.testing.assert_allclose(solve_implicit_cap(a, 0.5, b, eps), np.sqrt(y), rtol=1e-9)


def test_implicit_solve_is_vectorized_and_rejects_bad_input():
    a = np.array([1e-3, 1.0, 10.0])
    out = solve_implicit_cap(a, 0.5, 2.0, 1e-4)
    assert out.shape == (3,)
    np.testing.assert_allclose(out, [float(solve_implicit_cap(x, 0.5, 2.0, 1e-4)) for x in a], rtol=1e-14)
    with pytest.raises(ValidationError):
        solve_implicit_cap(-1.0, 0.5, 1.0, 1.0)


@pytest.mark.parametrize("variant", ["printed", "rederived"])
def test_max_step_matches_the_reference_and_names_the_binding_condition(variant):
    stepsize = get("afga.stepsize")
    rng = np.random.default_rng(1)
    c = {**BASE, "eta": 10.0 ** rng.uniform(-3, 3, 200), "eps_ams": 10.0 ** rng.uniform(-8, 0, 200),
         "I": rng.integers(1, 100, 200).astype(float), "G": 10.0 ** rng.uniform(-2, 2, 200)}
    eta_l, binding = stepsize.max_step(variant, variable="eta_l", rtol=1e-14, **c)
    ev = stepsize.evaluate(variant, **c, eta_l=eta_l)
    b = c["I"] * c["G"]
    cap_a = 1 / ((8 if variant == "printed" else 8 * np.sqrt(2)) * c["I"] * c["L"])
    reference = np.minimum.reduce([cap_a,
                                   solve_implicit_cap(ev.extras["a25"], 1.0, b, c["eps_ams"]),
                                   solve_implicit_cap(ev.extras["a27"], 0.5, b, c["eps_ams"])])
    np.testing.assert_allclose(eta_l, reference, rtol=1e-11)
    assert np.all(ev.all_conditions_hold)
    assert np.all(eta_l <= ev.extras["cap25"] * (1 + 1e-12)) and np.all(eta_l <= ev.extras["cap27"] * (1 + 1e-12))
    tight = {"(25) implicit": ev.extras["cap25"], "(27) implicit": ev.extras["cap27"]}
    for name, cap in tight.items():
        sel = binding == name
        np.testing.assert_allclose(eta_l[sel], cap[sel], rtol=1e-12)
    assert {"(25) implicit", "(27) implicit"} <= set(binding)


def test_rederived_25_uses_the_printed_left_side_coefficient_16():
    stepsize = get("afga.stepsize")
    c = {**BASE, "m": 3, "eta_l": 1e-3}
    printed = stepsize.evaluate("printed", **c).extras["a25"]
    rederived = stepsize.evaluate("rederived", **c).extras["a25"]
    N, n, m, I = 50, 50, 3, 24
    assert printed / rederived == pytest.approx((16 * (m - 1) / (n - 1) + 2 * (I + 2) * m / n)
                                                / (4 * (m - 1) / (n - 1) + 2 * (I + 2) * m / n))
    assert N == n


@pytest.mark.parametrize("I", [1, 2, 24, 1000])
def test_lemma_F1_algebra_needs_eight_sqrt2(I):
    """[L2801-2810] 16 I eta_l^2 L^2 <= 1/(2(4I-1)): false at eta_l = 1/(8IL), true at 1/(8 sqrt2 IL)."""
    L = 3.0
    for cap, holds in ((1 / (8 * I * L), False), (1 / (8 * np.sqrt(2) * I * L), True)):
        assert (16 * I * cap ** 2 * L ** 2 <= 1 / (2 * (4 * I - 1))) == holds
    caps = {c.name: c for v in ("printed", "rederived") for c in get("afga.stepsize").variant(v).conditions}
    assert set(caps) == {"(a) 1/(8IL)", "(a') 1/(8 sqrt2 IL)", "(25) implicit", "(27) implicit"}


def test_cli_stepsize_solves_the_implicit_conditions_on_eta_l(capsys):
    argv = ["stepsize", "afga.stepsize", "--variable", "eta_l", "--json"]
    for k, v in BASE.items():
        argv += ["--set", f"{k}={v}"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    step, binding = get("afga.stepsize").max_step("printed", variable="eta_l", **BASE)
    assert data["binding"] == str(binding) == "(27) implicit"
    assert data["eta_l_max"] == float(step) and data["implicit"] is True
    reference = min(1 / (8 * 24), float(solve_implicit_cap(get("afga.stepsize").evaluate(
        "printed", **BASE, eta_l=step).extras["a27"], 0.5, 24.0, 1e-2)))
    assert data["eta_l_max"] == pytest.approx(reference, rel=1e-11)
