"""The certified methods as entries of the one registry (fedbound.pep.method.PEP_METHODS): every
method and option found there, every option's examples valid, the CLI flags derived from the
options (the underscore spellings of before still work and warn)."""
import json

import numpy as np
import pytest

from fedbound import deprecation
from fedbound.cli.main import main
from fedbound.deprecation import FedboundDeprecationWarning
from fedbound.errors import ValidationError
from fedbound.pep import PEP_METHODS
from fedbound.pep.method import Method
from fedbound.registry import flag_of

CASES = [(m.name, o.name) for m in PEP_METHODS for o in m.options]


def test_every_method_registers_itself_from_its_module():
    assert set(PEP_METHODS.names()) == {"gd", "fedavg", "fedprox", "fednova", "scaffold", "scaffnew",
                                        "dgd", "gt", "sdgt"}
    assert all(PEP_METHODS.origin(name).startswith("fedbound.pep.methods.") for name in PEP_METHODS.names())
    with pytest.raises(ValidationError, match="already registered.*fedbound.pep.methods.gd"):
        PEP_METHODS.register(PEP_METHODS.get("gd"))


@pytest.mark.parametrize("name", PEP_METHODS.names())
def test_defaults_are_valid(name):
    m = PEP_METHODS.get(name)
    cfg = m.config()
    assert list(cfg) == [o.name for o in m.options]
    assert all(cfg[o.name] is None for o in m.options if o.default is None)


@pytest.mark.parametrize("name,option", CASES)
def test_each_example_is_accepted_alone(name, option):
    """Every option declares small valid values, each accepted with the other options at their
    defaults (the conditions between options included) and kept in canonical form."""
    m = PEP_METHODS.get(name)
    o = m.option(option)
    assert o.examples, f"{name}: option {option} declares no examples"
    for value in o.examples:
        got = m.config(**{option: value})[option]
        np.testing.assert_equal(np.asarray(got), np.asarray(o.check(option, value)))


@pytest.mark.parametrize("name,option", CASES)
def test_flags_derive_from_names_and_keep_the_old_spelling(name, option):
    """The flag is the name's; the old spellings (the papers' letters of before the one vocabulary,
    and a name with underscores as written) are deprecated flags."""
    o = PEP_METHODS.get(name).option(option)
    assert o.flag == flag_of(option)
    olds = [flag_of(alias) for alias in o.aliases] + [f"--{s}" for s in (option, *o.aliases) if "_" in s]
    assert sorted(o.old_flags) == sorted(dict.fromkeys(olds))


def test_the_old_dict_of_methods_warns_and_keeps_its_shape():
    import fedbound.pep

    with pytest.warns(FedboundDeprecationWarning, match="fedbound.pep.METHODS is deprecated"):
        methods = fedbound.pep.METHODS
    assert list(methods) == list(PEP_METHODS.names()) and all(isinstance(m, Method) for m in methods.values())


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_old_underscore_flag_warns_and_gives_the_same_certificate(capsys, monkeypatch):
    monkeypatch.setattr(deprecation, "_WARNED", set())   # the warning comes once per process
    code, new, err_new = run(capsys, "pep", "fedprox", "--local-steps", "1", "--rounds", "1", "--proximal-mu", "0.2",
                             "--json")
    code_old, old, err_old = run(capsys, "pep", "fedprox", "--K", "1", "--R", "1", "--mu_prox", "0.2", "--json")
    assert code == code_old == 0 and not err_new
    assert "--mu_prox is deprecated; use --proximal-mu" in err_old
    assert "--K is deprecated; use --local-steps" in err_old and "--R is deprecated; use --rounds" in err_old
    new, old = json.loads(new), json.loads(old)
    assert new["options"]["proximal_mu"] == old["options"]["proximal_mu"] == 0.2
    assert new["worst_case"] == pytest.approx(old["worst_case"], rel=1e-9)


def test_cli_refuses_both_spellings(capsys):
    code, _, err = run(capsys, "pep", "dgd", "--lam-lo", "0.1", "--lam_lo", "0.2")
    assert code == 2 and "give --lam-lo or its old spelling --lam_lo, not both" in err
