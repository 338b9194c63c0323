"""The general engine (issue 9 item 1): scoped symbols, conditions on any variable (implicit ones
solved numerically), predicates, vector inputs with a preparation step, a result's own rounds
variable, switch-generated variants, partial evaluation; on the toy results of toy_results.py and on
SD-GT."""
import importlib
import json
import sys

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings, strategies as st

from fedbound.cli.main import main
from fedbound.errors import ValidationError
from fedbound.testing import admissible_constants
from fedbound.theory import get
from fedbound.theory import symbols as S
from fedbound.theory.result import (IMPLICIT_RTOL, Predicate, Preparation, Provenance, Result,
                                    StepCondition, Switch, Variant, switch_variants)

# -- toy results: what FedNova, AFGA and FedAda2 need from the engine, without encoding the papers:
# a condition on eta_l with an AFGA-(27)-shaped implicit cap, a predicate, scoped names that shadow
# shared ones (the toy optimizer's eps), vector inputs reduced in a preparation step, a result-owned
# rounds variable R, and 2 x 2 switch-generated variants. Built inside an isolated symbol registry
# (the ``toy`` fixture), so that the toy scope never leaks into other tests.
WHERE = Provenance("none", "(toy)", "1-2")


def declare(name, domain, meaning, **kw):
    return S.declare(name, domain, meaning, scope="toy", **kw)


def build() -> dict[str, Result]:
    eta_l = declare("eta_l", S.POSITIVE, "toy local learning rate", latex="eta_l")
    eps = declare("eps", S.POSITIVE, "toy optimizer epsilon (not a target accuracy)", shadow=True)
    I = declare("I", S.POSITIVE_INTEGER, "toy local steps")
    G = declare("G", S.POSITIVE, "toy gradient bound")
    R = declare("R", S.POSITIVE_INTEGER, "toy number of rounds")
    rho = declare("rho", S.PROBABILITY, "toy mixing rate")
    m = declare("m", S.POSITIVE_INTEGER, "toy sampled clients")
    declare("p_i", S.PROBABILITY, "toy client weights", ndim=1)
    declare("tau_i", S.POSITIVE, "toy local steps per client", ndim=1)
    tau_eff = declare("tau_eff", S.POSITIVE, "toy effective local steps")
    A = declare("A", S.POSITIVE, "toy constant A")
    B = declare("B", S.NONNEGATIVE, "toy constant B")
    L, n, sigma = S.L, S.n, S.sigma

    # AFGA-(27)-shaped: eta_l <= eps^(1/4)/sqrt(18 L^2 C0 I^2) with C0 = sqrt(eta_l^2 I^2 G^2 + eps)
    C0 = sp.sqrt(eta_l ** 2 * I ** 2 * G ** 2 + eps)
    implicit = Result(
        "toy.implicit", "implicit step condition", "a toy bound with an implicit cap", WHERE, ("toy",),
        [Variant("printed", "explicit cap 1/(8 I L), implicit cap, predicate rho <= m/(m+n)",
                 bound=1 / (eta_l * I * R) + eta_l * L * sigma ** 2 * C0,
                 conditions=(StepCondition("(a)", 1 / (8 * I * L), variable=eta_l),
                             StepCondition("(27)", eps ** sp.Rational(1, 4) / sp.sqrt(18 * L ** 2 * C0 * I ** 2),
                                           variable=eta_l)),
                 predicates=(Predicate("rho", rho, "<=", m / (m + n)),))],
        rounds="R")
    unsolvable = Result(
        "toy.unsolvable", "no admissible step", "eta_l <= eta_l/2 holds for no eta_l > 0", WHERE, (),
        [Variant("printed", "cap below the diagonal", bound=eta_l * L,
                 conditions=(StepCondition("half", eta_l / 2 + 0 * L, variable=eta_l),))])

    cubic = Result(
        "toy.cubic", "implicit caps without an explicit one", "eta_l <= cap(eta_l) only", WHERE, (),
        [Variant("printed", "eta_l <= 1/(1 + G eta_l^2): the root of G v^3 + v - 1 = 0",
                 bound=eta_l * G, conditions=(StepCondition("cubic", 1 / (1 + G * eta_l ** 2), variable=eta_l),)),
         Variant("unbounded", "eta_l <= eta_l + G holds for every eta_l", bound=eta_l * G,
                 conditions=(StepCondition("always", eta_l + G, variable=eta_l),))])

    def reduce(p_i, tau_i):
        tau_eff = np.sum(p_i * tau_i, axis=-1)
        m = p_i.shape[-1]
        return {"tau_eff": tau_eff, "A": m * tau_eff * np.sum(p_i ** 2 / tau_i, axis=-1),
                "B": np.sum(p_i * (tau_i - 1), axis=-1)}

    vector = Result(
        "toy.vector", "vector inputs", "FedNova-like constants from per-client vectors", WHERE, (),
        [Variant("printed", "a bound in tau_eff, A, B",
                 bound=1 / (tau_eff * S.T) + A * sigma ** 2 + B * L)],
        preparation=Preparation(("p_i", "tau_i"), ("tau_eff", "A", "B"), reduce,
                                "tau_eff = sum p_i tau_i, A = m tau_eff sum p_i^2/tau_i, "
                                "B = sum p_i (tau_i - 1)"))
    switched = Result(
        "toy.switch", "two switches", "a bound with two independent corrections", WHERE, (),
        switch_variants(
            (Switch("bias", {"printed": "as printed: 1/R", "corrected": "corrected: 2/R"}, "printed"),
             Switch("noise", {"printed": "as printed: sigma^2", "rederived": "rederived: 3 sigma^2"},
                    "printed")),
            lambda s: {"bound": (2 if s["bias"] == "corrected" else 1) / R
                       + (3 if s["noise"] == "rederived" else 1) * sigma ** 2},
            "toy bound"),
        rounds="R")
    return {r.id: r for r in (implicit, unsolvable, cubic, vector, switched)}


IMPLICIT = dict(L=1.0, sigma=0.5, I=4, G=2.0, eps=1e-6, R=100, rho=0.1, m=5, n=20)


@pytest.fixture
def toy(register_toy_results):
    """The toy results, registered, in a symbol registry restored after the test."""
    return register_toy_results(build)


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- scoped symbols --------------------------------------------------------------------------------
def test_a_clashing_declaration_is_an_error_at_import(toy, tmp_path, monkeypatch):
    """A module that declares SD-GT's K again with another meaning fails when imported."""
    (tmp_path / "clashing_paper.py").write_text(
        "from fedbound.theory import symbols as S\n"
        "K = S.declare('K', S.POSITIVE_INTEGER, 'number of clusters', scope='sdgt')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(S.DeclarationError, match=r"sdgt.K declared twice with different meanings"):
        importlib.import_module("clashing_paper")
    sys.modules.pop("clashing_paper", None)


def test_scoped_names_are_distinct_symbols(toy):
    afga_k = S.declare("K", S.POSITIVE_INTEGER, "number of clusters", scope="afga_toy")
    sdgt_k = S.constant("K", "sdgt").symbol
    assert afga_k != sdgt_k and str(afga_k) == str(sdgt_k) == "K"
    assert S.constant("K", "afga_toy").meaning == "number of clusters"
    with pytest.raises(S.UnknownNameError, match=r"ambiguous: (.*, )?afga_toy\.K, (.*, )?sdgt\.K"):
        S.constant("K")
    # an identical re-declaration is the same symbol (a module imported twice)
    assert S.declare("K", S.POSITIVE_INTEGER, "number of clusters", scope="afga_toy") is afga_k


def test_a_scoped_constant_may_not_silently_reuse_a_shared_name(toy):
    with pytest.raises(S.DeclarationError, match="clashes with the shared constant mu"):
        S.declare("mu", S.POSITIVE, "proximal weight", scope="fedprox_toy")
    prox = S.declare("mu", S.POSITIVE, "proximal weight", scope="fedprox_toy", shadow=True)
    assert prox != S.mu and S.resolve("mu", "fedprox_toy").symbol == prox
    assert S.resolve("mu", "sdgt").symbol == S.mu
    with pytest.raises(S.DeclarationError, match="clashes with the scoped"):
        S.declare("m", S.POSITIVE_INTEGER, "a shared m", scope=None)   # toy.m exists


def test_the_toy_optimizer_eps_is_not_the_target_accuracy(toy):
    assert S.resolve("eps", "toy").meaning.startswith("toy optimizer epsilon")
    assert S.resolve("eps", "sdgt").meaning == "target accuracy"
    assert S.resolve("eps", "toy").symbol != S.eps


def test_a_result_using_another_scopes_symbol_is_refused(toy):
    with pytest.raises(S.DeclarationError, match="uses sdgt.K"):
        Result("toy.bad", "t", "s", WHERE, (),
               [Variant("printed", "d", bound=S.constant("K", "sdgt").symbol * S.L)])


# -- conditions on eta_l, implicit solve -------------------------------------------------------------
def brute_force_max(result, constants, grid):
    """The largest grid value of eta_l at which every condition holds (evaluate, vectorized)."""
    ev = result.evaluate(eta_l=grid, **constants)
    return grid[ev.all_conditions_hold].max()


@pytest.mark.parametrize("eps", [1e-8, 1e-6, 1e-2, 1.0])
def test_implicit_condition_is_solved_to_its_tolerance_and_matches_a_scan(toy, eps):
    result = toy["toy.implicit"]
    c = {**IMPLICIT, "eps": eps}
    best, binding = result.max_step(variable="eta_l", **{k: v for k, v in c.items() if k != "R"})
    best = float(best)
    ev = result.evaluate(eta_l=best, **c)
    assert ev.all_conditions_hold
    assert not result.evaluate(eta_l=best * (1 + 4 * IMPLICIT_RTOL), **c).all_conditions_hold \
        or binding == "(a)"
    grid = np.geomspace(best / 10, best * 10, 200_001)
    scanned = brute_force_max(result, c, grid)
    assert scanned <= best * (1 + IMPLICIT_RTOL) and best <= scanned * (1 + 3e-5)   # grid step 2.3e-5
    expected = "(a)" if 1 / (8 * c["I"] * c["L"]) <= best * (1 + 1e-9) else "(27)"
    assert binding == expected


def test_implicit_solve_is_vectorized_and_equals_the_scalar_solves(toy):
    result = toy["toy.implicit"]
    eps = np.array([1e-8, 1e-4, 1.0])
    L = np.array([[0.5], [2.0]])
    best, binding = result.max_step(variable="eta_l", L=L, sigma=0.5, I=4, G=2.0, eps=eps)
    assert best.shape == binding.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            one, name = result.max_step(L=float(L[i, 0]), sigma=0.5, I=4, G=2.0, eps=float(eps[j]))
            assert float(one) == pytest.approx(best[i, j], rel=1e-11) and name == binding[i, j]


def test_an_implicit_cap_alone_is_solved_from_a_doubling_bracket(toy):
    result = toy["toy.cubic"]
    G = np.array([1e-6, 0.5, 3.0, 1e6])
    best, binding = result.max_step(G=G)
    roots = [max(r.real for r in np.roots([g, 0.0, 1.0, -1.0]) if abs(r.imag) < 1e-9) for g in G]
    np.testing.assert_allclose(best, roots, rtol=2 * IMPLICIT_RTOL)
    assert np.all(best <= 1 / (1 + G * best ** 2)) and set(binding) == {"cubic"}
    assert np.all(np.isinf(result.max_step("unbounded", G=G)[0]))


def test_no_admissible_value_is_a_clear_error(toy):
    with pytest.raises(ValidationError, match=r"no admissible eta_l > 0"):
        toy["toy.unsolvable"].max_step(variable="eta_l")


def test_variable_names_appear_in_output_latex_and_strategies(toy, capsys):
    result = toy["toy.implicit"]
    latex = result.latex()
    assert r"\eta_{l} \le" in latex and r"\gamma" not in latex
    assert [str(c).split()[0] for c in result.variant().conditions] == ["eta_l", "eta_l"]
    with pytest.raises(S.UnknownNameError, match="did you mean 'eta_l'"):
        result.max_step(variable="eta_k", **IMPLICIT)
    c = {k: v for k, v in IMPLICIT.items() if k != "R"}
    code, out, err = cli(capsys, "stepsize", "toy.implicit", "--variable", "eta_l", "--json",
                         *[a for k, v in c.items() for a in ("--set", f"{k}={v}")])
    data = json.loads(out)
    assert code == 0, err
    assert data["variable"] == "eta_l" and data["implicit"] is True
    assert data["eta_l_max"] == float(result.max_step(variable="eta_l", **c)[0])
    code, out, _ = cli(capsys, "stepsize", "toy.implicit", *[a for k, v in c.items() for a in ("--set", f"{k}={v}")])
    assert code == 0 and "largest admissible eta_l = " in out
    code, out, _ = cli(capsys, "bound", "toy.implicit", "--set", "eta_l=1e-3",
                       *[a for k, v in IMPLICIT.items() for a in ("--set", f"{k}={v}")])
    assert code == 0 and "(a): eta_l <= " in out and "step-size conditions at eta_l = 0.001" in out


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_admissible_constants_draws_an_admissible_eta_l(toy, data):
    result = toy["toy.implicit"]
    values = data.draw(admissible_constants(result, variable="eta_l",
                                            bounds={"eps": (1e-8, 1.0), "L": (0.1, 10.0)}))
    assert "eta_l" in values and "gamma" not in values
    assert result.evaluate(**values).all_conditions_hold


# -- predicates ------------------------------------------------------------------------------------
def test_predicates_are_reported_as_holds_or_fails(toy, capsys):
    result = toy["toy.implicit"]
    rho = np.array([0.1, 0.2, 0.3])   # m/(m+n) = 0.2
    ev = result.evaluate(eta_l=1e-4, **{**IMPLICIT, "rho": rho})
    np.testing.assert_array_equal(ev.predicates["rho"], [True, True, False])
    sets = [a for k, v in {**IMPLICIT, "rho": 0.3}.items() for a in ("--set", f"{k}={v}")]
    code, out, _ = cli(capsys, "bound", "toy.implicit", "--set", "eta_l=1e-4", *sets)
    assert code == 0 and "rho: rho <= m/(m + n)  FAILS" in out
    code, out, _ = cli(capsys, "bound", "toy.implicit", "--set", "eta_l=1e-4", "--json", *sets)
    assert json.loads(out)["predicates"] == [{"name": "rho", "statement": "rho <= m/(m + n)",
                                              "holds": False}]


# -- vector inputs ---------------------------------------------------------------------------------
def test_vector_inputs_are_reduced_per_constant_set(toy):
    result = toy["toy.vector"]
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4), size=3)
    tau = rng.integers(1, 10, size=(3, 4)).astype(float)
    batch = result.evaluate(p_i=p, tau_i=tau, T=100, sigma=1.0, L=2.0)
    for i in range(3):
        one = result.bound(p_i=p[i], tau_i=tau[i], T=100, sigma=1.0, L=2.0)
        tau_eff = float(p[i] @ tau[i])
        direct = result.bound(tau_eff=tau_eff, A=4 * tau_eff * float(np.sum(p[i] ** 2 / tau[i])),
                              B=float(p[i] @ (tau[i] - 1)), T=100, sigma=1.0, L=2.0)
        assert batch.bound[i] == pytest.approx(float(one), rel=1e-15) == pytest.approx(float(direct), rel=1e-14)


@pytest.mark.parametrize("bad,pattern", [
    ({"p_i": [0.5, 0.5], "tau_i": [1.0, 2.0, 3.0]}, "the same number"),
    ({"p_i": [0.5, 0.5]}, "missing tau_i"),
    ({"p_i": [0.5, np.nan], "tau_i": [1.0, 2.0]}, "p_i must be a number, got nan"),
    ({"p_i": [0.5, 1.5], "tau_i": [1.0, 2.0]}, r"p_i .* entries must be in \[0, 1\], got 1.5"),
    ({"p_i": [0.5, 0.5], "tau_i": [1.0, 2.0], "A": 1.0}, "give either, not both"),
    ({"p_i": 0.5, "tau_i": 1.0}, "must be a vector"),
])
def test_bad_vector_inputs_are_named(toy, bad, pattern):
    with pytest.raises(ValidationError, match=pattern):
        toy["toy.vector"].bound(T=10, sigma=1.0, L=1.0, **bad)


def test_rounds_to_eps_solves_for_the_results_own_rounds_variable(toy):
    result = toy["toy.switch"]
    assert result.rounds == "R" and "T" not in result.constants()
    R = result.rounds_to_eps(0.5, sigma=0.5)          # 1/R + 0.25 <= 0.5: R = 4
    assert type(R) is float and R == 4.0                # a scalar question, a Python number
    assert result.rounds_to_eps([0.5, 0.3], sigma=0.5).tolist() == [4.0, 20.0]
    assert float(result.rounds_to_eps(0.5, "bias=corrected", sigma=0.5)) == 8.0
    with pytest.raises(ValidationError, match="solves for R"):
        result.rounds_to_eps(0.5, R=3, sigma=0.5)


# -- switch-generated variants ---------------------------------------------------------------------
def test_two_switches_generate_four_self_describing_variants(toy):
    result = toy["toy.switch"]
    assert list(result.variants) == ["printed", "noise=rederived", "bias=corrected",
                                     "bias=corrected,noise=rederived"]
    for v in result.variants.values():
        for switch, option in v.settings.items():
            assert f"{switch}={option}" in v.description
    assert "the printed combination" in result.variant("printed").description
    bounds = {name: float(result.bound(name, R=10, sigma=1.0)) for name in result.variants}
    assert bounds == {"printed": 1.1, "noise=rederived": 3.1, "bias=corrected": 1.2,
                      "bias=corrected,noise=rederived": 3.2}
    assert result.variant("noise=rederived,bias=corrected").name == "bias=corrected,noise=rederived"
    assert result.variant("noise=printed").name == "printed"
    with pytest.raises(S.UnknownNameError, match="did you mean 'noise'"):
        result.variant("nois=rederived")


def test_four_independent_corrections_give_sixteen_distinct_variants(toy):
    """FedAda2's shape: four binary corrections of one bound, 2 x 2 x 2 x 2 variants."""
    R, sigma = S.resolve("R", "toy").symbol, S.sigma
    switches = [Switch(f"c{i}", {"printed": f"term {i} as printed", "fixed": f"term {i} corrected"},
                       "printed") for i in range(4)]
    variants = switch_variants(switches, lambda s: {"bound": sum(
        (2 if s[f"c{i}"] == "fixed" else 1) * sigma ** (i + 1) / R for i in range(4))})
    result = Result("toy.sixteen", "four switches", "s", WHERE, (), variants, rounds="R")
    assert len(result.variants) == 16 and result.default_variant == "printed"
    values = {name: float(result.bound(name, R=1, sigma=10.0)) for name in result.variants}
    assert len(set(values.values())) == 16
    for name, v in result.variants.items():
        assert all(f"c{i}={v.settings[f'c{i}']}" in v.description for i in range(4))
        assert name == "printed" or all(f"c{i}=fixed" in name for i in range(4) if v.settings[f"c{i}"] == "fixed")


# -- partial evaluation ----------------------------------------------------------------------------
THM3 = dict(L=1.0, mu=0.1, K=2, p=0.5, q=0.5, n=4, sigma=1.0, gamma=1e-5)


@pytest.mark.parametrize("variant", ["main", "appendix", "rederived"])
def test_partial_evaluation_of_theorem3_without_T_and_Lyap1(variant):
    thm3 = get("sdgt.thm3")
    partial = thm3.evaluate(variant, partial=True, **THM3)
    full = thm3.evaluate(variant, **THM3, T=10, Lyap1=1.0)
    assert partial.bound is None and partial.missing_constants == ["Lyap1", "T"]
    assert set(partial.missing) == {"transient", "bound"}
    for key in ("A", "b", "I_minus_A", "gamma_bar", "floor", "spectral_radius", "A_l1"):
        np.testing.assert_array_equal(partial.extras[key], full.extras[key])
    assert partial.caps.keys() == full.caps.keys() and partial.all_conditions_hold == full.all_conditions_hold
    with pytest.raises(ValidationError, match="needs constant"):
        thm3.evaluate(variant, **THM3)


def test_cli_bound_prints_the_matrix_A_without_T_and_Lyap1(capsys):
    sets = [a for k, v in THM3.items() for a in ("--set", f"{k}={v}")]
    code, out, err = cli(capsys, "bound", "sdgt.thm3", "--json", *sets)
    assert code == 0, err
    data = json.loads(out)
    np.testing.assert_array_equal(data["A"], get("sdgt.thm3").evaluate(**THM3, T=1, Lyap1=0).extras["A"])
    assert data["bound"] is None and data["missing"] == {"transient": ["Lyap1", "T"],
                                                         "bound": ["Lyap1", "T"]}
    code, out, _ = cli(capsys, "bound", "sdgt.thm3", *sets)
    assert code == 0 and "transient: set Lyap1, T" in out and "A = [[" in out


# -- layout ----------------------------------------------------------------------------------------
def test_the_root_of_118_lives_in_theory_and_the_controller_imports_it():
    objective = importlib.import_module("fedbound.control.sdgt.objective")
    stationary = importlib.import_module("fedbound.theory.sdgt.stationary")
    assert objective.k_root is stationary.k_root
    code = ("import sys, fedbound.theory.sdgt.stationary, fedbound.control; "
            "assert 'sympy' not in sys.modules")
    import subprocess
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_generic_linear_algebra_is_its_own_module():
    from fedbound.theory import linalg, result
    assert not hasattr(result, "spectral_quantities") and callable(linalg.spectral_quantities)
    assert "sp" not in linalg.__dict__ and "sympy" not in linalg.__dict__   # numeric only


def test_cli_takes_vector_inputs_as_comma_separated_numbers(toy, capsys):
    code, out, err = cli(capsys, "bound", "toy.vector", "--json", "--set", "p_i=0.25,0.75", "tau_i=2,4",
                         "T=10", "sigma=1", "L=1")
    assert code == 0, err
    expected = toy["toy.vector"].bound(p_i=[0.25, 0.75], tau_i=[2.0, 4.0], T=10, sigma=1.0, L=1.0)
    assert json.loads(out)["bound"] == float(expected)
    code, _, err = cli(capsys, "bound", "toy.vector", "--set", "p_i=0.25,x", "tau_i=2,4", "T=10")
    assert code == 2 and "p_i: value must be a number" in err
