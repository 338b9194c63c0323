"""One vocabulary (issue 33, item 1): every option of every registry, fedbound's own and a plugin's
(the package `fedbound new plugin` writes), is named by fedbound/vocabulary.py: a concept has one
name (no live option carries another term's old name or synonym) and a name one meaning (an option
with a term's name takes that term's values); fedbound's own options are all in the vocabulary,
and every old spelling an option accepts is one the vocabulary records. A plugin that breaks it is
refused when it registers. Run as a script, this file prints the problems of the registries of its
process as JSON (the plugin's walk runs so, in a subprocess)."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fedbound import vocabulary
from fedbound.registry import REGISTRIES, Entry, Option, PluginError, Registry, number_option

ROOT = Path(__file__).resolve().parents[1]
#: the modules that create the registries (each registry is created where its kind is defined)
REGISTRY_MODULES = ("fedbound.algorithms.registry", "fedbound.theory.registry", "fedbound.papers",
                    "fedbound.pep.method", "fedbound.tasks.registry", "fedbound.network.sampling",
                    "fedbound.algorithms.optim.registry", "fedbound.verify.registry")


def walk() -> dict:
    """{"problems": [...], "options": n, "plugin_options": n} over every registry of this process
    (every entry loaded, plugins included) and the network options of a run."""
    for module in REGISTRY_MODULES:
        importlib.import_module(module)
    from fedbound.network.build import NETWORK

    sets = [(f"{registry.kind} {getattr(e, registry.key)}", registry.namespace,
             registry._origins[getattr(e, registry.key)], e)
            for registry in REGISTRIES.values() for e in registry.entries()]
    sets.append(("network options", "option", "fedbound.network.build", NETWORK))
    out, count, plugin = [], 0, 0
    for where, namespace, origin, entry in sets:
        for option in getattr(entry, "options", ()):
            count += 1
            plugin += not origin.startswith("fedbound.")
            out += [f"{where} ({origin}): {p}" for p in vocabulary.problems(option, namespace)]
            space = "constant" if option.constant else namespace
            if origin.startswith("fedbound.") and option.name not in vocabulary.table(space):
                out.append(f"{where} ({origin}): option {option.name!r} is not in the {space} "
                           f"vocabulary (fedbound/vocabulary.py): declare it there, or use the name "
                           f"the vocabulary has for its concept")
    return {"problems": out, "options": count, "plugin_options": plugin}


def test_every_registry_of_fedbound_speaks_the_vocabulary():
    found = walk()
    assert found["options"] > 300 and not found["problems"], "\n".join(found["problems"])


def test_a_plugins_registrations_speak_the_vocabulary_too(tmp_path):
    """The package `fedbound new plugin` writes (algorithm, theorem, paper, check, PEP method), loaded
    as an installed plugin is, walked with fedbound's own in a fresh process."""
    from fedbound.cli.main import main

    assert main(["new", "plugin", str(tmp_path / "mine"), "--name", "vocab"]) == 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "mine"), str(ROOT)]),
           "FEDBOUND_PLUGINS": "fedbound_vocab"}
    done = subprocess.run([sys.executable, __file__], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["plugin_options"] >= 5 and not found["problems"], "\n".join(found["problems"])


def test_the_tables_are_consistent():
    """In each namespace a spelling names one concept: no term's old name or synonym is another
    term's name, no synonym belongs to two terms; every transform keyword says which options it is."""
    for space, terms in vocabulary.TABLES.items():
        synonyms: dict[str, str] = {}
        for term in terms.values():
            for spelling in term.spellings():
                assert spelling not in terms, f"{space}: {spelling!r} is a term and a spelling of {term.name!r}"
            for spelling in term.synonyms:
                assert synonyms.setdefault(spelling.lower(), term.name) == term.name, \
                    f"{space}: synonym {spelling!r} of {term.name!r} and {synonyms[spelling.lower()]!r}"
    for term in vocabulary.TRANSFORMS.values():
        assert term.option and all(name in vocabulary.OPTIONS for name in term.option), term


# ---- a plugin that breaks the vocabulary is refused when it registers ---------------------------
class _Thing(Entry):
    def __init__(self, name, options):
        self.name, self.summary, self.options = name, "a thing", options
        super().__post_init__()


@pytest.fixture
def scratch_registry():
    registry = Registry("vocabulary-test thing", _Thing)
    yield registry
    del REGISTRIES[registry.kind]


@pytest.mark.parametrize("option,pattern", [
    (number_option("gamma", "a step", low=0.0, low_open=True, default=0.1), r"'gamma' is an old name of 'lr'"),
    (number_option("learning_rate", "a step", low=0.0, default=0.1), r"'learning_rate' is another name of 'lr'"),
    (number_option("beta2", "Assumption 3", low=1.0, default=2.0), r"option 'beta2': its default 2.0 is not a value"),
    (number_option("lr", "a step", low=0.0, default=0.1, aliases=("alpha_l",)),
     r"accepts the old name 'alpha_l', which the vocabulary does not record"),
])
def test_a_plugin_option_against_the_vocabulary_is_refused(scratch_registry, option, pattern):
    with pytest.raises(PluginError, match=pattern):
        scratch_registry.register(_Thing("x", (option,)), origin="someone_elses_plugin")


def test_a_plugin_may_name_a_concept_of_its_own(scratch_registry):
    own = Option("nesterov_beta", "the plugin's own momentum", lambda n, v: v, default=0.5, examples=(0.5,))
    assert scratch_registry.register(_Thing("y", (own,)), origin="someone_elses_plugin").options == (own,)


def test_the_did_you_mean_knows_the_vocabulary():
    from fedbound.validate import suggest

    assert suggest("--learning-rate", ["--lr", "--local-steps"]) == "; did you mean '--lr'?"
    assert suggest("num_rounds", ["rounds", "seeds"]) == "; did you mean 'rounds'?"
    assert vocabulary.live_name("mu_prox") == "proximal_mu" and vocabulary.live_name("Lipschitz", "constant") == "L"


if __name__ == "__main__":
    print(json.dumps(walk()))
