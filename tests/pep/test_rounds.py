"""A federated round described in the algorithms' vocabulary (fedbound.pep.rounds, issue 21 item 5):
the description runs the toolkit's algorithms exactly, the built-ins are their descriptions (the
same certificates), a user's method certifies with a registered theorem as its theory, and a bad
description is a FedboundError naming the field."""
import json

import numpy as np
import pytest
import sympy as sp

from fedbound.algorithms.federated.control_variates import ControlVariates
from fedbound.algorithms.federated.fednova import FedNova
from fedbound.algorithms.federated.round import Federated
from fedbound.algorithms.optim import client, server
from fedbound.algorithms.options import per_client_steps
from fedbound.cli.main import main
from fedbound.errors import FedboundError, InputTypeError, UnknownNameError, ValidationError
from fedbound.pep import PEP_METHODS, ResultTheory, RoundSpec, certify, register_round_method, round_method
from fedbound.pep.method import integers_option
from fedbound.pep.methods.common import LOCAL_STEPS, LR
from fedbound.pep.numeric import QuadraticEnv
from fedbound.registry import Option
from fedbound.tasks import Quadratic
from fedbound.theory import Predicate, Provenance, Result, StepCondition, Variant
from fedbound.theory import symbols as S

SMALL = dict(n=2, local_steps=2, rounds=2, lr=1.0, L=1.0, mu=0.1, zeta=0.3)

# ---- the description runs the algorithms of fedbound.algorithms ---------------------------------
H = np.array([[1.0, 0.3], [0.5, 0.8]])            # diagonal Hessians of two clients
B = np.array([[1.0, -1.0], [-0.5, 2.0]])          # f_i(x) = 1/2 (x - b_i)^T diag(h_i) (x - b_i)
X0 = np.array([0.3, -0.7])

ALGORITHMS = {
    "fedavgm-nesterov": (RoundSpec(lr=0.3, local_steps=3, server_lr=0.7, server_momentum=0.5, nesterov=True),
                         lambda task: Federated(task, client=client.sgd(0.3), local_steps=3,
                                                server=server.momentum(0.7, 0.5, nesterov=True))),
    "fedavgm": (RoundSpec(lr=0.3, local_steps=2, server_momentum=0.6),
                lambda task: Federated(task, client=client.sgd(0.3), local_steps=2,
                                       server=server.momentum(1.0, 0.6))),
    "fedprox-per-client": (RoundSpec(lr=0.3, local_steps=(1, 3), proximal_mu=0.4),
                           lambda task: Federated(task, client=client.prox(0.3, 0.4), local_steps=[1, 3],
                                                  server=server.sgd(1.0))),
    "fednova-momentum": (RoundSpec(lr=0.3, local_steps=(2, 3), momentum=0.5, aggregation="normalized"),
                         lambda task: FedNova(task, lr=0.3, local_steps=[2, 3], momentum=0.5)),
    "fednova-decay-steps": (RoundSpec(lr=0.3, local_steps=(1, 3), lr_decay=0.8, aggregation="normalized",
                                      tau_eff="steps"),
                            lambda task: FedNova(task, lr=0.3, local_steps=[1, 3], lr_decay=0.8, tau_eff="steps")),
    "scaffold": (RoundSpec(lr=0.3, local_steps=(2, 3), server_lr=0.8, control_variates="zero"),
                 lambda task: Federated(task, client=client.sgd(0.3), local_steps=[2, 3], server=server.sgd(0.8),
                                        control_variates=ControlVariates(0.3))),
}


@pytest.mark.parametrize("name", ALGORITHMS)
def test_the_description_is_the_algorithm(name):
    """RoundSpec.run on an explicit quadratic gives the server models of the torch algorithm of the
    same options (full participation, exact gradients), round by round."""
    spec, make = ALGORITHMS[name]
    task = Quadratic(np.stack([np.diag(h) for h in H]), B, x0=X0)
    alg, rounds = make(task), 4
    state, measured = alg.init(), []
    for _ in range(rounds):
        state = alg.step(state)
        measured.append(state.x_g.numpy())
    described = spec.run(QuadraticEnv(H, -H * B, X0), {}, rounds)
    np.testing.assert_allclose(np.array(described[1:]), np.array(measured), rtol=1e-12, atol=1e-14)


# ---- the built-ins are their descriptions ---------------------------------------------------------
def test_the_builtins_are_round_methods():
    assert PEP_METHODS.get("fedavg").build.__self__ == RoundSpec(lr=LR, local_steps=LOCAL_STEPS) == RoundSpec()
    assert PEP_METHODS.get("fedprox").build.__self__.proximal_mu.name == "proximal_mu"
    assert PEP_METHODS.get("scaffold").build.__self__.control_variates.name == "control_variates"


@pytest.mark.parametrize("builtin,spec,options", [
    ("fedavg", RoundSpec(lr="lr", local_steps="local_steps"), SMALL),
    ("fedprox", RoundSpec(lr="lr", local_steps="local_steps", proximal_mu="proximal_mu"), {**SMALL, "proximal_mu": 0.5}),
    ("scaffold", RoundSpec(lr="lr", local_steps="local_steps", server_lr="server_lr",
                           control_variates=Option("control_variates", "c0", lambda n, v: v, default="grad")),
     {**SMALL, "server_lr": 0.5, "control_variates": "grad"}),
])
def test_a_description_reproduces_the_builtin_certificate(register_temporarily, consistent, builtin, spec,
                                                           options):
    """A user's description of FedAvg / FedProx / SCAFFOLD, its options declared from the field
    names, gives the built-in's certificate: the same SDP (worst case, lower bound, replay)."""
    register_temporarily(PEP_METHODS, round_method(f"my-{builtin}", "a description", spec))
    mine, theirs = (certify(name, lower_bound_starts=4, **options) for name in (f"my-{builtin}", builtin))
    consistent(mine)
    assert mine.gram_size == theirs.gram_size and mine.options == theirs.options
    for key in ("worst_case", "lower_bound", "replay_value"):
        assert getattr(mine, key) == pytest.approx(getattr(theirs, key), rel=1e-9, abs=1e-12), key


def test_server_momentum_zero_is_fedavg(register_temporarily):
    """Nesterov server momentum with beta = 0 (and server_lr = 1) is FedAvg's plain averaging."""
    register_temporarily(PEP_METHODS, round_method("nesterov", "", RoundSpec(server_momentum="beta", nesterov=True)))
    beta0 = certify("nesterov", beta=0.0, lower_bound_starts=2, **SMALL)
    assert beta0.worst_case == certify("fedavg", lower_bound_starts=2, **SMALL).worst_case


# ---- a user's method with a user's theorem -----------------------------------------------------------
@pytest.fixture
def user_theorem(register_toy_results):
    """"pepuser.thm1", a stand-in for a user's theorem on FedAvg with Nesterov server momentum
    (server_lr = 1): at zeta = 0 the f_i share x*, so each client's K GD steps contract x - x* by
    r = rho^K, rho = max(|1 - gamma mu|, |1 - gamma L|), and e_t = ||x_t - x*||, V_t = ||v_t||
    obey e_{t+1} <= (r + beta (1 + r)) e_t + beta^2 V_t, V_{t+1} <= (1 + r) e_t + beta V_t: by
    induction max(e_T, V_T) <= c^T, c the larger row sum, so ||x_T - x*||^2 <= c^(2T) (e_0 <= 1,
    V_0 = 0). Assumed: gamma <= 2/(L + mu) (a step condition) and zeta = 0 (a predicate)."""
    def build():
        K = S.declare("K", S.POSITIVE_INTEGER, "local steps", scope="pepuser")
        beta = S.declare("beta", S.HALF_OPEN_UNIT, "server momentum", scope="pepuser")
        zeta = S.declare("zeta", S.NONNEGATIVE, "heterogeneity at x*", scope="pepuser")
        r = sp.Max(sp.Abs(1 - S.gamma * S.mu), sp.Abs(1 - S.gamma * S.L)) ** K
        c = sp.Max(r + beta * (1 + r) + beta ** 2, 1 + r + beta)
        step = StepCondition("gamma <= 2/(L + mu)", 2 / (S.L + S.mu))
        result = Result("pepuser.thm1", "FedAvg with Nesterov server momentum", "||x_T - x*||^2 <= c^(2T)",
                        Provenance("none", "(1)", "1-1"), ("f_i L-smooth, mu-strongly convex",),
                        [Variant("printed", "c^(2T)", bound=c ** (2 * S.T), conditions=(step,),
                                 predicates=(Predicate("zeta = 0", zeta, "<=", 0),)),
                         Variant("loose", "(1 + beta)^(2T), a bound without gamma", bound=(1 + beta) ** (2 * S.T),
                                 conditions=(step,))])
        return {result.id: result}

    return register_toy_results(build)["pepuser.thm1"]


MAPPING = {"lr": "gamma", "local_steps": "K", "beta": "beta", "rounds": "T", "L": "L", "mu": "mu", "zeta": "zeta"}
NESTEROV = dict(n=2, local_steps=2, rounds=2, beta=0.5, L=1.0, mu=0.1)


@pytest.mark.parametrize("constants", [MAPPING, lambda cfg: {c: cfg[o] for o, c in MAPPING.items()}],
                         ids=["dict", "callable"])
def test_nesterov_server_method_with_a_users_theorem(register_temporarily, user_theorem, consistent, constants):
    """The example of the issue: FedAvg with server-side Nesterov momentum, registered in a few
    lines with a registered result as its theory; lower bound <= worst case = replayed worst
    function <= the theorem where it applies, and the theorem's bound at the mapped constants."""
    register_temporarily(PEP_METHODS)
    method = register_round_method("fedavg-nesterov", "FedAvg with Nesterov server momentum",
                                   RoundSpec(server_momentum="beta", nesterov=True),
                                   theory=ResultTheory("pepuser.thm1", constants))
    assert PEP_METHODS.get("fedavg-nesterov") is method
    inside = certify("fedavg-nesterov", lr=1.0, zeta=0.0, lower_bound_starts=4, **NESTEROV)
    consistent(inside)
    expected = float(user_theorem.bound(K=2, beta=0.5, zeta=0.0, T=2, gamma=1.0, L=1.0, mu=0.1))
    assert inside.theory == pytest.approx(expected, rel=1e-12) and inside.theory_applies
    assert inside.theory_source.startswith("pepuser.thm1 (printed)")
    assert inside.worst_case > certify("fedavg", n=2, local_steps=2, rounds=2, lr=1.0, zeta=0.0,
                                       lower_bound_starts=2).worst_case   # momentum changes the worst case
    outside = certify("fedavg-nesterov", lr=1.9, zeta=0.3, lower_bound_starts=2, **NESTEROV)
    consistent(outside)
    assert not outside.theory_applies and "does not apply" in outside.verdict
    assert outside.theory_note == "conditions fail: gamma <= 2/(L + mu), zeta = 0"


def test_a_registered_method_runs_on_the_command_line(register_temporarily, user_theorem, capsys):
    register_temporarily(PEP_METHODS, round_method(
        "fedavg-nesterov", "FedAvg with Nesterov server momentum", RoundSpec(server_momentum="beta", nesterov=True),
        theory=ResultTheory("pepuser.thm1", MAPPING)))
    code = main(["pep", "fedavg-nesterov", "--local-steps", "1", "--rounds", "1", "--beta", "0.5", "--zeta", "0", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["options"]["beta"] == 0.5 and data["theory_applies"] is True
    assert data["worst_case"] <= data["theory"]


def test_every_field_as_an_option():
    """Each field given as a name declares an option with the field's range, default and examples."""
    spec = RoundSpec(lr="lr", local_steps="tau", proximal_mu="prox", momentum="rho", lr_decay="decay", server_lr="eta_g",
                     server_momentum="beta", nesterov=True,
                     control_variates=Option("c0", "initial control variates", lambda n, v: v, default="zero"))
    m = round_method("everything", "every field an option", spec)
    assert [o.name for o in m.options] == ["n", "tau", "rounds", "lr", "L", "mu", "zeta", "prox", "rho", "decay",
                                           "eta_g", "beta", "c0"]
    for o in m.options:
        for value in o.examples:
            assert m.config(**{o.name: value})[o.name] == o.check(o.name, value)
    with pytest.raises(ValidationError, match="rho must be in"):
        m.config(rho=1.0)


def test_per_client_local_steps():
    """One count per client: n is their number (no option n), or must match the option n."""
    per_client = round_method("per-client", "", RoundSpec(local_steps=integers_option(
        "taus", "tau_i", low=1, high=8, default="1,2,3", examples=("1,2",))))
    assert "n" not in [o.name for o in per_client.options]
    assert per_client.setting(per_client.config())["n"] == 3
    either = round_method("either", "", RoundSpec(local_steps=Option("K", "K", per_client_steps, default=2)))
    assert either.setting(either.config(K=[1, 2], n=2))["n"] == 2
    with pytest.raises(ValidationError, match=r"K must give one count for each of the n=2 clients, got 3"):
        either.config(K=[1, 2, 3])


# ---- bad descriptions ---------------------------------------------------------------------------------
NO_DEFAULT = Option("gamma2", "a step", lambda n, v: v)


@pytest.mark.parametrize("fields,error,message", [
    ({"lr": -1.0}, ValidationError, r"RoundSpec.lr must be in \(0, 1e\+06\], got -1"),
    ({"lr": [1.0]}, InputTypeError, r"RoundSpec: lr must be a real number or a string or a fedbound Option"),
    ({"momentum": 1.0}, ValidationError, r"RoundSpec.momentum must be in \[0, 1\)"),
    ({"lr_decay": 0.0}, ValidationError, r"RoundSpec.lr_decay must be in \(0, 1\]"),
    ({"local_steps": 0}, ValidationError, r"RoundSpec.local_steps must be an integer in \[1, 64\]"),
    ({"local_steps": (2, 0)}, ValidationError, r"RoundSpec.local_steps\[1\] must be an integer"),
    ({"local_steps": ()}, ValidationError, r"RoundSpec.local_steps must hold at least one count"),
    ({"local_steps": 2.5}, InputTypeError, r"RoundSpec: local_steps must be an integer or a list or tuple"),
    ({"server_momentum": "mu"}, ValidationError, r"RoundSpec.server_momentum: 'mu' is the setting's option"),
    ({"lr": "R"}, ValidationError, r"RoundSpec.lr: 'R' is the setting's option \(the number of rounds\)"),
    ({"lr": "step size"}, ValidationError, r"RoundSpec.lr: an option name must be an identifier"),
    ({"lr": "a", "server_lr": "a"}, ValidationError, r"RoundSpec.server_lr: the option 'a' is RoundSpec.lr's"),
    ({"lr": NO_DEFAULT}, ValidationError, r"RoundSpec.lr: the option 'gamma2' needs a default"),
    ({"nesterov": True}, ValidationError, r"RoundSpec.nesterov needs server momentum"),
    ({"nesterov": 1}, InputTypeError, r"RoundSpec: nesterov must be True or False"),
    ({"aggregation": "median"}, UnknownNameError, r"RoundSpec.aggregation must be one of mean, normalized"),
    ({"tau_eff": "steps"}, ValidationError, r"RoundSpec.tau_eff applies to the normalized aggregation only"),
    ({"aggregation": "normalized", "tau_eff": -1}, ValidationError, r"RoundSpec.tau_eff must be > 0"),
    ({"aggregation": "normalized", "tau_eff": "step"}, UnknownNameError, r"RoundSpec.tau_eff must be one of"),
    ({"control_variates": "ones"}, UnknownNameError, r"RoundSpec.control_variates must be one of zero, grad"),
    ({"control_variates": 1}, InputTypeError, r"RoundSpec: control_variates must be a string or a fedbound Option or None"),
])
def test_a_bad_description_names_the_field(fields, error, message):
    with pytest.raises(error, match=message):
        RoundSpec(**fields)
    assert issubclass(error, FedboundError)


@pytest.mark.parametrize("make,error,message", [
    (lambda: round_method("x", "", {"lr": 1.0}), InputTypeError, "round must be a fedbound RoundSpec"),
    (lambda: round_method("x", "", RoundSpec(), theory=3), InputTypeError, "theory must be a callable"),
    (lambda: round_method("x", "", RoundSpec(), theory=ResultTheory("r", {"lrr": "gamma"})), ValidationError,
     r"theory: 'lrr' is not an option of pep method x .*did you mean 'lr'"),
    (lambda: ResultTheory("", {}), ValidationError, "ResultTheory.result must be a result id"),
    (lambda: ResultTheory("r", {"gamma": 1}), ValidationError, "ResultTheory.constants must map option names"),
    (lambda: ResultTheory("r", {}, fixed={"sigma": "0"}), InputTypeError, r"ResultTheory.fixed\['sigma'\]"),
])
def test_a_bad_method_or_theory_is_named(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_a_theory_of_an_unknown_result_or_an_unchecked_condition(user_theorem):
    unknown = round_method("x", "", RoundSpec(), theory=ResultTheory("pepuser.thm9", {}))
    with pytest.raises(UnknownNameError, match="unknown result 'pepuser.thm9'"):
        unknown.theory(unknown.config())
    nesterov = RoundSpec(server_momentum="beta", nesterov=True)
    lacking = round_method("y", "", nesterov, theory=ResultTheory("pepuser.thm1", {"beta": "beta", "rounds": "T"}))
    with pytest.raises(ValidationError, match=r"pepuser.thm1 \(printed\) needs constant\(s\) K \(local steps\), L \(smoothness"):
        lacking.theory(lacking.config())
    unchecked = round_method("z", "", nesterov, theory=ResultTheory(
        "pepuser.thm1", {"beta": "beta", "rounds": "T", "L": "L", "mu": "mu"}, "loose"))
    with pytest.raises(ValidationError, match=r"pepuser.thm1 \(loose\): its step conditions gamma <= "
                                              r"2/\(L \+ mu\) need their variables among the constants"):
        unchecked.theory(unchecked.config())


def test_old_option_names_still_work_and_warn(monkeypatch):
    """The papers' letters of before the one vocabulary (gamma, K, R; a theory mapping keyed by them;
    RoundSpec(mu=...)) are renamed with one warning each and give the same method."""
    from fedbound import deprecation

    monkeypatch.setattr(deprecation, "_WARNED", set())
    m = PEP_METHODS.get("fedavg")
    with pytest.warns(deprecation.FedboundDeprecationWarning, match="the option gamma is deprecated; use lr"):
        old = m.config(gamma=0.5, K=2, R=3)
    assert old == m.config(lr=0.5, local_steps=2, rounds=3)
    with pytest.raises(ValidationError, match="give lr or its old name gamma, not both"):
        m.config(lr=0.5, gamma=0.5)
    with pytest.warns(deprecation.FedboundDeprecationWarning, match="ResultTheory's option name 'gamma'"):
        renamed = round_method("x", "", RoundSpec(), theory=ResultTheory("r", {"gamma": "gamma", "R": "T"}))
    assert renamed.theory.constants == {"lr": "gamma", "rounds": "T"}
    with pytest.warns(deprecation.FedboundDeprecationWarning, match=r"RoundSpec\(mu=...\) is deprecated"):
        assert RoundSpec(mu=0.3) == RoundSpec(proximal_mu=0.3)
