"""The one registration mechanism (fedbound/registry.py; issue 20 item 3): its rules, and every
registry of the package obeying them (registry-driven: a new registry or entry is covered)."""
import importlib

import pytest

from fedbound.deprecation import FedboundDeprecationWarning
from fedbound.errors import UnknownNameError, ValidationError
from fedbound.registry import REGISTRIES, Option, OptionSet, Registry, integer_option

#: the modules that create the package's registries (importing them creates them)
REGISTRY_MODULES = ("fedbound.algorithms.registry", "fedbound.algorithms.optim.registry",
                    "fedbound.tasks.registry", "fedbound.network.sampling", "fedbound.theory.registry",
                    "fedbound.papers", "fedbound.pep.method", "fedbound.verify.registry")
#: options whose values are file paths: no small example value is valid everywhere
FILE_OPTIONS = ("data", "network")

for _module in REGISTRY_MODULES:
    importlib.import_module(_module)
KINDS = sorted(kind for kind in REGISTRIES if not kind.startswith("test "))


@pytest.mark.parametrize("kind", KINDS)
def test_every_registry_finds_its_built_ins_and_every_option_declares_examples(kind):
    registry = REGISTRIES[kind]
    assert len(registry) >= 1
    for entry in registry:
        assert registry.get(entry.name if registry.key == "name" else getattr(entry, registry.key)) is entry
        for o in getattr(entry, "options", ()):     # a Result's constants have domains instead
            assert o.examples or o.name in FILE_OPTIONS, f"{kind} {entry.name}: {o.name} has no examples"
            for value in o.examples:
                o.check(o.name, value)


def test_register_get_and_names():
    reg = Registry(f"test thing {id(object())}", OptionSet)
    first = reg.register(OptionSet("alpha", "first"))
    reg.register(OptionSet("beta", "second"))
    assert reg.get("alpha") is first and reg.names() == ("alpha", "beta") and "beta" in reg
    with pytest.raises(ValidationError, match="test thing .* 'alpha' is already registered"):
        reg.register(OptionSet("alpha", "again"))
    with pytest.raises(ValidationError, match="must be a OptionSet"):
        reg.register("alpha")
    with pytest.raises(UnknownNameError, match="did you mean 'alpha'"):
        reg.get("alpah")


def test_an_entry_checks_its_options_and_renames_old_names_with_a_warning():
    # an alias of its own: the warning is given once per process
    steps = integer_option("local_steps", "steps", low=1, default=1, aliases=("steps_of_old",),
                           examples=(1,))
    entry = OptionSet("demo", "demo", (steps,))
    assert entry.check({}) == {"local_steps": 1}
    with pytest.warns(FedboundDeprecationWarning, match="the option steps_of_old is deprecated; use local_steps"):
        assert entry.check({"steps_of_old": 3}) == {"local_steps": 3}
    with pytest.raises(ValidationError, match="give local_steps or its old name steps_of_old, not both"):
        entry.check({"steps_of_old": 3, "local_steps": 2})
    with pytest.raises(ValidationError, match="local_steps must be an integer"):
        entry.check({"local_steps": 0})


def test_a_bad_declaration_is_refused_where_it_is_made():
    with pytest.raises(ValidationError, match="declared twice"):
        OptionSet("demo", "demo", (Option("a", "x", lambda n, v: v), Option("a", "y", lambda n, v: v)))
    with pytest.raises(ValidationError, match="non-empty string"):
        OptionSet(" demo", "demo")


def test_no_module_reads_a_registry_while_the_package_is_imported():
    """Plugins load on the first look-up of a registry; a look-up at import time would load them
    while fedbound's own modules are half imported (a plugin importing them would then fail)."""
    import subprocess
    import sys
    code = ("import importlib, pkgutil, fedbound\n"
            "from fedbound.registry import REGISTRIES\n"
            "for m in pkgutil.walk_packages(fedbound.__path__, 'fedbound.'):\n"
            "    if m.name != 'fedbound.__main__':\n"
            "        importlib.import_module(m.name)\n"
            "print(sorted(k for k, r in REGISTRIES.items() if r._loaded))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


def test_a_plugin_that_fails_to_load_is_not_remembered():
    """``--plugin nan`` (a fuzzed CLI call in the same process) fails with a PluginError; it must
    not stay requested and break every later look-up of any registry (CI, stop 36)."""
    from fedbound.registry import PluginError, plugin_requests, request_plugin

    with pytest.raises(PluginError, match="plugin no_such_plugin_xyz .* failed to load"):
        request_plugin("no_such_plugin_xyz")
    assert "no_such_plugin_xyz" not in dict(plugin_requests())
    reg = Registry("test thing after a failed plugin", OptionSet)   # a fixed name: id(object()) is reused
    reg.register(OptionSet("alpha", "first"))
    assert reg.names() == ("alpha",)


@pytest.mark.parametrize("name", ["build", "get", "names", "make_task"])
def test_a_kinds_function_looked_up_on_the_mechanism_points_to_its_registry(name):
    """``fedbound.registry.build`` is what a user types for ``fedbound.algorithms.registry.build``:
    the AttributeError names the registry modules (hasattr stays False)."""
    import fedbound.registry as mechanism
    assert not hasattr(mechanism, name)
    with pytest.raises(AttributeError, match=r"fedbound\.algorithms\.registry \(build, get, names\)"):
        getattr(mechanism, name)
    with pytest.raises(AttributeError, match=r"has no attribute 'nothing'$"):
        mechanism.nothing
