"""A bound read against its result's reference and the measured value (fedbound.theory.reading,
Evaluation.reading): vacuous above the reference, with the factor in powers of ten; tight within
TIGHT_FACTOR of the measurement."""
import numpy as np
import pytest

from fedbound.theory import get, results
from fedbound.theory.reading import TIGHT_FACTOR, Reading

DEMO = dict(eta_l=0.1, K=3, z=1, eps=0.1, eps_s=1e-3, v0=0.0, eta=1.0, tau=1e-2, vtilde0=1e-4,
            beta1_tilde=0.0, G=25.656, L=1.0, d=5, f_gap=1.838, T=20)


def test_fedada2_theorem_20_is_vacuous_by_its_factor():
    ev = get("fedada2.thm20").evaluate("printed", **DEMO)
    reading = ev.reading(0.0099)
    trivial = min(DEMO["d"] * DEMO["G"] ** 2, 2 * DEMO["L"] * DEMO["f_gap"])
    assert float(reading.reference) == pytest.approx(trivial, rel=1e-12)
    assert bool(reading.vacuous) and float(reading.over_reference) == pytest.approx(float(ev.bound) / trivial)
    power = int(round(np.log10(float(ev.bound) / trivial)))
    assert f"vacuous: a factor of 10^{power} above the trivial bound min(d G^2, 2 L f_gap)" in reading.words()
    assert "loose" in reading.words() and not bool(reading.tight)
    data = reading.to_dict()
    assert data["vacuous"] is True and data["reference_kind"] == "trivial" and data["tight_factor"] == TIGHT_FACTOR


def test_a_bound_below_its_reference_and_near_the_measurement_is_tight():
    r = Reading(bound=3.0, reference=10.0, reference_text="R", reference_kind="initial", measured=2.0)
    assert not bool(r.vacuous) and bool(r.tight)
    assert r.words() == ("below the initial value R = 10 (a factor of 0.3 of it); tight: within a "
                         "factor of 2 of the measured 2 (a factor of 1.5)")
    assert "below the measured" in Reading(bound=1.0, measured=2.0).words()
    assert "infinite: the trivial bound" in Reading(bound=1.0, reference=0.0, reference_text="G^2").words()


def test_readings_of_arrays_name_the_worst_point():
    r = Reading(bound=np.array([1.0, 50.0, 3.0]), reference=np.array(2.0), reference_text="G^2")
    assert list(r.vacuous) == [False, True, True]
    assert r.words().startswith("vacuous: a factor of 25 above the trivial bound G^2 = 2")
    assert r.words().endswith("(at the worst of 3 points)")


def test_references_use_only_their_results_constants():
    """Every declared reference is an expression in its result's constants (checked at declaration)
    and evaluates where the bound does; the min-type results and the initial-value ones have one."""
    declared = {r.id: r.reference for r in results() if r.reference is not None}
    assert {"fedada2.thm20", "afga.thm46", "fednova.thm1_sched", "sdgt.cor3", "sdgt.thm2"} <= set(declared)
    for rid, ref in declared.items():
        names = {str(s) for s in ref.expr.free_symbols}
        assert names <= set(get(rid).all_constants()), rid


def test_an_evaluation_without_the_reference_constants_reads_only_the_measurement():
    ev = get("sdgt.thm2").evaluate(K=2, L=1.0, R=1.0, T=100, gamma=1e-3, n=10, p=0.5, q=0.5, sigma=0.1)
    reading = ev.reading()
    assert float(reading.reference) == pytest.approx(0.5)          # L R / 2
    assert bool(reading.vacuous)                                     # 10.3 > 0.5: no progress promised
    assert get("sdgt.thm1").evaluate(D=0.25, D5=1.0, E1=1.0, K=2, L=1.0, T=100, c2=2.01, gamma=1e-4,
                                     n=10, p=0.5, q=0.5, sigma=0.1).reading().reference is None
