"""Certificates of fedbound.pep (issue 13): values of the issue, lower <= worst <= theory, replay."""
import pytest

from fedbound.errors import ResourceLimitError, ValidationError
from fedbound.pep import certify
from fedbound.pep.certificate import RTOL, method, worst_case

ISSUE = dict(n=2, local_steps=4, rounds=2, lr=1.0, L=1.0, mu=0.1)


@pytest.mark.parametrize("steps", [1, 4, 10])
def test_gd_matches_closed_form(steps, consistent):
    c = certify("gd", steps=steps, L=1.0, mu=0.1, lr=1.0, lower_bound_starts=4)
    assert abs(c.worst_case - 0.9 ** (2 * steps)) <= 1e-7
    consistent(c)


@pytest.mark.parametrize("zeta,expected", [(0.0, 0.185), (0.1, 0.237), (0.3, 0.587), (1.0, 3.79)])
def test_fedavg_issue_numbers(zeta, expected):
    cfg = method("fedavg").config(**ISSUE, zeta=zeta)
    value = worst_case("fedavg", cfg)[0].value
    assert abs(value - expected) <= 0.005 * expected   # the issue prints three digits


def test_fedavg_certificate_heterogeneous(consistent):
    c = certify("fedavg", **ISSUE, zeta=0.3, lower_bound_starts=6)
    assert abs(c.worst_case - 0.587) <= 0.01 * 0.587
    consistent(c)
    assert c.theory is None and c.lower_bound > 0.2


@pytest.mark.parametrize("zeta", [0.0, 1.0])
def test_fedavg_one_local_step_is_gd(zeta, consistent):
    c = certify("fedavg", n=2, local_steps=1, rounds=3, lr=1.0, L=1.0, mu=0.1, zeta=zeta, lower_bound_starts=4)
    assert abs(c.worst_case - 0.9 ** 6) <= 1e-6
    consistent(c)


def test_fedavg_homogeneous_is_rho_power(consistent):
    c = certify("fedavg", n=2, local_steps=2, rounds=2, lr=0.5, L=1.0, mu=0.2, zeta=0.0, lower_bound_starts=4)
    assert abs(c.worst_case - 0.9 ** 8) <= 1e-6 and c.theory == pytest.approx(0.9 ** 8)
    consistent(c)


def test_fedprox_and_fednova(consistent):
    consistent(certify("fedprox", n=2, local_steps=2, rounds=2, zeta=0.3, proximal_mu=0.5, lower_bound_starts=4))
    c = certify("fednova", local_steps="1,3", rounds=2, lr=0.05, kappa2=2.0, lower_bound_starts=4)
    assert c.theory_applies
    consistent(c)


def test_scaffold_worst_case_independent_of_heterogeneity():
    values = [worst_case("scaffold", method("scaffold").config(n=2, local_steps=2, rounds=2, zeta=z, control_variates="grad"))[0].value
              for z in (0.0, 1.0)]
    assert values[1] == pytest.approx(values[0], rel=1e-5)
    zero_init = worst_case("scaffold", method("scaffold").config(n=2, local_steps=2, rounds=2, zeta=1.0))[0].value
    assert zero_init > values[0] * 1.1   # starting from zero control variates, heterogeneity matters


def test_scaffnew_enumeration_within_proxskip_bound(consistent):
    c = certify("scaffnew", n=2, steps=2, p=0.5, lr=1.0, mu=0.1, lower_bound_starts=4)
    assert c.theory_applies
    consistent(c)


def test_spectral_class_contains_its_instances(consistent):
    """The spectral-class worst case is at least that of every W = J + lam (I - J) in the class."""
    base = dict(n=2, rounds=2, lr=0.5, zeta=0.3)
    spectral = worst_case("gt", method("gt").config(**base, lam_lo=-0.2, lam_hi=0.4))[0]
    assert spectral.status == "optimal" and spectral.solver.startswith("clarabel")
    for lam in (-0.2, 0.4):
        W = f"[[{(1 + lam) / 2}, {(1 - lam) / 2}], [{(1 - lam) / 2}, {(1 + lam) / 2}]]"
        fixed = worst_case("gt", method("gt").config(**base, W=W))[0].value
        assert fixed <= spectral.value * (1 + RTOL)
    consistent(certify("dgd", **base, lam_lo=-0.2, lam_hi=0.4, lower_bound_starts=4))


def test_sdgt_theorem3_inside_and_outside(consistent):
    inside = certify("sdgt", lr=5e-5, lower_bound_starts=4)
    consistent(inside)
    outside = certify("sdgt", lr=3.0, local_steps=2, lower_bound_starts=4)
    assert not outside.theory_applies and outside.worst_case > outside.theory
    assert "does not apply" in outside.verdict and "exceeded" in outside.verdict


def test_too_large_refused_while_building():
    with pytest.raises(ResourceLimitError, match="Gram matrix"):
        worst_case("fedavg", method("fedavg").config(n=16, local_steps=64, rounds=64))


def test_bad_options():
    with pytest.raises(ValidationError):
        certify("fedavg", mu=2.0)
    with pytest.raises(ValidationError):
        certify("fedavg", bogus=1)
    with pytest.raises(ValidationError):
        certify("fedavgg")
