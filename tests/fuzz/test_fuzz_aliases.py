"""Fuzz over the old spellings (issue 33, item 1): every option of every registry that keeps an old
name (``gamma`` for ``lr``, ``K`` for ``local_steps``, PEP's ``R``, ``mu_prox``, ...) takes it
exactly as the new one, for valid and bad values alike, warns once in one line, and refuses both
spellings at once; on the command line the old flag parses to the same value. Generic over the
registries: a new alias is covered without being listed."""
from __future__ import annotations

import importlib
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound import deprecation
from fedbound.cli.flags import parse
from fedbound.deprecation import FedboundDeprecationWarning
from fedbound.errors import FedboundError, ValidationError
from fedbound.registry import REGISTRIES
from fuzz_values import CASES, bad_values

REGISTRY_MODULES = ("fedbound.algorithms.registry", "fedbound.pep.method", "fedbound.tasks.registry",
                    "fedbound.network.sampling", "fedbound.algorithms.optim.registry",
                    "fedbound.verify.registry")
for _module in REGISTRY_MODULES:
    importlib.import_module(_module)

#: (where, entry, option, alias) of every old name of every option
ALIASES = [(f"{registry.kind} {entry.name}", entry, option, alias)
           for registry in list(REGISTRIES.values()) if registry.kind != "result"
           for entry in registry.entries() for option in entry.options for alias in option.aliases]
IDS = [f"{where}:{alias}->{option.name}" for where, _, option, alias in ALIASES]


def test_there_are_aliases_to_fuzz():
    kinds = {where.rsplit(" ", 1)[0] for where, *_ in ALIASES}
    assert len(ALIASES) > 40 and {"algorithm", "pep method", "check"} <= kinds, kinds


def _base(entry, option) -> dict:
    """The other required options of ``entry`` at their first example (so that a check fails only
    for the option under test)."""
    return {o.name: o.examples[0] for o in entry.options if o.required and o is not option and o.examples}


def _outcome(entry, options):
    """(the checked options, None) or (None, the FedboundError's type and message)."""
    try:
        return entry.check(options), None
    except FedboundError as exc:
        return None, (type(exc), str(exc))


@pytest.mark.parametrize("case", ALIASES, ids=IDS)
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_an_old_name_takes_any_value_as_the_new_one(case, data):
    """Valid (the option's examples) or bad, the old name gives what the new one gives: the same
    checked options, or the same error; a valid value warns that the old name is deprecated."""
    where, entry, option, alias = case
    valid = bool(option.examples) and data.draw(st.booleans())
    value = data.draw(st.sampled_from(option.examples) if valid else bad_values())
    CASES["aliases"] += 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FedboundDeprecationWarning)
        new, new_error = _outcome(entry, {**_base(entry, option), option.name: value})
    deprecation._WARNED.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old, old_error = _outcome(entry, {**_base(entry, option), alias: value})
    assert not valid or new_error is None, f"{where}: the example {option.name}={value!r} is refused: {new_error}"
    if new_error is None:
        assert old == new, f"{where}: {alias}={value!r} gave {old}, {option.name}= gave {new}"
        shown = [str(w.message) for w in caught if issubclass(w.category, FedboundDeprecationWarning)]
        assert shown == [f"the option {alias} is deprecated; use {option.name}"], shown
    else:
        assert old_error is not None and old_error[0] is new_error[0], (where, value, old_error, new_error)
        assert "\n" not in old_error[1]


@pytest.mark.parametrize("case", ALIASES, ids=IDS)
def test_both_spellings_at_once_are_refused(case):
    where, entry, option, alias = case
    value = option.examples[0] if option.examples else option.default
    with pytest.raises(ValidationError, match=f"give {option.name} or its old name {alias}, not both"):
        entry.check({**_base(entry, option), option.name: value, alias: value})


@pytest.mark.parametrize("case", [c for c in ALIASES if c[2].examples and c[2].parse is not bool],
                         ids=[i for c, i in zip(ALIASES, IDS) if c[2].examples and c[2].parse is not bool])
def test_the_old_flag_parses_as_the_new_one(case):
    """On the command line the option's parser reads the text under either flag (the old flag is
    one of the option's deprecated flags)."""
    where, entry, option, alias = case
    flag = "--" + alias.replace("_", "-")
    assert flag in option.old_flags
    text = ",".join(str(v) for v in option.examples[0]) if isinstance(option.examples[0], (tuple, list)) \
        else str(option.examples[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FedboundDeprecationWarning)
        base = _base(entry, option)
        assert entry.check({**base, alias: parse(option, text)}) == entry.check({**base, option.name: parse(option, text)})
