"""The package ``fedbound new plugin`` writes, built and installed (``pip install --no-deps
--target``; on the PYTHONPATH of the commands below, like an installed package on sys.path) and
driven through the command line by its entry point alone (no --plugin): list, run, bound,
stepsize, constants, audit, verify, fixed-point, pep and a sweep on a two-worker Ray, and its own
tests, written with fedbound.testing, pass."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

NAME = "nesterov"
PACKAGE = f"fedbound_{NAME}"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    """(source folder, environment with the installed package on PYTHONPATH)."""
    base = tmp_path_factory.mktemp("plugin")
    source = base / "source"
    out = subprocess.run([sys.executable, "-m", "fedbound", "new", "plugin", str(source), "--name", NAME],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    site = base / "site"
    build = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                            "--no-index", "--quiet", "--target", str(site), str(source)],
                           capture_output=True, text=True, timeout=600, cwd=base)
    assert build.returncode == 0, build.stderr[-3000:]
    assert (site / PACKAGE / "algorithm.py").is_file()
    assert list(site.glob("fedbound_nesterov-*.dist-info/entry_points.txt"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    env.pop("FEDBOUND_PLUGINS", None)
    return source, env, base


def fedbound(env, cwd, *args, timeout=600):
    out = subprocess.run([sys.executable, "-m", "fedbound", *args], capture_output=True, text=True,
                         env=env, cwd=cwd, timeout=timeout)
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr, out.stderr[-3000:]
    return out


def ok(env, cwd, *args, **kw):
    out = fedbound(env, cwd, *args, **kw)
    assert out.returncode == 0, f"fedbound {' '.join(args)}: {out.stderr[-2000:]}"
    return out.stdout


def test_the_plugin_is_found_by_its_entry_point(plugin):
    _, env, cwd = plugin
    algorithms = json.loads(ok(env, cwd, "list", "algorithms", "--json"))
    mine = next(a for a in algorithms if a["name"] == NAME)
    assert [o["name"] for o in mine["options"]][:3] == ["lr", "local_steps", "clients_per_round"]
    assert NAME in ok(env, cwd, "run", "--help") or NAME in ok(env, cwd, "list", "algorithms")
    assert NAME in {p["name"] for p in json.loads(ok(env, cwd, "list", "papers", "--json"))}
    assert f"{NAME}.thm1" in {r["id"] for r in json.loads(ok(env, cwd, "list", "--json"))}
    for what, name in (("checks", f"{NAME}.thm1"), ("pep-methods", NAME)):
        listed = {e["name"]: e for e in json.loads(ok(env, cwd, "list", what, "--json"))}
        assert listed[name]["origin"].startswith(f"fedbound_{NAME}")


def test_run_and_its_options(plugin):
    _, env, cwd = plugin
    out = json.loads(ok(env, cwd, "run", NAME, "--lr", "0.02", "--local-steps", "3",
                        "--clients-per-round", "4", "--rounds", "30", "--json", "--out", str(cwd / "r")))
    metrics = json.loads(Path(out["files"]["json"]).read_text())
    gaps = metrics["metrics"]["loss_gap"]
    assert gaps[-1] < 0.5 * gaps[0]
    missing = fedbound(env, cwd, "run", NAME, "--rounds", "3")
    assert missing.returncode == 2 and "--lr" in missing.stderr and len(missing.stderr.splitlines()) == 1
    bad = fedbound(env, cwd, "run", NAME, "--lr", "0.02", "--server-momentum", "1.5", "--rounds", "3")
    assert bad.returncode == 2 and "--server-momentum" in bad.stderr


def test_theory_commands(plugin):
    _, env, cwd = plugin
    sets = ["L=1", "mu=0.1", "sigma=0.1", "gamma=0.01", "K=2", "beta=0.5", "c=4", "n=8", "zeta2=1",
            "D=1", "T=100"]
    bound = json.loads(ok(env, cwd, "bound", f"{NAME}.thm1", "--set", *sets, "--json"))
    assert bound["all_conditions_hold"] is True and bound["bound"] > 0
    step = json.loads(ok(env, cwd, "stepsize", f"{NAME}.thm1", "--set", "L=1", "K=2", "beta=0.5",
                         "--json"))
    assert step["variable"] == "gamma" and abs(step["gamma_max"] - 0.25 / 16) < 1e-15
    text = ok(env, cwd, "constants", f"{NAME}.thm1")
    assert "zeta2" in text and "heterogeneity at the optimum" in text
    audit = json.loads(ok(env, cwd, "audit", NAME, "--samples", "500", "--iterations", "3", "--json"))
    assert audit


def test_the_audit_certifies_the_templates_theorem(plugin):
    """issue 32: the template's theorem is sympy and its claims ordinary code; the audit proves the
    contraction of its rate on the whole domain, and backs the monotone bound with exact evidence."""
    _, env, cwd = plugin
    reports = {r["claim"]: r for r in json.loads(ok(env, cwd, "audit", NAME, "--samples", "500",
                                                     "--iterations", "3", "--json"))}
    contraction, monotone = reports["thm1.contraction"], reports["thm1.monotone"]
    assert contraction["evidence"] == "proved" and contraction["certificate"]["result"] == "unsat"
    assert monotone["verdict"] == "holds" and monotone["evidence"] in ("proved", "proved-on-box",
                                                                       "not-refuted")
    assert monotone["evidence"] != "not-refuted" or "closest_exact" in monotone["certificate"]


def test_verify_checks_the_theorem_against_runs(plugin):
    _, env, cwd = plugin
    out = json.loads(ok(env, cwd, "verify", NAME, "thm1", "--rounds", "60", "--seeds", "8", "--json"))
    (check,) = out["results"]
    assert check["status"] == "holds" and check["details"]["theorem_applies"] is True
    assert check["measured"] <= check["predicted"]


def test_fixed_point_of_the_plugin_algorithm(plugin):
    _, env, cwd = plugin
    out = json.loads(ok(env, cwd, "fixed-point", NAME, "--lr", "0.02", "--local-steps", "3", "--json"))
    assert 0 < out["spectral_radius"] < 1 and len(out["fixed_point"]) > 0


def test_sweep_on_two_ray_workers(plugin):
    pytest.importorskip("ray")
    _, env, cwd = plugin
    spec = cwd / "grid.json"
    spec.write_text(json.dumps({"algorithm": ["fedavg", NAME], "task": {"name": "lsq", "n": 8, "d": 4},
                                "rounds": 10, "grid": {"lr": [0.01, 0.02], "seed": [0, 1]}}))
    out = cwd / "sweep"
    code = ("import sys, ray\n"
            "ray.init(address='local', num_cpus=2, include_dashboard=False, log_to_driver=False, "
            "configure_logging=False, object_store_memory=100 * 1024 ** 2)\n"
            "from fedbound.cli.main import main\n"
            f"sys.exit(main(['sweep', {str(spec)!r}, '--out', {str(out)!r}, '--ray', '--json']))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=cwd, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads(run.stdout)
    assert summary["computed"] == 8 and summary.get("diverged", 0) == 0
    report = ok(env, cwd, "sweep", "report", str(out), "--metric", "loss_gap")
    assert f"{NAME}(lr=0.01" in report


def test_the_generated_tests_pass(plugin):
    source, env, cwd = plugin
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(source / "tests")], capture_output=True, text=True, env=env,
                         cwd=source, timeout=900)
    assert out.returncode == 0, out.stdout[-3000:]
