"""`fedbound audit afga`: the computed verdicts against the notes (papers/afga.md 4.4, 4.6, flags
15, 17, 25, 30, 32), and the numbers it reports for the paper's rings."""
import json
import subprocess
import sys

import pytest

from fedbound.theory import get
from fedbound.theory.afga.experiments import SETTINGS
from fedbound.theory.audit import claims_of, run_audit

RINGS = {s.name for s in SETTINGS if s.topology == "ring"}


@pytest.fixture(scope="module")
def reports():
    return {(r.claim, r.variant): r for r in run_audit("afga", samples=400, seed=0, iterations=4)}


def test_every_claim_is_tied_to_a_result_and_variant():
    claims = claims_of("afga")
    assert len({(c.id, c.variant) for c in claims}) == len(claims) == 24
    for c in claims:
        assert c.variant in get(c.result_id).variants and c.statement


@pytest.mark.parametrize("form", ["theorem", "sufficient", "exact"])
def test_rho_condition_fails_for_every_ring_experiment_with_the_numbers(reports, form):
    r = reports[(f"rho.experiments.{form}", form)]
    assert r.verdict == "fails" and set(r.failing_parts) == RINGS       # the complete graph holds
    assert round(r.worst["rho[AFGA S2 ring N=50 M=5]"], 4) == 0.9947
    assert round(r.worst["rho[CAFGA S2 ring K=5 n=10 m=1]"], 4) == 0.8727
    assert round(r.worst["rho[AFGA S1 ring N=100 M=5]"], 4) == 0.9987
    assert round(r.worst["rho[CAFGA S1 ring K=5 n=20 m=1]"], 4) == 0.9674
    if form == "theorem":   # ratio rho/(m/(m+n)) of the worst experiment: 0.9987 * 105/5
        assert r.violation_ratio == pytest.approx(0.99868 * 21, rel=1e-4)
    assert reports[("rho.reported", "theorem")].verdict == "fails"


def test_implications_between_the_forms(reports):
    verdicts = {k[0]: r.verdict for k, r in reports.items() if k[0].startswith("rho.implies")}
    assert verdicts == {"rho.implies.exact=>sufficient": "fails",       # the paper's "(30) implies (31)"
                        "rho.implies.sufficient=>exact": "holds",
                        "rho.implies.theorem=>sufficient": "holds",
                        "rho.implies.theorem=>exact": "holds"}


def test_statement_versus_proof(reports):
    for claim in ("lemmaF1.algebra", "lemmaF1.instance", "lemmaF5.instance", "lemmaF8.instance"):
        assert reports[(claim, "printed")].verdict == "fails", claim
        assert reports[(claim, "rederived")].verdict == "holds", claim
    assert reports[("lemmaF1.algebra", "printed")].violation_ratio == pytest.approx(2.0, rel=1e-3)
    assert reports[("lemmaF8.instance", "printed")].worst["rho"] > 0


def test_27_does_not_give_26(reports):
    for variant in ("printed", "rederived"):
        assert reports[("stepsize.26_from_caps", variant)].verdict == "fails"


def test_cli_runs_and_prints_json():
    out = subprocess.run([sys.executable, "-m", "fedbound", "audit", "afga", "--samples", "50", "--iterations",
                          "0", "--only", "rho.experiments.theorem", "--json"],
                         capture_output=True, text=True, check=True)
    (report,) = json.loads(out.stdout)
    assert report["verdict"] == "fails" and set(report["failing_parts"]) == RINGS
