"""Theorem 3's bound (98) and noise floor against Monte Carlo and the exact stationary error."""
import numpy as np

from fedbound.verify import SDGTSetting, noise_floor, thm3_bound, thm3_step


def test_thm3_bound_holds_per_variant(least_squares, ring3x4):
    """Strongly convex least squares, partial participation, gradient noise, gamma = min over
    variants of gamma_bar: L_{T+1} <= (1 - mu K gamma/4)^T L_1 + ||(I - A)^{-1} b||_1 every round."""
    setting = SDGTSetting(least_squares, ring3x4, K=2, gamma=1.0, h=2, sigma=0.3)
    setting = SDGTSetting(least_squares, ring3x4, K=2, gamma=thm3_step(setting), h=2, sigma=0.3)
    checks = thm3_bound(setting, rounds=30, seeds=20)
    bounds = [c for c in checks if c.name == "thm3-bound"]
    assert [c.variant for c in bounds] == ["main", "appendix", "rederived"]
    for check in bounds:
        assert check.details["theorem_applies"]
        assert check.holds, check.summary()
        assert np.all(np.isfinite(check.details["predicted"]))
    # the premise ||A||_1 <= 1 - mu K gamma/4 of (95) is computed, not assumed (flag F18)
    for premise in (c for c in checks if c.name == "thm3-premise"):
        assert premise.status == ("holds" if premise.measured <= premise.predicted else "violated")


def test_thm3_premise_counterexample(least_squares, ring3x4):
    """Flag F18 made concrete: at gamma = gamma_bar of the appendix variant (97), on this strongly
    convex least squares (L = 6, mu = 0.068, K = 3, full participation, q = 8/9), the appendix
    matrix (93) has ||A||_1 > 1 - mu K gamma/4 (even > 1), so the proof's step rho(A) <= ||A||_1 <=
    1 - mu K gamma/4 fails there; the main-text and re-derived matrices satisfy it."""
    base = SDGTSetting(least_squares, ring3x4, K=3, gamma=1.0)
    from fedbound.theory import get
    gamma = float(get("sdgt.thm3").max_step("appendix", **base.constants())[0])
    checks = thm3_bound(SDGTSetting(least_squares, ring3x4, K=3, gamma=gamma), rounds=3)
    premise = {c.variant: c for c in checks if c.name == "thm3-premise"}
    assert premise["appendix"].violated and premise["appendix"].measured > 1.0
    assert premise["main"].holds and premise["rederived"].holds
    assert all(c.holds for c in checks if c.name == "thm3-bound")   # the bound itself still holds


def test_thm3_bound_deterministic(quadratic, ring3x4):
    setting = SDGTSetting(quadratic, ring3x4, K=3, gamma=1.0)
    setting = SDGTSetting(quadratic, ring3x4, K=3, gamma=thm3_step(setting))
    for check in thm3_bound(setting, rounds=20):
        if check.name == "thm3-bound":
            assert check.holds and check.details["seeds"] == 1 and check.details["floor"] == 0.0


def test_noise_floor(quadratic, ring3x4):
    """Exact stationary Lyapunov value <= floor per variant at gamma_bar; the exact stationary
    E||x_g - x*||^2 agrees with Monte Carlo at a practical gamma and scales ~ linearly in gamma."""
    base = SDGTSetting(quadratic, ring3x4, K=3, gamma=1.0, sigma=0.5)
    setting = SDGTSetting(quadratic, ring3x4, K=3, gamma=thm3_step(base), sigma=0.5)
    checks = noise_floor(setting, mc_gamma=0.05, seeds=30)
    by_name = {(c.name, c.variant): c for c in checks}
    for variant in ("main", "appendix", "rederived"):
        floor = by_name[("noise-floor", variant)]
        assert floor.details["theorem_applies"] and floor.holds, floor.summary()
    assert by_name[("noise-floor:monte-carlo", None)].holds
    assert by_name[("noise-floor:gamma-scaling", None)].holds
