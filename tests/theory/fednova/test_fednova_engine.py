"""FedNova on the generalized engine: its own learning-rate variable eta (API and CLI), the
preparation of per-client p_i, tau_i (checked against the scalar form of
:func:`fedbound.theory.fednova.accumulation.theorem_constants`), and formulas defined on the whole
domain."""
import json

import numpy as np
import pytest

from fedbound.cli.main import main
from fedbound.errors import ValidationError
from fedbound.theory import get
from fedbound.theory.fednova import accumulation as acc

BASE = dict(L=1.5, sigma=0.3, kappa2=0.7, beta2=1.4, Delta=2.0, T=500, eta=1e-3)
P, TAU = np.array([0.1, 0.2, 0.3, 0.4]), np.array([1, 3, 5, 10])


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def scalar(aggregation="mean"):
    """The scalar constants of vanilla local SGD from the ragged-capable reduction."""
    c = acc.theorem_constants(P, [acc.accumulation_vector("sgd", t) for t in TAU], aggregation)
    return {k: v for k, v in c.items() if k != "w"}


@pytest.mark.parametrize("variant", ["printed", "sufficient"])
def test_max_step_is_over_eta_and_names_it(variant):
    thm1 = get("fednova.thm1")
    c = dict(L=BASE["L"], beta2=BASE["beta2"], tau_eff=7.0, C=30.0, a1_max=8.0)
    v = thm1.variant(variant)
    assert v.variables() == ["eta"]
    eta, binding = thm1.max_step(variant, variable="eta", **c)
    assert (eta, binding) == thm1.max_step(variant, **c)
    caps = thm1.evaluate(variant, partial=True, **c).caps
    assert eta == min(caps.values()) and str(binding) == min(caps, key=caps.get)
    at = {**BASE, **c, "A": 1.0, "B": 1.0, "m": 4}
    assert thm1.evaluate(variant, **{**at, "eta": float(eta)}).all_conditions_hold
    assert not thm1.evaluate(variant, **{**at, "eta": float(eta) * 1.001}).all_conditions_hold
    with pytest.raises(ValueError, match="variable"):
        thm1.max_step(variant, variable="gamma", **c)


def test_cli_stepsize_var_eta(capsys):
    c = {"L": 2.0, "tau_eff": 7.0, "C": 30.0, "beta2": 1.4}
    code, out, _ = cli(capsys, "stepsize", "fednova.thm1", "--variable", "eta", "--json",
                       "--set", *(f"{k}={v}" for k, v in c.items()))
    data = json.loads(out)
    eta, binding = get("fednova.thm1").max_step(variable="eta", **c)
    assert code == 0 and data["variable"] == "eta" and data["eta_max"] == float(eta)
    assert data["binding"] == str(binding) and data["eta_max"] == min(data["caps"].values())
    code, out, _ = cli(capsys, "stepsize", "fednova.cor3", "--set", "L=1", "tau_eff=30", "q=5", "beta2=2",
                       "C=870")
    assert code == 0 and "eta" in out


@pytest.mark.parametrize("rid,variant", [("fednova.thm1", "printed"), ("fednova.thm1", "sufficient"),
                                         ("fednova.thm1_sched", "printed"), ("fednova.thm1_round", "printed"),
                                         ("fednova.thm2", "printed"), ("fednova.thm2", "explicit")])
def test_fedavg_results_from_p_i_tau_i_equal_the_scalar_form(rid, variant):
    result = get(rid)
    extra = dict(grad_sq=0.5, eps_opt=0.2)
    names = set(result.constants(variant))
    from_vectors = result.evaluate(variant, **BASE, **extra, p_i=P, tau_i=TAU)
    from_scalars = result.evaluate(variant, **BASE, **extra, **{k: v for k, v in scalar().items() if k in names})
    assert from_vectors.bound == pytest.approx(float(from_scalars.bound), rel=1e-13)
    assert from_vectors.caps == pytest.approx(from_scalars.caps, rel=1e-13)


def test_fednova_results_from_p_i_tau_i_equal_the_scalar_form():
    s = scalar("normalized")
    tilde = dict(A_tilde=s["A"], B_tilde=s["B"], C_tilde=s["C"], tau_tilde=s["tau_bar"])
    for rid, names in (("fednova.thm3", ("tau_eff", "a1_max", "m")), ("fednova.thm3_sched", ("tau_eff", "a1_max", "m")),
                       ("fednova.cor3", ("tau_eff", "B", "C")), ("fednova.cor3_sched", ("tau_eff", "B", "C"))):
        result = get(rid)
        given = {k: s[k] for k in names} | (tilde if "thm3" in rid else {"tau_tilde": s["tau_bar"], "q": 2})
        given = {k: v for k, v in given.items() if k in result.constants()}
        q = {"q": 2} if "cor3" in rid else {}
        a, b = result.evaluate(**BASE, **q, p_i=P, tau_i=TAU), result.evaluate(**BASE, **given)
        assert a.bound == pytest.approx(float(b.bound), rel=1e-13), rid


def test_cor1_from_tau_i_and_a_batch_of_weight_vectors():
    cor1 = get("fednova.cor1")
    explicit = cor1.evaluate("explicit", **BASE, tau_i=TAU)
    scalars = cor1.evaluate("explicit", **BASE, tau_bar=TAU.mean(), tau_var=TAU.var(), tau_max=10, m=4)
    assert explicit.bound == pytest.approx(float(scalars.bound), rel=1e-13)
    batch = np.array([P, P[::-1], np.full(4, 0.25)])
    bounds = get("fednova.thm1").bound(**BASE, p_i=batch, tau_i=TAU)
    assert bounds.shape == (3,)
    for row, value in zip(batch, bounds):
        assert value == pytest.approx(float(get("fednova.thm1").bound(**BASE, p_i=row, tau_i=TAU)), rel=1e-14)


def test_cli_bound_from_p_i_tau_i(capsys):
    code, out, err = cli(capsys, "bound", "fednova.thm2", "--json", "--set", "p_i=0.1,0.2,0.3,0.4",
                         "tau_i=1,3,5,10", "eps_opt=0.2", "kappa2=0.7", "beta2=1.4")
    data = json.loads(out)
    assert code == 0, err
    assert data["bound"] == pytest.approx(float(get("fednova.thm2").bound(p_i=P, tau_i=TAU, eps_opt=0.2,
                                                                          kappa2=0.7, beta2=1.4)), rel=1e-14)


@pytest.mark.parametrize("kwargs,pattern", [
    (dict(p_i=[0.5, 0.6], tau_i=[1, 2]), "sum to 1"),
    (dict(p_i=P, tau_i=TAU, A=1.0), "give either, not both"),
    (dict(p_i=P, tau_i=[1, 2.5, 3, 4]), r"tau_i .* must be an integer"),
    (dict(p_i=P), "missing tau_i"),
])
def test_bad_vector_inputs(kwargs, pattern):
    with pytest.raises(ValidationError, match=pattern):
        get("fednova.thm1").evaluate(**BASE, **kwargs)


def test_a_client_with_zero_weight_adds_nothing_to_chi2():
    p = np.array([0.0, 0.5, 0.5])
    with_zero = get("fednova.thm2").evaluate(p_i=p, tau_i=[7, 2, 4], eps_opt=0.2, kappa2=0.7, beta2=1.4)
    without = get("fednova.thm2").evaluate(p_i=p[1:], tau_i=[2, 4], eps_opt=0.2, kappa2=0.7, beta2=1.4)
    assert with_zero.bound == pytest.approx(float(without.bound), rel=1e-14)


def test_fedprox_C_is_zero_for_one_local_step_even_at_alpha_one():
    ev = get("fednova.fedprox").evaluate(alpha=np.array([1.0, 1e-12, 0.5, 1.0]), tau=np.array([1, 1, 1, 4]))
    np.testing.assert_array_equal(ev.extras["C"], 0.0)      # a = [1], and a = [0, 0, 0, 1] at alpha = 1
    np.testing.assert_array_equal(ev.extras["a1"], 1.0)


@pytest.mark.parametrize("rid,variant,names", [("fednova.thm1", "sufficient", ("C", "a1_max")),
                                               ("fednova.thm3", "printed", ("C_tilde", "a1_max"))])
def test_100_is_a_predicate_of_the_sufficient_conditions(rid, variant, names):
    """(100) [L627]: C <= a1_max^2 holds for any accumulation vectors (so from p_i, tau_i), and a
    given C above a1_max^2 is reported as failing, not silently used."""
    result = get(rid)
    (predicate,) = result.variant(variant).predicates
    name = predicate.name
    c = dict(BASE, A=1.0, B=1.0, A_tilde=1.0, B_tilde=1.0, m=4, tau_eff=3.0)
    ok = result.evaluate(variant, **c, **{names[0]: 64.0, names[1]: 8.0})
    bad = result.evaluate(variant, **c, **{names[0]: 64.5, names[1]: 8.0})
    assert ok.predicates[name] and not bad.predicates[name]
    assert result.evaluate(variant, **BASE, p_i=P, tau_i=TAU).predicates[name]


@pytest.mark.parametrize("rid,variant,conditions_of,step", [
    ("fednova.cor1", "sqrt_schedule", ("fednova.cor1", "explicit"), "eta"),
    ("fednova.cor3_sched", "printed", ("fednova.cor3", "printed"), "eta"),
    ("fednova.cor3_sched", "rederived", ("fednova.cor3", "printed"), "eta"),
    ("fednova.thm3_sched", "printed", ("fednova.thm3", "printed"), "eta"),
])
def test_schedule_predicates_hold_exactly_when_the_scheduled_eta_meets_the_conditions(rid, variant,
                                                                                       conditions_of, step):
    """T >= T_min (a lower bound on T, so a predicate, not a step condition) iff the scheduled eta
    satisfies the learning-rate conditions it is derived from, just above and below T_min."""
    result, other = get(rid), get(conditions_of[0])
    c = dict(BASE, q=3, tau_eff=6.0, tau_tilde=4.0, B=2.0, C=30.0, A_tilde=2.0, B_tilde=2.0, C_tilde=30.0,
             a1_max=6.0, m=4)
    if rid == "fednova.cor1":   # Corollary 1 from tau_i (p_i = 1/m)
        c = {**{k: v for k, v in c.items() if k not in ("m", "tau_eff", "B", "C")}, "tau_i": TAU}
    (predicate,) = result.variant(variant).predicates
    T_min = float(result.evaluate(variant, **c).extras[next(k for k in result.variant(variant).extras
                                                           if k.startswith("T_min"))])
    for T, admissible in ((np.ceil(T_min * (1 + 1e-9)), True), (np.floor(T_min * 0.99), False)):
        ev = result.evaluate(variant, **{**c, "T": T})
        scheduled = {**c, "T": T, step: float(ev.extras[step])}
        assert bool(ev.predicates[predicate.name]) == admissible
        assert bool(other.evaluate(conditions_of[1], **scheduled).all_conditions_hold) == admissible
