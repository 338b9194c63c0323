"""Every public object a job returns displays itself in a notebook (issue 33 item 3).

The jobs are walked as a user meets them -- a registry entry (an algorithm, a task, a PEP method, a
check, looked up before it is used), a task, a theorem (``theory.get``) and its variants, an
evaluation with its reading and anatomy, the largest step size, a controller plan, ``registry.build``
and ``run``, a verify check, an audit of one paper and of several, a PEP certificate, Monte-Carlo
grids (``sweep.evaluate``, ``sweep.runs``) and their estimates, and ``assert_matches_theory``'s match
-- and every object they return must have ``_repr_html_`` giving well-formed HTML (html.parser) that
contains its key numbers as fedbound.readout writes them, ``_repr_latex_`` that is balanced and read
by matplotlib's mathtext where it has one, and a ``__repr__`` of at most display.REPR_LIMIT
characters. Showing an object starts no run, audit, solve or certificate (those are made to fail
while the objects are shown). IPython's display formatter picks the HTML up, and one notebook cell
executed in a kernel shows it.
"""
from __future__ import annotations

import functools
import importlib

import numpy as np
import pytest
import torch

from fedbound import display, sweep
from fedbound.algorithms import registry
from fedbound.algorithms.problem import Problem
from fedbound.algorithms.run import run
from fedbound.control import ControlProblem, NetSpec
from fedbound.control.sdgt.integer import plan
from fedbound.network import Network
from fedbound.pep import PEP_METHODS
from fedbound.pep.certificate import certify
from fedbound.pep.dual import prove
from fedbound.readout import number, ratio_words
from fedbound.stats import mean_ci
from fedbound.tasks import Quadratic
from fedbound.tasks.registry import TASKS, make_task
from fedbound.testing import assert_matches_theory
from fedbound.theory import get
from fedbound.theory.audit import run_audit, run_audits
from fedbound.theory.sdgt import adapter as sdgt_adapter
from fedbound.verify.registry import CHECKS
from html_checks import check_latex, parse_html, png_images

torch.set_num_threads(1)

#: FedAda2 Theorem 20 at the README's constants (vacuous by 10^15)
THM20 = dict(eta_l=0.1, K=3, z=1, eps=0.1, eps_s=1e-3, v0=0, eta=1, tau=0.01, vtilde0=1e-4, beta1_tilde=0,
             G=25.7, L=1, d=5, f_gap=1.84, T=20)
THM3 = dict(L=1, mu=0.1, K=2, p=0.64, q=0.5, n=30, sigma=0, gamma=1e-6, T=100, Lyap1=1)
#: the README's network
NET = NetSpec(m=[10, 10, 10], E=[42.0, 17.0, 80.0], E_d2d=[0.4, 0.2, 1.0])


@functools.cache
def jobs() -> dict:
    """name -> (object a job returned, the strings its HTML must contain)."""
    out = {}
    thm3, nova, ada = get("sdgt.thm3"), get("fednova.thm1"), get("fedada2.thm20")
    out["Result sdgt.thm3"] = (thm3, ["sdgt.thm3", r"\mathcal{L}_1", r"\left\|(I - A)^{-1} b\right\|_{1}",
                                      "299-314", "appendix (default)"])
    out["Result fednova.thm1"] = (nova, [r"\kappa^{2}", r"\beta^{2}", "fednova.thm1"])
    out["Result fedada2.thm20"] = (ada, ["16 variants", "min(d G^2, 2 L f_gap)"])
    out["variants"] = (thm3.variants, ["main", "appendix (default)", "rederived"])
    out["Variant"] = (thm3.variant("main"), [r"\gamma \leq \frac{1}{18 K L}"])

    ev = ada.evaluate(**THM20)
    reading, anatomy = ev.reading(0.0099), ev.anatomy()
    out["Evaluation"] = (ev, [number(float(ev.bound)), "vacuous: a factor of 10^15", "min(d G^2, 2 L f_gap)"])
    out["Evaluation with anatomy"] = (ev.html(anatomy=True), [number(float(ev.bound)), "Psi3/Psi6 (dominant)"])
    out["Reading"] = (reading, [reading.words(), number(0.0099)])
    out["Anatomy"] = (anatomy, ["Psi3/Psi6 (dominant)", number(100 * anatomy.at(anatomy.dominant.share), 3) + "%",
                                number(anatomy.ranked()[0][1], 3)])
    ev3 = thm3.evaluate(**THM3)
    out["Evaluation sdgt.thm3"] = (ev3, [number(float(ev3.bound)), "gamma_bar[1]"] +
                                   [number(float(cap)) for cap in ev3.caps.values()])

    step = get("sdgt.thm2").max_step(L=1, K=4, p=0.64, q=0.5)
    out["max_step"] = (step, [number(step.value), step.binding])
    steps = get("sdgt.thm2").max_step(L=[1, 2, 4], K=4, p=0.64, q=0.5)
    out["max_step over arrays"] = (steps, [number(float(v)) for v in steps.value] + ["3 constants' values"])

    pl = plan(ControlProblem(NET))
    out["Plan"] = (pl, ["49 (K_cap = 49)", number(pl.objective), number(pl.energy_per_round)] +
                   [number(lim.dual) for lim in pl.limits] + [lim.name.replace("<", "&lt;") for lim in pl.limits])

    task = make_task("lsq", n=10, d=5, float64=True)
    alg = registry.build("fedavg", task, seed=0, lr=0.05, local_steps=3)
    out["algorithm"] = (alg, ["FedAvg", "LeastSquares(n=10, d=5)", "local_steps", number(0.05)])
    traj = run(alg, 40, eval_every=5)
    out["Trajectory"] = (traj, [number(float(traj.loss_gap[-1])), number(float(traj.dist2[-1])), "40 rounds"])

    problem = Problem("quadratic", {"float64": True, "d": 3})
    check = CHECKS.get("fedada2.thm20")
    _, checks = check.run(problem, **check.check({"rounds": 4, "seeds": 2}))
    out["Check"] = (checks[0], [checks[0].status, number(checks[0].measured), number(checks[0].predicted)])

    verdicts = run_audit("fednova", samples=200, iterations=0, only=["lemma4", "cor3_sched"])
    worst = max(verdicts, key=lambda r: r.log10_ratio)
    out["run_audit"] = (verdicts, [r.claim for r in verdicts] + [worst.size_words()])
    out["ClaimReport"] = (worst, [worst.claim, worst.size_words(), worst.verdict])
    audits = run_audits("all", samples=100, iterations=0, only=["thm1."])
    out["run_audits"] = (audits, list(audits) + [r.claim for v in audits.values() for r in v])

    cert = certify("fedavg", lower_bound_starts=2, n=2, local_steps=2, rounds=1, lr=1, zeta=0.3, L=1, mu=0.1)
    out["PEP certificate"] = (cert, [number(cert.worst_case), number(cert.lower_bound), cert.verdict])
    proof = prove("fedavg", dict(n=2, local_steps=2, rounds=1, lr=1, zeta=0.3, L=1, mu=0.1), cert.worst_case * 1.01)
    out["PEP proof"] = (proof, [number(float(proof.upper)), proof.digest, f"{proof.multipliers} nonzero"])

    grid = sweep.evaluate(lambda seed, a: a + seed, grid={"a": [1.0, 2.0]}, seeds=3)
    est = grid.estimate(a=2.0)
    out["sweep.evaluate"] = (grid, [f"{number(float(est.mean))} [{number(float(est.low))}, {number(float(est.high))}]"])
    out["Estimate"] = (est, [number(float(est.mean)), est.describe()])
    runs = sweep.runs(lambda seed, lr: registry.build("fedavg", task, seed=seed, lr=lr, clients_per_round=3), 10,
                      grid={"lr": [0.01, 0.05]}, seeds=3)
    last = mean_ci(runs.stack(lr=0.05)["dist2"][:, -1], nonnegative=True)
    out["sweep.runs"] = (runs, [f"{number(float(last.mean))} [{number(float(last.low))}, {number(float(last.high))}]",
                                "dist2 (last round)"])
    per_round = runs.estimate(lr=0.05)
    out["Estimates"] = (per_round, [number(float(per_round["dist2"].mean[-1])), "round 10"])
    out["Estimate per round"] = (per_round["dist2"], [number(float(per_round["dist2"].mean[-1]))])

    quad = Quadratic.generate(6, 3, kappa=2.0, mu=0.5, heterogeneity=1.0, seed=0)
    network = Network.from_topology("complete", 2, 3)
    constants = sdgt_adapter.constants(quad, network, "sdgt", {"local_steps": 2})
    gamma = 0.9 * float(np.asarray(get("sdgt.thm3").max_step("appendix", **constants)[0]))
    lyap1 = float(torch.sum((quad.x0 - quad.x_star) ** 2))
    match = assert_matches_theory("sdgt", "sdgt.thm3", quad, network, measure="dist2",
                                  options={"lr": gamma, "local_steps": 2}, rounds=20, seeds=2,
                                  constants={"Lyap1": lyap1})
    out["TheoryMatch"] = (match, [match.check.status, ratio_words(match.check.ratio), number(match.check.measured)])

    out["Task"] = (task, ["LeastSquares", "10 clients", number(task.L), number(task.f_star)])
    out["Task without constants"] = (make_task("mlp-gmm", n=6, d=4), ["MLPClassifier", "unknown"])
    bounded = make_task("logistic", n=5, d=3)   # L, L_global are upper bounds: 6 digits, marked
    out["Task with bounds"] = (bounded, [f"{number(bounded.L)} (upper bound)", f"{number(bounded.L_global)} (upper bound)"])
    # the registries' entries, as a user looks one up before building it
    out["AlgorithmSpec"] = (registry.get("fedavg"), ["fedavg", "McMahan", "--local-steps", "required", "federated"])
    out["TaskSpec"] = (TASKS.get("mlp-digits"), ["mlp-digits", "--batch-seed", "batch_size"])
    out["PEP Method"] = (PEP_METHODS.get("fedavg"), ["heterogeneity zeta", "--local-steps", "4"])
    out["VerifyCheck"] = (CHECKS.get("fedada2.thm20"), ["fedada2.thm20", "--seeds"])
    return out


NAMES = ["Result sdgt.thm3", "Result fednova.thm1", "Result fedada2.thm20", "variants", "Variant", "Evaluation",
         "Evaluation with anatomy", "Reading", "Anatomy", "Evaluation sdgt.thm3", "max_step", "max_step over arrays", "Plan", "algorithm", "Trajectory",
         "Check", "run_audit", "ClaimReport", "run_audits", "PEP certificate", "PEP proof", "sweep.evaluate", "Estimate",
         "sweep.runs", "Estimates", "Estimate per round", "TheoryMatch", "Task", "Task without constants", "Task with bounds", "AlgorithmSpec", "TaskSpec", "PEP Method",
         "VerifyCheck"]


@pytest.fixture
def nothing_computes(monkeypatch):
    """While objects are shown, the jobs that compute (runs, audits, solves, certificates, Monte-Carlo
    grids) fail: a display reads what its object holds."""
    def refuse(*args, **kwargs):
        raise AssertionError("a display started a computation")
    jobs()    # computed before the computations are refused
    for module, name in (("fedbound.algorithms.run", "run"), ("fedbound.theory.audit", "audit_claim"),
                         ("fedbound.theory.audit", "run_audit"), ("fedbound.pep.certificate", "certify"),
                         ("fedbound.pep.certificate", "solve"), ("fedbound.pep.dual", "prove"), ("fedbound.control.sdgt.integer", "integer_optimum"),
                         ("fedbound.control.sdgt.integer", "plan"), ("fedbound.sweep.evaluation", "_gather"),
                         ("fedbound.verify.theorem", "compare")):
        monkeypatch.setattr(importlib.import_module(module), name, refuse)


@pytest.mark.parametrize("name", NAMES)
def test_every_object_a_job_returns_displays_itself(name, nothing_computes):
    obj, expected = jobs()[name]
    markup = obj._repr_html_()
    text, images = parse_html(markup)
    png_images(images)
    for key in expected:
        assert key in markup or key in text, f"{name}: {key!r} not shown"
    assert len(repr(obj)) <= display.REPR_LIMIT, repr(obj)[:200]
    if hasattr(obj, "_repr_latex_"):
        check_latex(obj._repr_latex_())


def test_the_reprs_that_were_dumps_are_short():
    """A sweep's Measurements printed 18 504 characters, a result's variants and an algorithm as an
    object's address."""
    grid, variants = jobs()["sweep.runs"][0], jobs()["variants"][0]
    assert repr(grid).startswith("Measurements(configurations=2, seeds=3, outputs='runs'")
    assert repr(variants) == "<variants of sdgt.thm3: main, appendix (default), rederived>"
    assert repr(jobs()["Plan"][0]).startswith("Plan(K=49, h=(10, 10, 10), p=1, ")
    assert repr(jobs()["algorithm"][0]) == ("FedAvg(task=LeastSquares(n=10, d=5), seed=0, lr=0.05, "
                                            "local_steps=3, server_lr=1)")
    assert repr(jobs()["Task without constants"][0]) == "MLPClassifier(n=6, d=490, sigma2=0)"
    assert repr(jobs()["Task"][0]).startswith("LeastSquares(n=10, d=5, L=")
    assert repr(jobs()["AlgorithmSpec"][0]) == ("AlgorithmSpec('fedavg': FedAvg: local SGD, server average "
                                                "(McMahan et al. 2017); options lr, local_steps, "
                                                "clients_per_round, participation, server_lr)")


def test_plots_of_runs_are_inline_images():
    for name in ("Trajectory", "sweep.runs", "Estimates", "TheoryMatch", "Check"):
        _, images = parse_html(jobs()[name][0]._repr_html_())
        assert len(png_images(images)) == 1, name


def test_the_audit_table_is_sorted_by_size():
    verdicts = jobs()["run_audit"][0]
    markup = verdicts._repr_html_()
    order = sorted(verdicts, key=lambda r: -r.log10_ratio if np.isfinite(r.log10_ratio) else -np.inf)
    positions = [markup.index(f">{r.claim}<") for r in order]
    assert positions == sorted(positions)
    assert isinstance(verdicts, list) and isinstance(jobs()["run_audits"][0], dict)


def test_a_claim_reports_evidence_is_shown_where_it_has_one():
    """The audit's verdicts gain an ``evidence`` (what backs them): shown where a report holds one."""
    report = jobs()["ClaimReport"][0]
    assert "evidence" not in parse_html(report._repr_html_())[0] or hasattr(report, "evidence")
    report.evidence = "refuted: an admissible counterexample in exact arithmetic"
    try:
        assert report.evidence in parse_html(report._repr_html_())[0]
        assert report.evidence in parse_html(jobs()["run_audit"][0]._repr_html_())[0]
    finally:
        del report.evidence


def test_ipython_picks_the_html_and_latex_up():
    from IPython.core.formatters import DisplayFormatter

    formatter = DisplayFormatter()
    for name in NAMES:
        obj = jobs()[name][0]
        if isinstance(obj, tuple):
            continue
        data, _ = formatter.format(obj)
        assert data["text/html"] == obj._repr_html_(), name
        assert data["text/plain"] == repr(obj), name
    data, _ = formatter.format(get("fednova.thm1"))
    assert r"\kappa^{2}" in data["text/latex"]


def test_a_notebook_cell_shows_a_theorem_as_html(tmp_path):
    """One cell executed in a Jupyter kernel (ipykernel, the test extra) displays the theorem's HTML."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from fedbound.theory import get\nget('fednova.thm1')")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = nb.cells[0].outputs
    assert outputs and outputs[0]["output_type"] == "execute_result"
    data = outputs[0]["data"]
    text, _ = parse_html(data["text/html"])
    assert "fednova.thm1" in text and r"\kappa^{2}" in data["text/html"]
    assert data["text/plain"] == repr(get("fednova.thm1"))
