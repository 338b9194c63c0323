"""The audit a referee would sign (issue 22), on planted claims with known answers: one claim of
each severity (a constant error, a wrong exponent, a step condition that admits failing steps, a
vacuous bound, a typo whose corrected reading holds), admissible instances only (a relation of the
result excludes points and is reported), the worst ratio inside the regime of use, orders checked
by scaling with intervals, expectations by Monte Carlo, and the referee's report."""
import json

import numpy as np
import pytest

from fedbound.cli.main import main
from fedbound.errors import ValidationError
from fedbound.papers import PAPERS, PaperAudit
from fedbound.theory import symbols as S
from fedbound.theory.audit import audit_claim, run_audit
from fedbound.theory.audit_document import write_report
from fedbound.theory.claim import Claim, Param, Regime, Sampler
from fedbound.theory.expectation_claim import ExpectationClaim
from fedbound.theory.order_claim import OrderClaim
from fedbound.theory.result import Provenance, Result, Variant
from fedbound.theory.variant import Predicate

FAST = dict(samples=400, seed=0, iterations=3)
X = Param("x", 1.0, 10.0)
T = Param("T", 1, 1e6, integer=True)


def claim(id, check, params=(X, T), build=lambda raw: dict(raw), **fields):
    return Claim(id, "toy.none", "printed", id, "", Sampler(tuple(params), build), check, **fields)


def test_a_constant_error_is_severity_constant():
    report = audit_claim(claim("constant", lambda c: (2 * c["x"], c["x"])), **FAST)
    assert report.verdict == "fails" and report.severity == "constant"
    assert report.violation_ratio == pytest.approx(2.0, rel=1e-12)
    assert abs(report.growth["T"]) < 1e-9 and report.kind == "printed" and report.conditions == []


def test_a_wrong_exponent_is_severity_rate_with_the_fitted_growth():
    report = audit_claim(claim("rate", lambda c: (c["x"] * np.sqrt(c["T"]), c["x"])), **FAST)
    assert report.verdict == "fails" and report.severity == "rate"
    assert report.growth["T"] == pytest.approx(0.5, abs=1e-6)


def test_a_failing_step_condition_is_severity_condition():
    step = Param("gamma/cap", 1e-3, 1.0)
    check = claim("condition", lambda c: (c["gamma"] * c["x"], np.ones_like(c["x"])), params=(X, step),
                  build=lambda raw: {"x": raw["x"], "gamma": raw["gamma/cap"] * 2 / raw["x"]},
                  tests="condition")
    report = audit_claim(check, **FAST)
    assert report.verdict == "fails" and report.severity == "condition" and report.tests == "condition"


def test_a_bound_above_the_trivial_one_throughout_is_vacuous_and_one_below_somewhere_is_not():
    vacuous = audit_claim(claim("vacuous", lambda c: (1e18 * c["x"], c["x"] ** 2), tests="nonvacuous",
                                regime=Regime.at_least(T=10)), **FAST)
    assert vacuous.verdict == "fails" and vacuous.severity == "vacuous"
    assert vacuous.evidence == "not-refuted" and "not proved" in vacuous.certificate["reading"]
    useful = audit_claim(claim("useful", lambda c: (5 * np.ones_like(c["x"]), c["x"]), tests="nonvacuous"),
                         **FAST)
    assert useful.verdict == "holds" and useful.severity == "holds"     # informative for x >= 5


def test_a_typo_whose_corrected_reading_holds(register_temporarily):
    printed = claim("typo", lambda c: (2 * c["x"], c["x"]), corrected="typo.corrected")
    corrected = claim("typo.corrected", lambda c: (c["x"], c["x"]), kind="consistency")
    wrong = claim("wrong", lambda c: (2 * c["x"], c["x"]), corrected="wrong.corrected")
    still = claim("wrong.corrected", lambda c: (1.5 * c["x"], c["x"]), kind="consistency")
    register_temporarily(PAPERS, PaperAudit("toyreferee", "planted claims", "",
                                            lambda: [printed, corrected, wrong, still]))
    by_id = {r.claim: r for r in run_audit("toyreferee", **FAST)}
    assert by_id["typo"].severity == "typo" and by_id["typo.corrected"].severity == "holds"
    assert by_id["wrong"].severity == "constant"            # its corrected reading fails too
    only = run_audit("toyreferee", **FAST, only=["typo"])  # the corrected reading audited for it
    assert [r.severity for r in only] == ["typo", "holds"]
    assert by_id["typo.corrected"].kind == "consistency"


@pytest.fixture
def related(register_toy_results):
    """A toy result in scope ``refuse`` with the relation B <= C (as FedNova's (9))."""
    def build():
        B = S.declare("B", S.NONNEGATIVE, "toy B", scope="refuse")
        C = S.declare("C", S.POSITIVE, "toy C", scope="refuse")
        return {"refuse.thm": Result("refuse.thm", "toy", "B over C", Provenance("none", "(9)", "1"), (),
                                     [Variant("printed", "toy", bound=B / C)],
                                     relations=(Predicate("B <= C", B, "<=", C, "(9)"),))}
    return register_toy_results(build)


def test_inadmissible_points_are_excluded_reported_and_never_counterexamples(related):
    params = (Param("B", 1e-3, 1e3), Param("C", 1e-3, 1e3))
    check = Claim("ratio", "refuse.thm", "printed", "B/C <= 1", "", Sampler(params),
                  lambda c: (c["B"] / c["C"], np.ones_like(c["B"])))
    report = audit_claim(check, **FAST)
    assert report.verdict == "holds" and report.n_inadmissible > 0 and report.inadmissible == ["B <= C"]
    assert report.worst["B"] <= report.worst["C"]
    mask, broken = related["refuse.thm"].admissible({"B": np.array([1.0, 3.0]), "C": np.array([2.0, 2.0])})
    assert mask.tolist() == [True, False] and broken == ["B <= C"]
    with pytest.raises(ValidationError, match=r"requires B <= C"):
        related["refuse.thm"].bound(B=3.0, C=2.0)


def test_the_worst_ratio_inside_the_regime_of_use():
    report = audit_claim(claim("edge", lambda c: (10 / c["x"], np.ones_like(c["x"])),
                               regime=Regime.at_least(x=5)), **FAST)
    assert report.violation_ratio == pytest.approx(10.0, rel=1e-9)      # at the edge x = 1
    assert report.interior_ratio == pytest.approx(2.0, rel=1e-6)        # x >= 5 inside
    assert report.regime == "x >= 5" and report.interior_worst["x"] == pytest.approx(5.0, rel=1e-6)


def order(value, claimed, relation="<=", **fields):
    return OrderClaim("order", "toy.none", "printed", "order", "", Sampler((X,)), value, "T", claimed,
                      fields.pop("decades", (2, 5)), relation, **fields)


def test_orders_by_scaling_with_intervals():
    right = order(lambda c: c["x"] / np.sqrt(c["T"]) + 0 * c["T"], -0.5).audit(seed=0)
    assert right.verdict == "holds" and right.scaling["fitted"] == pytest.approx(-0.5, abs=1e-9)
    slower = order(lambda c: c["x"] * c["T"] ** -0.3, -0.5).audit(seed=0)
    assert slower.verdict == "fails" and slower.severity == "rate"
    assert slower.scaling["interval"][0] <= -0.3 <= slower.scaling["interval"][1]
    assert order(lambda c: c["x"] * c["T"] ** -0.3, -0.3, "==").audit(seed=0).verdict == "holds"
    with pytest.raises(ValidationError, match="two decades"):
        order(lambda c: c["T"], -0.5, decades=(2, 3))


def test_linear_rates_by_scaling():
    decay = lambda c: c["x"] * 0.9 ** c["T"]   # noqa: E731
    assert order(decay, lambda c: np.full_like(c["x"], 0.95), linear=True, decades=(1, 2)).audit().verdict == "holds"
    slow = order(decay, 0.85, linear=True, decades=(1, 2)).audit()
    assert slow.verdict == "fails" and slow.scaling["fitted"] == pytest.approx(0.9, rel=1e-9)


def test_expectations_by_monte_carlo_never_by_one_realization():
    def normal(c, rng, seeds):
        return rng.normal(1.0, 1.0, seeds)
    base = dict(id="mean", result_id="toy.none", variant="printed", statement="E[X] <= b", flag="",
                sampler=Sampler((X,)), sample=normal, seeds=4000)
    holds = ExpectationClaim(**base, rhs=lambda c: 1.1).audit(seed=0)
    assert holds.verdict == "holds" and holds.monte_carlo["interval"][1] > 1.0
    fails = ExpectationClaim(**base, rhs=lambda c: 0.5).audit(seed=0)
    assert fails.verdict == "fails" and fails.monte_carlo["interval"][0] > 0.5
    assert fails.severity == "constant"


def test_the_referee_report(tmp_path):
    reports = [audit_claim(claim("rate", lambda c: (c["x"] * np.sqrt(c["T"]), c["x"])), **FAST),
               order(lambda c: c["x"] * c["T"] ** -0.3, -0.5).audit(seed=0)]
    files = write_report("toy", reports, tmp_path)
    md, page = files["markdown"].read_text(), files["html"].read_text()
    assert "## rate (2)" in md and "### order" in md and "plots/order.png" in md
    assert (tmp_path / "plots" / "order.png").stat().st_size > 1000
    assert "data:image/png;base64," in page and "<h2>rate (2)</h2>" in page
    assert [r["severity"] for r in json.loads(files["json"].read_text())] == ["rate", "rate"]
    # it leads with what backs the verdicts: a refutation (exact) and a fitted order (statistical)
    lead = md.split("## ")[0]
    assert lead.index("What backs each verdict") < lead.index("claims:")
    assert "| toy | 2 | 0 | 0 | 1 | 0 | 1 | 0 |" in lead
    assert "| refuted | an admissible counterexample" in lead and "<th>statistical</th>" in page
    assert "exact ratio" in md and "| evidence | refuted:" in md and "| interval |" in md


def test_audit_report_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["audit", "sdgt", "--samples", "200", "--iterations", "1", "--only", "thm5",
                 "--report", str(out), "--json"]) == 0
    reports = json.loads(capsys.readouterr().out)
    assert {"severity", "kind", "conditions", "interior_ratio", "n_inadmissible"} <= set(reports[0])
    assert (out / "report.html").is_file() and (out / "report.md").is_file()
    assert main(["audit", "sdgt", "--samples", "200", "--iterations", "1", "--only", "thm5",
                 "--report", str(out)]) == 2                        # never overwritten silently


def test_the_report_says_sizes_in_words_and_why_a_vacuous_bound_is_large(tmp_path):
    """Issue 34 items 2-3 in the referee's document: each worst ratio in words (a factor of 10^k),
    and for a vacuous bound its dominant term and the constants it is most sensitive to, evaluated
    at the counterexample."""
    reports = run_audit("fedada2", samples=200, iterations=0, only=["thm20.nonvacuous"], prove=0)
    assert {r.severity for r in reports} == {"vacuous"}
    md = write_report("fedada2", reports, tmp_path)["markdown"].read_text()
    assert "| worst ratio (domain) | a factor of 10^" in md
    anatomy = [line for line in md.splitlines() if line.startswith("| anatomy at the counterexample |")]
    assert len(anatomy) == len(reports) and all("dominant term Psi3/Psi6" in a for a in anatomy)
    assert all("most sensitive to" in a and " G (" in a for a in anatomy)
