"""``fedbound list | bound | stepsize | rounds`` (fedbound/cli/theory_cmd.py)."""
import json
import math
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp

from fedbound.cli.main import main
from fedbound.theory import RESULTS, get, results
from fedbound.theory import symbols as S
from fedbound.theory.result import Provenance, Result, Variant

THM2 = ["K=5", "L=1", "p=0.64", "q=0.5", "R=1", "T=1000", "n=10", "sigma=1", "gamma=1e-4"]
TABLE = ["sigma=1", "n=10", "K=5", "rho=0.5", "p=0.8", "q=0.5", "eta=1", "eta_s=2"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def sets(pairs):
    return [a for pair in pairs for a in ("--set", pair)]


def typical_constants(result, names) -> dict:
    """A fixed point inside every constant's domain for ``result`` (order relations respected)."""
    out = {}
    for name in names:
        d = result.domain(name)[0]
        if d.integer:
            out[name] = float(max(math.floor(d.low) + 2, 3))
        elif math.isfinite(d.high):
            out[name] = d.low + 0.6 * (d.high - d.low)
        else:
            out[name] = (d.low if math.isfinite(d.low) else 0.0) + 0.5
    short = {S.constant(nm, result.scope).key: nm for nm in out}
    for small, large in S.ORDER_RELATIONS:
        small, large = short.get(small), short.get(large)
        if small in out and large in out:
            out[small], out[large] = sorted((out[small], out[large]))
    if "gamma" in out:
        out["gamma"] = 1e-4
    return out


def test_list_json_has_every_result_with_provenance_and_variants(capsys):
    code, out, err = run(capsys, "list", "--json")
    assert code == 0 and err == ""
    entries = {e["id"]: e for e in json.loads(out)}
    assert set(entries) == {r.id for r in results()}
    thm2 = entries["sdgt.thm2"]
    assert thm2["provenance"] == {"seed": "003_3166d581b98362e1.txt", "equation": "(89)", "lines": "922-991"}
    assert [v["name"] for v in thm2["variants"]] == ["printed", "rederived"]
    assert "F16" in [f["id"] for f in thm2["known_issues"]]


def test_list_text_names_variants(capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0 and "sdgt.thm1: Theorem 1" in out and "variants: printed (default), rederived" in out


def test_the_default_variant_is_what_help_says(capsys):
    """`bound --help` says the default is the result's default variant, which `constants` marks and
    `bound` uses (sdgt.thm3's is the appendix's, not its first)."""
    with pytest.raises(SystemExit):
        main(["bound", "--help"])
    assert "the result's default variant" in " ".join(capsys.readouterr().out.split())
    code, out, _ = run(capsys, "bound", "sdgt.thm3", "--set", "L=1", "mu=0.1", "K=2", "p=0.64", "q=0.5")
    default = get("sdgt.thm3").default_variant
    assert code == 0 and f"[variant: {default}]" in out and default != list(get("sdgt.thm3").variants)[0]
    code, out, _ = run(capsys, "constants", "sdgt.thm3")
    assert f"{default} (default)" in out


def test_bound_json_holds_bound_conditions_terms(capsys):
    code, out, err = run(capsys, "bound", "sdgt.thm2", *sets(THM2), "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["result"] == "sdgt.thm2" and data["variant"] == "printed"
    c = {k: float(v) for k, v in (s.split("=") for s in THM2)}
    assert data["bound"] == pytest.approx(float(get("sdgt.thm2").bound(**c)), rel=1e-15)
    conditions = {x["name"]: x for x in data["conditions"]}
    assert conditions["thm2 (83a)"]["holds"] is True and conditions["lemma2"]["relation"] == "<"
    assert data["all_conditions_hold"] is True
    assert sum(data["terms"].values()) == pytest.approx(data["bound"])


def test_bound_text_names_the_variant_and_flags_violations(capsys):
    code, out, _ = run(capsys, "bound", "sdgt.thm2", "--variant", "rederived",
                       *sets([*THM2[:-1], "gamma=0.01"]))
    assert code == 0 and "[variant: rederived]" in out and "VIOLATED" in out


def test_bound_json_puts_every_extra_at_the_top_level(capsys):
    args = ["E1=1", "D=0.24", "D5=1", "K=4", "L=1", "T=1000", "n=10", "sigma=1", "c2=2.01", "p=0.1",
            "q=1", "gamma=1e-6"]
    _, out, _ = run(capsys, "bound", "sdgt.thm1", "--variant", "rederived", *sets(args), "--json")
    data = json.loads(out)
    for key in ("c0", "c1", "D", "D1", "D2", "D3", "D4", "D5"):
        assert isinstance(data[key], float)
    assert data["D1"] < 0 and data["variant"] == "rederived"


def test_matrix_extras_and_derived_keys_are_nested_lists_at_the_top_level(capsys, register_temporarily):
    x = S.L
    fake = Result("test.matrix", "a result with a matrix extra", "for the CLI test",
                  Provenance("none", "(0)", "1-2"), (),
                  [Variant("printed", "a 2x2 matrix and its trace", bound=x,
                           extras={"A": sp.Matrix([[x, 1], [0, 2 * x]])},
                           derived=lambda v: {"trace": np.trace(v["A"], axis1=-2, axis2=-1)})])
    register_temporarily(RESULTS, fake)
    _, out, _ = run(capsys, "bound", "test.matrix", "--set", "L=3", "--json")
    data = json.loads(out)
    assert data["A"] == [[3.0, 1.0], [0.0, 6.0]] and data["trace"] == 9.0 and data["bound"] == 3.0


@pytest.mark.parametrize("rid,variant", [(r.id, v) for r in results() for v in r.variants])
def test_bound_json_of_every_result_and_variant(capsys, rid, variant):
    """Generic: every extra and derived key of every result comes back under its own key."""
    result = get(rid)
    c = typical_constants(result, result.constants(variant))
    code, out, err = run(capsys, "bound", rid, "--variant", variant,
                         *sets(f"{k}={v!r}" for k, v in c.items()), "--json")
    assert code == 0, err
    data = json.loads(out)
    ev = result.evaluate(variant, **c)
    assert data["variant"] == variant
    for key, value in ev.extras.items():
        assert np.shape(data[key]) == np.shape(value), key
    if rid == "sdgt.thm3":
        assert np.shape(data["A"]) == (4, 4)
        assert {"A_l1", "spectral_radius", "gamma_bar", "floor", "bound"} <= set(data)


def test_stepsize_json_gives_the_min_cap_and_its_name(capsys):
    code, out, _ = run(capsys, "stepsize", "sdgt.thm2", *sets(["K=5", "L=1", "p=0.64", "q=0.5"]),
                       "--json")
    data = json.loads(out)
    gamma, binding = get("sdgt.thm2").max_step(K=5, L=1.0, p=0.64, q=0.5)
    assert code == 0 and data["gamma_max"] == float(gamma) and data["binding"] == str(binding)
    assert data["gamma_max"] == min(data["caps"].values()) and data["variant"] == "printed"


def test_stepsize_text(capsys):
    code, out, _ = run(capsys, "stepsize", "sdgt.thm1", *sets(["K=5", "L=1", "p=0.64", "q=0.5"]))
    assert code == 0 and "[variant: printed]" in out and "binding: thm1 (74)" in out


def test_rounds_json_has_every_table1_method(capsys):
    code, out, _ = run(capsys, "rounds", "--eps", "0.01", *sets(TABLE), "--json")
    data = json.loads(out)
    assert code == 0 and data["variant"] == "printed"
    assert set(data["rounds"]) == {"SCAFFOLD", "K-GT", "LED", "H-SGD", "SD-GT", "SD-GT (32)"}
    assert data["rounds"]["SCAFFOLD"] == pytest.approx(1 / (50 * 1e-4) + 100)


def test_rounds_for_one_result(capsys):
    code, out, _ = run(capsys, "rounds", "--eps", "0.5", "--result", "sdgt.thm2",
                       *sets(THM2[:5] + THM2[6:]), "--json")
    data = json.loads(out)
    assert code == 0 and data["result"] == "sdgt.thm2"
    c = {k: float(v) for k, v in (s.split("=") for s in THM2[:5] + THM2[6:])}
    T = data["rounds"]
    assert get("sdgt.thm2").bound(**c, T=T) <= 0.5 < get("sdgt.thm2").bound(**c, T=T - 1)


@pytest.mark.parametrize("argv,needle", [
    (["bound", "sdgt.thm2", *sets([*THM2[:2], "p=1.5", *THM2[3:]])], "p (sampling"),
    (["bound", "sdgt.lemma2", *sets(["mu=2", "L=1"])], "mu must be <= L"),
    (["bound", "sdgt.thm2", *sets(["K=2.5", *THM2[1:]])], "K (local steps"),
    (["bound", "sdgt.thm2", *sets([*THM2[:-2], "sigma=-1", THM2[-1]])], "sigma"),
    (["bound", "sdgt.thm2", *sets([*THM2, "zeta=1"])], "unknown constant 'zeta'"),
    (["bound", "sdgt.thm2", "--set", "K5"], "--set expects NAME=VALUE"),
    (["bound", "sdgt.thm2", "--set", "K=five"], "must be a number"),
    (["stepsize", "sdgt.thm2", *sets(["L=1", "p=0.5", "q=0.5"])], "needs constant(s) K"),
    (["bound", "sdgt.thm3", *sets(["L=1"])], "needs constant(s) K"),
    (["bound", "sdgt.nope", *sets(THM2)], "unknown result 'sdgt.nope'"),
    (["bound", "sdgt.thm2", "--variant", "corrected", *sets(THM2)], "no variant 'corrected'"),
    (["stepsize", "sdgt.lemma6", *sets(["K=2", "L=1"])], "no step-size condition"),
    (["rounds", "--eps", "-1", *sets(TABLE)], "eps"),
    (["rounds", "--eps", "0.1", *sets(TABLE[1:])], "needs constant(s) sigma"),
    (["constants", "sdgt.nope"], "unknown result 'sdgt.nope'"),
    (["constants", "sdgt.thm3", "--variant", "printed"], "no variant 'printed'"),
])
def test_bad_input_gives_one_stderr_line_and_exit_code_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("fedbound: error:") and needle in err


def usage_error(capsys, *argv) -> str:
    """The one stderr line of a command line argparse refuses (exit status 2)."""
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and out == "" and err.count("\n") == 1 and err.startswith("fedbound: error:")
    return err


@pytest.mark.parametrize("argv,pairs", [
    (["bound", "sdgt.thm3", "--L", "1", "--mu", "-0.1"], "--set L=1 mu=-0.1"),
    (["stepsize", "sdgt.thm2", "K=4", "--p=0.64"], "--set K=4 p=0.64"),
    (["rounds", "--eps", "0.1", "sigma=1"], "--set sigma=1"),
])
def test_constants_given_as_flags_are_shown_as_set_takes_them(capsys, argv, pairs):
    assert usage_error(capsys, *argv).rstrip().endswith(f"constants go after --set: {pairs}")


def test_a_mistyped_flag_is_not_read_as_a_constant(capsys):
    err = usage_error(capsys, "bound", "sdgt.thm3", "--variantt", "main")
    assert "did you mean '--variant'?" in err and "--set" not in err
    err = usage_error(capsys, "run", "fedavg", "--lrr", "0.1", "L=1")
    assert "did you mean '--lr'?" in err and "--set" not in err   # run takes no constants


def test_subprocess_exit_code():
    bad = subprocess.run([sys.executable, "-m", "fedbound", "bound", "sdgt.thm2", "--set", "p=1.5"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.splitlines()) == 1


@pytest.mark.parametrize("command", ["list", "bound", "stepsize", "constants", "rounds"])
def test_every_subcommand_has_help(capsys, command):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0 and "--json" in capsys.readouterr().out


def test_set_takes_several_pairs_after_one_flag(capsys):
    """`--set A=1 B=2` and `--set A=1 --set B=2` mean the same."""
    common = ["stepsize", "sdgt.thm2", "--json"]
    assert main(common + ["--set", "L=1", "K=4", "p=0.64", "q=0.5"]) == 0
    one_flag = json.loads(capsys.readouterr().out)
    assert main(common + ["--set", "L=1", "--set", "K=4", "--set", "p=0.64", "--set", "q=0.5"]) == 0
    assert json.loads(capsys.readouterr().out) == one_flag


def test_stepsize_names_its_variable(capsys):
    pairs = sets(["K=5", "L=1", "p=0.64", "q=0.5"])
    code, out, _ = run(capsys, "stepsize", "sdgt.thm2", "--variable", "gamma", "--json", *pairs)
    data = json.loads(out)
    assert code == 0 and data["variable"] == "gamma" and data["implicit"] is False
    code, out, _ = run(capsys, "stepsize", "sdgt.thm2", *pairs)
    assert "largest admissible gamma = " in out
    code, _, err = run(capsys, "stepsize", "sdgt.thm2", "--variable", "gama", *pairs)
    assert code == 2 and "did you mean 'gamma'" in err


def test_stepsize_of_a_client_learning_rate(capsys):
    """FedAda2's Prop. 9 (iii) constrains eta_l (not gamma): `--variable eta_l` solves it, gamma is unknown."""
    code, out, _ = run(capsys, "stepsize", "fedada2.prop9_iii", "--variable", "eta_l", "--json", "--set", "eps=0.25")
    data = json.loads(out)
    assert code == 0 and data["variable"] == "eta_l" and data["eta_l_max"] == 0.5 == \
        float(get("fedada2.prop9_iii").max_step(variable="eta_l", eps=0.25)[0])
    code, _, err = run(capsys, "stepsize", "fedada2.prop9_iii", "--variable", "gamma", "--set", "eps=0.25")
    assert code == 2 and "variable must be one of eta_l, got 'gamma'" in err


def test_audit_all_runs_every_registered_paper(capsys):
    from fedbound.papers import PAPERS
    code, out, err = run(capsys, "audit", "all", "--samples", "50", "--iterations", "0", "--only", "lemma2.")
    assert code == 0, err
    assert [line for line in out.splitlines() if line.startswith("audit of ")] == \
        ["audit of sdgt: 1 claims, 50 random samples each plus extremes and adversarial search (seed 0)"]
    # the papers and the counts are what this checks; proofs (--prove 1) are the certify tests'
    code, out, _ = run(capsys, "audit", "all", "--samples", "50", "--iterations", "0", "--prove", "0", "--json")
    data = json.loads(out)
    counts = data.pop("evidence_counts")      # issue 32: per paper and in all, beside the papers
    assert code == 0 and set(data) == set(PAPERS.names()) and all(data[p] for p in data)
    assert set(counts) == set(PAPERS.names()) | {"all"}
    for paper, reports in data.items():
        assert sum(counts[paper].values()) == len(reports)


def test_list_papers_from_the_registry(capsys):
    """`fedbound list papers`: every paper that `fedbound audit` takes, from fedbound.papers."""
    from fedbound.papers import PAPERS

    assert main(["list", "papers", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [e["name"] for e in listed] == sorted(PAPERS.names())
    assert all(e["summary"] == PAPERS.get(e["name"]).summary for e in listed)
    assert main(["list", "papers"]) == 0
    lines = capsys.readouterr().out.splitlines()     # a paper's line, then its citation indented
    assert [line for line in lines if not line.startswith(" ")][-1].startswith("sdgt: SD-GT")
    assert lines[-1] == f"    {PAPERS.get('sdgt').citation}"


def test_list_algorithms_from_the_registry(capsys):
    """`fedbound list algorithms` is generated from fedbound.algorithms.registry: every registered
    algorithm with every option flag, nothing else."""
    from fedbound.algorithms import registry

    assert main(["list", "algorithms", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [e["name"] for e in listed] == list(registry.names())
    for entry, spec in zip(listed, registry.specs()):
        assert [o["flag"] for o in entry["options"]] == [o.flag for o in spec.options]
    assert main(["list", "algorithms"]) == 0
    text = capsys.readouterr().out
    assert all(f"{name}:" in text for name in registry.names())


@pytest.mark.parametrize("what", ["checks", "tasks", "pep-methods", "participation",
                                  "client-optimizers", "server-optimizers"])
def test_list_any_registry(capsys, what):
    """`fedbound list WHAT` for every other registry: each entry once, in the registry's order, with
    its summary, the module that registered it and every option flag."""
    import importlib

    from fedbound.cli.theory_cmd import REGISTRY_LISTS
    from fedbound.registry import REGISTRIES

    module, kind = REGISTRY_LISTS[what]
    importlib.import_module(module)
    registry = REGISTRIES[kind]
    assert main(["list", what, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [e["name"] for e in listed] == list(registry.names()) and listed
    for entry in listed:
        declared = registry.get(entry["name"])
        assert entry["summary"] == declared.summary and entry["origin"].startswith("fedbound.")
        assert [o["flag"] for o in entry["options"]] == [o.flag for o in declared.options]
    assert main(["list", what]) == 0
    text = capsys.readouterr().out
    assert all(f"{name}: " in text for name in registry.names())


# -- constants ---------------------------------------------------------------------------------------
def test_constants_json_gives_meaning_domain_and_source_of_each_constant(capsys):
    code, out, err = run(capsys, "constants", "sdgt.thm3", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["result"] == "sdgt.thm3" and data["variants"] == ["main", "appendix", "rederived"]
    assert data["provenance"] == {"seed": "003_3166d581b98362e1.txt", "equation": "(92)-(98), Theorem 3",
                                  "lines": "299-314, 1005-1033"}
    by_name = {c["name"]: c for c in data["constants"]}
    assert sorted(by_name) == sorted(get("sdgt.thm3").all_constants())
    K = by_name["K"]
    assert K["key"] == "sdgt.K" and K["meaning"] == "local steps (D2D rounds) per global round"
    assert K["domain"] == K["declared_domain"] == "an integer >= 1" and K["roles"] == ["constant"]
    assert K["source"] == {"declared_by": "sdgt", "seed": "003_3166d581b98362e1.txt",
                           "result": data["provenance"]}
    assert {"kind": "condition", "name": "gamma_bar[1]", "on": "gamma",
            "source": "(97) [L1029], (104) [L1078]", "variants": ["appendix", "rederived"]} in K["uses"]
    assert {"kind": "condition", "name": "gamma_bar[1]", "on": "gamma", "source": "Theorem 3 [L303-L304]",
            "variants": ["main"]} in K["uses"]
    mu = by_name["mu"]   # narrowed by the theorem's assumption, shared by every paper
    assert mu["domain"] == "in (0, inf)" and mu["declared_domain"] == "in [0, inf)"
    assert mu["assumption"] == "A4 with mu > 0 (strongly convex)"
    assert mu["source"]["declared_by"] == "shared" and mu["source"]["seed"] is None
    assert by_name["gamma"]["roles"] == ["step variable"] and by_name["T"]["roles"] == ["rounds"]
    assert by_name["Lyap1"]["uses"] == [{"kind": "extra", "name": "transient", "on": "", "source": "",
                                         "variants": ["main", "appendix", "rederived"]}]
    assert "(96)" in by_name["Lyap1"]["meaning"]


def test_constants_text_lists_each_constant_with_its_uses(capsys):
    code, out, _ = run(capsys, "constants", "sdgt.thm3")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "sdgt.thm3: Theorem 3 (strongly convex, mu > 0)"
    assert lines[1] == ("  stated in 003_3166d581b98362e1.txt (92)-(98), Theorem 3 [L299-314, 1005-1033]; "
                        "variants: main, appendix (default), rederived")
    assert "  K      local steps (D2D rounds) per global round" in lines
    assert "         constant; an integer >= 1; declared by sdgt (seed 003_3166d581b98362e1.txt)" in lines
    assert ("         in conditions gamma_bar[1], gamma_bar[2], gamma_bar[3], gamma_bar[4], gamma_bar[5] "
            "on gamma: (97) [L1029], (104) [L1078] [appendix, rederived]") in lines
    assert ("         constant; in (0, inf) (assumes A4 with mu > 0 (strongly convex); declared in [0, inf)); "
            "shared by every paper") in lines
    assert "         in extras A, b, I_minus_A, gamma_bar, rate, transient" in lines


def test_constants_of_one_variant_and_of_vector_inputs(capsys):
    code, out, _ = run(capsys, "constants", "fednova.thm1", "--variant", "sufficient", "--json")
    data = json.loads(out)
    by_name = {c["name"]: c for c in data["constants"]}
    assert code == 0 and data["variants"] == ["sufficient"]
    assert by_name["p_i"]["roles"] == ["vector input"]
    assert by_name["tau_eff"]["roles"] == ["computed by the preparation (or given)"]
    assert by_name["eta"]["roles"] == ["step variable"] and "C" in by_name   # C: only in predicate (100)
    assert {"kind": "predicate", "name": "(100) C <= a1_max^2", "on": "", "source": "(100) [L627]",
            "variants": ["sufficient"]} in by_name["C"]["uses"]
    assert all(u["variants"] == ["sufficient"] for c in data["constants"] for u in c["uses"])


def test_the_old_var_flag_still_works_and_warns(capsys, monkeypatch):
    """``stepsize --var`` is ``--variable`` (max_step(variable=) in Python); the old flag warns once
    and gives the same answer, and both spellings together are refused."""
    from fedbound import deprecation

    monkeypatch.setattr(deprecation, "_WARNED", set())
    pairs = ["--set", "L=1", "K=4", "p=0.64", "q=0.5"]
    code, new, err_new = run(capsys, "stepsize", "sdgt.thm2", "--variable", "gamma", "--json", *pairs)
    code_old, old, err_old = run(capsys, "stepsize", "sdgt.thm2", "--var", "gamma", "--json", *pairs)
    assert code == code_old == 0 and json.loads(new) == json.loads(old) and not err_new
    assert "--var is deprecated; use --variable" in err_old
    code, _, err = run(capsys, "stepsize", "sdgt.thm2", "--var", "gamma", "--variable", "gamma", *pairs)
    assert code == 2 and "give --variable or its old spelling --var, not both" in err


@pytest.mark.parametrize("what", ["results", "algorithms", "papers", "checks", "tasks", "pep-methods"])
def test_every_list_names_each_entrys_origin(what, capsys):
    """`list --json` of every registry, results included, names the module that registered each entry."""
    code, out, _ = run(capsys, "list", what, "--json")
    entries = json.loads(out)
    assert code == 0 and entries and all(e["origin"].startswith("fedbound.") for e in entries)


# -- numbers a reader can trust (issue 34) -----------------------------------------------------------
FEDADA2_DEMO = ["eta_l=0.1", "K=3", "z=1", "eps=0.1", "eps_s=0.001", "v0=0", "eta=1", "tau=0.01",
                "vtilde0=0.0001", "beta1_tilde=0", "G=25.656", "L=1", "d=5", "f_gap=1.838", "T=20"]


def test_bound_terms_json_sums_to_the_bound_and_names_the_dominant_term(capsys):
    code, out, _ = run(capsys, "bound", "fedada2.thm20", *sets(FEDADA2_DEMO), "--terms", "--json")
    data = json.loads(out)
    anatomy = data["anatomy"]
    assert code == 0 and anatomy["dominant"] == "Psi3/Psi6" and anatomy["dominant_share"] > 0.99
    values = [t["value"] for t in anatomy["terms"]]
    assert abs(sum(values) - data["bound"]) <= 1e-12 * sum(abs(v) for v in values)
    assert set(anatomy["sensitivities"]) == {"G", "K", "L", "T", "beta1_tilde", "d", "eps", "eps_s",
                                             "eta", "eta_l", "f_gap", "tau", "v0", "vtilde0", "z"}
    assert data["reading"]["vacuous"] is True and "10^15" in data["reading"]["words"]


def test_bound_terms_text_and_the_reading(capsys):
    code, out, _ = run(capsys, "bound", "fedada2.thm20", *sets(FEDADA2_DEMO), "--terms")
    assert code == 0
    assert "reading: vacuous: a factor of 10^15 above the trivial bound min(d G^2, 2 L f_gap)" in out
    assert "terms (largest share first; dominant: Psi3/Psi6):" in out
    assert "d log B / d log c" in out and "decades" in out
    # without --terms the reading is there, the anatomy is not
    code, out, _ = run(capsys, "bound", "fedada2.thm20", *sets(FEDADA2_DEMO))
    assert "reading: vacuous" in out and "dominant" not in out


def test_bound_terms_needs_the_bound_constants(capsys):
    code, _, err = run(capsys, "bound", "sdgt.thm2", *sets(THM2[:3]), "--terms")
    assert code == 2 and err.count("\n") == 1 and "--terms needs the bound" in err


def test_a_rate_near_one_keeps_its_digits(capsys):
    """Theorem 3's contraction 1 - mu K gamma/4 at a tiny step is printed as 1 - x, never 1."""
    code, out, _ = run(capsys, "bound", "sdgt.thm3", *sets(["L=1", "mu=0.1", "K=5", "p=0.5", "q=0.5",
                                                           "n=10", "sigma=0.1", "gamma=1e-7", "T=100"]))
    rate = next(line for line in out.splitlines() if line.strip().startswith("rate ="))
    assert rate.strip() == "rate = 1 - 1.3e-08"


def test_rounds_says_which_regime_makes_sdgt_the_weaker_guarantee(capsys):
    code, out, _ = run(capsys, "rounds", "--eps", "1e-3", *sets(["sigma=1", "n=30", "K=5", "p=0.64",
                                                                "q=0.5", "rho=0.5", "eta=1", "eta_s=1"]))
    assert code == 0 and "SD-GT's guarantee is the weaker one" in out and "SCAFFOLD" in out
    code, out, _ = run(capsys, "rounds", "--eps", "1e-3", "--json",
                       *sets(["sigma=1", "n=30", "K=5", "p=0.64", "q=0.5", "rho=0.5", "eta=1", "eta_s=1"]))
    regime = json.loads(out)["regime"]
    assert regime["best"] == "SCAFFOLD" and regime["factor"] > 1 and regime["agree_below"] < 1e-3
