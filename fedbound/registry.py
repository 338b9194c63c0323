"""The one registration mechanism: everything a user picks by name is an entry of a typed
:class:`Registry`, registered where it is defined.

A registry holds the entries of one kind (algorithms, results, papers, PEP methods, tasks,
participation schemes, client and server optimizers); each layer that defines a kind creates its
registry with the entry type and the packages that hold the built-in entries::

    ALGORITHMS = Registry("algorithm", AlgorithmSpec, packages=("fedbound.algorithms",))
    FEDAVG = ALGORITHMS.register(AlgorithmSpec("fedavg", FedAvg, ..., options=(LR, ...)))

The first look-up (``get``, ``names``, ``entries``) imports every module of those packages, so a
module that registers an entry is found by being there: adding an algorithm or a theorem is one
module, no central list. Plugins register the same way into the same registries (issue 21); what
each plugin registers is recorded in the on-disk cache per version of its source (:func:`plugin_index`),
so that a look-up imports a plugin only when it concerns it (issue 33: an installed plugin costs a
command that does not use it a cache read).

An entry (:class:`Entry`) has a ``name``, a one-line ``summary`` and its :class:`Option` s. An
option is declared once with its validation (``check``, from :mod:`fedbound.validate`), its text
parser for the command line (``parse``), its default, and small valid ``examples`` that the
generated tests and the fuzz suite use. One name per option: the Python keyword, the sweep SPEC
key and the JSON field are ``name``; the command-line flag is ``--name`` with dashes. Deprecated
spellings (``aliases``) still work and warn once (:func:`fedbound.deprecation.deprecated`).

    >>> steps = integer_option("local_steps", "local steps per round", low=1, default=1,
    ...                        aliases=("K",), examples=(1, 3))
    >>> steps.flag, steps.check(steps.flag, 3)
    ('--local-steps', 3)
    >>> OptionSet("demo", "an option set", (steps,)).check({})
    {'local_steps': 1}
    >>> OptionSet("demo", "an option set", (steps,)).check({"local_step": 2})
    Traceback (most recent call last):
    ...
    fedbound.errors.UnknownNameError: option of demo must be one of local_steps, got 'local_step'; did you mean 'local_steps'?
"""
from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import math
import os
import pkgutil
import sys
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable, Generic, Iterable, Iterator, Sequence, TypeVar

from fedbound import cache, guard, validate, vocabulary
from fedbound.deprecation import deprecated
from fedbound.errors import UnknownNameError, ValidationError, require


@dataclass(frozen=True)
class Option:
    """One named option of an entry (module doc). ``check(label, value) -> value`` validates and
    canonicalizes (``label`` is the name or the flag, for the message); ``parse(text)`` reads the
    command line; ``default`` None means no value (the entry's own default applies); ``aliases``
    are deprecated names (their flags are derived the same way; ``alias_flags`` adds old flags that were not
    derived from a name); ``choices``: the names a choice option accepts (a sequence, or a callable
    giving them), which the command line shows (``--bias-correction {none,adam,flower}``);
    ``constant``: the option is a constant of a function class in the papers' notation (a PEP
    method's ``L``, ``mu``), named by :data:`fedbound.vocabulary.CONSTANTS` instead of the options'
    vocabulary."""

    name: str
    help: str
    check: Callable[[str, Any], Any]
    parse: Callable[[str], Any] = str
    default: Any = None
    required: bool = False
    examples: tuple = ()
    aliases: tuple[str, ...] = ()
    alias_flags: tuple[str, ...] = ()
    choices: Sequence[str] | Callable[[], Sequence[str]] | None = None
    constant: bool = False

    def __post_init__(self):
        for spelling in (self.name, *self.aliases):
            require(isinstance(spelling, str) and spelling.isidentifier(),
                    f"option {spelling!r}: an option's name must be a Python identifier "
                    f"(letters, digits, underscores), such as 'local_steps'")
        require(isinstance(self.help, str) and self.help.strip() != "",
                f"option {self.name}: give a one-line help text")
        for field_name in ("check", "parse"):
            require(callable(getattr(self, field_name)),
                    f"option {self.name}: {field_name} must be callable, got "
                    f"{type(getattr(self, field_name)).__name__}")
        require(not (self.required and self.default is not None),
                f"option {self.name}: a required option has no default")
        require(isinstance(self.examples, tuple), f"option {self.name}: examples must be a tuple")

    def check_declaration(self) -> None:
        """The default and the examples pass the option's own check (a declaration error names
        the option otherwise); plugins' options are checked so when they are registered."""
        for what, value in (("default", self.default), *(("example", e) for e in self.examples)):
            if value is None:
                continue
            try:
                self.check(self.name, value)
            except Exception as exc:   # noqa: BLE001 - whatever the check raises, one line
                raise ValidationError(f"option {self.name}: its {what} {value!r:.40} fails its "
                                      f"own check: {' '.join(str(exc).split())}") from None

    @property
    def flag(self) -> str:
        """The command-line flag: ``--`` + the name with dashes (``local_steps`` -> ``--local-steps``)."""
        return flag_of(self.name)

    @property
    def old_flags(self) -> tuple[str, ...]:
        """Deprecated flags: those of the aliases and the explicit ``alias_flags``."""
        return tuple(dict.fromkeys([*(flag_of(a) for a in self.aliases), *self.alias_flags]))


def flag_of(name: str) -> str:
    """``--`` + ``name`` with underscores as dashes."""
    return "--" + name.replace("_", "-")


# ---- option constructors: the common kinds of values ---------------------------------------------
def number_option(name: str, help: str, *, low: float = -math.inf, high: float = math.inf,
                  low_open: bool = False, high_open: bool = False, **fields) -> Option:
    """A real number in an interval (:func:`fedbound.validate.number`)."""
    def check(label, value):
        return validate.number(label, value, low=low, high=high, low_open=low_open,
                               high_open=high_open)
    return Option(name, help, check, float, **fields)


def integer_option(name: str, help: str, *, low: int | None = None, high: int | None = None,
                   **fields) -> Option:
    """An integer in a range (:func:`fedbound.validate.integer`)."""
    def check(label, value):
        return validate.integer(label, value, low=low, high=high)
    return Option(name, help, check, int, **fields)


def choice_option(name: str, help: str, choices: Sequence[str] | Callable[[], Sequence[str]], **fields) -> Option:
    """One of ``choices`` (a sequence of names, or a callable giving them, e.g. a registry's
    ``names``), with a did-you-mean (:func:`fedbound.validate.one_of`)."""
    def check(label, value):
        return validate.one_of(label, value, choices() if callable(choices) else choices)
    return Option(name, help, check, str, choices=choices, **fields)


# ---- entries ------------------------------------------------------------------------------------
class Entry:
    """What a registry holds: an object with a ``name``, a one-line ``summary`` and ``options``
    (module doc). Entry types are frozen dataclasses deriving from this class (their own field
    order, ``repr=False``: the short ``__repr__`` and the notebook display below are every entry's);
    it checks the names at construction and validates options by name."""

    name: str
    summary: str
    options: tuple[Option, ...] = ()

    def __repr__(self) -> str:
        from fedbound.display import clip
        names = ", ".join(o.name for o in self.options) or "none"
        return clip(f"{type(self).__name__}({self.name!r}: {self.summary}; options {names})")

    def _repr_html_(self) -> str:
        """The entry as a notebook shows it: its summary, its other plain fields (an algorithm's
        family and network need), and a table of its options: name, command-line flag, default
        (or "required"), help."""
        from fedbound.display import box, fields, paragraph, table
        plain = [(f.name, value) for f in dataclasses.fields(self)
                 if f.name not in ("name", "summary", "options")
                 and isinstance(value := getattr(self, f.name), (str, int, float)) and value != ""]
        rows = [[o.name, o.flag, "required" if o.required else "" if o.default is None else o.default, o.help]
                for o in self.options]
        parts = [paragraph(self.summary), *([fields(plain)] if plain else []),
                 table(["option", "flag", "default", "help"], rows) if rows else paragraph("no options")]
        return box(f"{type(self).__name__} {self.name}", parts).text

    def __post_init__(self):
        require(isinstance(self.name, str) and self.name.strip() == self.name and self.name != "",
                f"an entry's name must be a non-empty string without surrounding spaces, "
                f"got {self.name!r}")
        seen: dict[str, str] = {}
        for o in self.options:
            if not isinstance(o, Option):
                raise ValidationError(f"{self.name}: options must be fedbound.registry.Option "
                                      f"objects, got {type(o).__name__}")
            for spelling in (o.name, *o.aliases):
                require(spelling not in seen, f"{self.name}: option name {spelling!r} declared "
                                              f"twice ({seen.get(spelling)} and {o.name})")
                seen[spelling] = o.name

    def option(self, name: str) -> Option:
        """The option ``name`` (or one of its deprecated aliases)."""
        for o in self.options:
            if name == o.name or name in o.aliases:
                return o
        raise validate_unknown(f"option of {self.name}", name, [o.name for o in self.options])

    def check(self, options: dict, *, flags: bool = False) -> dict:
        """``options`` validated: deprecated names renamed (with a warning), unknown names refused
        with a did-you-mean, required ones named when missing, registered defaults filled in;
        values in canonical form, keyed by option name. ``flags``: messages name the flags."""
        given = {}
        for key, value in options.items():
            o = self.option(key)
            if key != o.name:
                if o.name in options:
                    raise ValidationError(f"{self.name}: give {o.name} or its old name {key}, not both")
                deprecated(f"the option {key}", o.name)
            given[o.name] = value
        out = {}
        for o in self.options:
            label = o.flag if flags else o.name
            value = given.get(o.name)
            if value is None:
                require(not o.required, f"{self.name} needs {label}")
                if o.default is None:
                    continue
                value = o.default
            out[o.name] = o.check(label, value)
        return out


@dataclass(frozen=True, repr=False)
class OptionSet(Entry):
    """A named set of options that is not itself picked by name (a run's network options, a
    command's): validated like an entry's."""

    name: str
    summary: str
    options: tuple[Option, ...] = ()


def validate_unknown(what: str, name: object, known: Iterable[str]) -> Exception:
    """The UnknownNameError for ``name`` among ``known`` (with a did-you-mean)."""
    try:
        validate.one_of(what, name, list(known))
    except Exception as exc:   # noqa: BLE001 - one_of raises the error we hand back
        return exc
    return ValidationError(f"{what} {name!r} is not known")   # pragma: no cover


# ---- registries -----------------------------------------------------------------------------------
E = TypeVar("E")

#: every registry by kind, in the order they were created
REGISTRIES: dict[str, "Registry"] = {}


class Registry(Generic[E]):
    """The entries of one ``kind`` (module doc): ``entry_type`` is what ``register`` accepts,
    ``packages`` hold the built-in entries (imported on the first look-up), ``key`` is the
    attribute that names an entry (``name``; results use ``id``), ``namespace`` the vocabulary its
    options' names come from (:mod:`fedbound.vocabulary`: ``"option"``, or ``"transform"`` for the
    optax-style optimizers)."""

    def __init__(self, kind: str, entry_type: type, *, packages: tuple[str, ...] = (),
                 key: str = "name", namespace: str = "option"):
        require(kind not in REGISTRIES, f"a registry of {kind}s exists already")
        vocabulary.table(namespace)
        self.kind, self.entry_type, self.packages, self.key = kind, entry_type, tuple(packages), key
        self.namespace = namespace
        self._entries: dict[str, E] = {}
        self._origins: dict[str, str] = {}
        self._order: tuple[str, ...] | None = None
        self._loaded = self._own_loaded = False
        REGISTRIES[kind] = self

    def register(self, entry: E, *, origin: str | None = None) -> E:
        """Add ``entry``; another entry of the same name is an error naming both modules.
        ``origin``: the registering module (default: the caller's). An entry from outside fedbound
        (a plugin) also has its options' defaults and examples checked
        (:meth:`Option.check_declaration`) and their names against the vocabulary
        (:func:`fedbound.vocabulary.problems`: ``gamma`` is ``lr``)."""
        if not isinstance(entry, self.entry_type):
            raise ValidationError(f"a {self.kind} must be a {self.entry_type.__name__}, got "
                                  f"{type(entry).__name__}")
        name = getattr(entry, self.key)
        if origin is None:
            origin = guard.caller_module(1)
        builtin = origin.startswith("fedbound.")
        if name in self._entries:
            raise (ValidationError if builtin else PluginError)(
                f"{self.kind} {name!r} is already registered (by {self._origins[name]}); "
                f"{origin} registers it again")
        if not builtin:
            for option in getattr(entry, "options", ()):
                try:
                    option.check_declaration()
                except ValidationError as exc:
                    raise PluginError(f"{origin}: {self.kind} {name}: {exc}") from None
                wrong = vocabulary.problems(option, self.namespace)
                if wrong:
                    raise PluginError(f"{origin}: {self.kind} {name}: {wrong[0]}")
        self._entries[name] = entry
        self._origins[name] = origin
        self._order = None
        return entry

    def origin(self, name: str) -> str:
        """The module that registered ``name``."""
        self.get(name)
        return self._origins[name]

    def load_own(self) -> None:
        """Import the modules of ``packages`` once (each registers its entries) and record which
        module registers which of them (the cached index of :meth:`get`)."""
        if self._own_loaded:
            return
        self._own_loaded = True
        for package in self.packages:
            for module in modules_of(package):
                importlib.import_module(module)
        index = {name: origin for name, origin in self._origins.items()
                 if origin.startswith("fedbound.")}
        if self._cached_index() != index:
            cache.store_json("registry", cache.key_of(self.kind), index)

    def load(self) -> None:
        """Every entry: fedbound's own (:meth:`load_own`), then the plugins' of this kind
        (:func:`load_plugins_of`: a plugin whose cached index says it registers nothing of this
        kind is not imported)."""
        if self._loaded:
            return
        self._loaded = True
        self.load_own()
        load_plugins_of(self.kind)

    def get(self, name: str) -> E:
        """The entry ``name`` (UnknownNameError with a did-you-mean): from the module that
        registers it when the cached index knows it (:meth:`_import_indexed`), from the plugin that
        registers it when a plugin's cached index knows it, else after :meth:`load_own` (an unknown
        name gets the closest known ones, the plugins' from their indexes)."""
        if self._registered(name):
            return self._entries[name]
        self.load_own()
        if isinstance(name, str) and name in self._entries:
            return self._entries[name]
        raise validate_unknown(self.kind, name, self.known_names())

    def _registered(self, name) -> bool:
        """Whether ``name`` is registered already, or after importing the one module the cached
        index names for it, or the plugins whose cached index names it (no full :meth:`load`)."""
        if not isinstance(name, str):
            return False
        if name in self._entries or self._import_indexed(name):
            return True
        if self._loaded:
            return False
        load_plugins_of(self.kind, name)
        return name in self._entries

    def _cached_index(self) -> dict:
        """{name: registering module} of fedbound's own entries, as the last :meth:`load_own` of
        this source recorded it (:mod:`fedbound.cache`; empty when there is none)."""
        index = cache.read_json("registry", cache.key_of(self.kind))
        return index if isinstance(index, dict) else {}

    def _import_indexed(self, name: str) -> bool:
        """Whether ``name`` is registered after importing only the module that registers it,
        as recorded by the last :meth:`load_own` of this source (:mod:`fedbound.cache`), and then
        the plugins that may register it too (:func:`load_plugins_of`: those whose cached index
        names it, and those not indexed yet), which refuse a name registered twice as a full load
        does. ``fedbound bound sdgt.thm3`` imports one theory module and no plugin."""
        if self._own_loaded:
            return False
        module = self._cached_index().get(name)
        if not isinstance(module, str) or not module.startswith("fedbound."):
            return False
        try:
            importlib.import_module(module)
        except ImportError:
            return False
        load_plugins_of(self.kind, name)
        return name in self._entries

    def find(self, name: str) -> E:
        """The entry ``name``: without loading the registry when it is registered already (an
        entry built on another while fedbound's modules are imported, such as a verify check on an
        algorithm whose module was imported first), else as :meth:`get`."""
        if isinstance(name, str) and name in self._entries:
            return self._entries[name]
        return self.get(name)

    def names(self) -> tuple[str, ...]:
        """The names in a fixed order whatever was imported first: fedbound's own entries, then
        the plugins', each by the module that registered them, then in registration order."""
        self.load()
        return self._sorted()

    def _sorted(self) -> tuple[str, ...]:
        if self._order is None:
            seq = {name: i for i, name in enumerate(self._entries)}
            self._order = tuple(sorted(self._entries, key=lambda nm: (
                not self._origins[nm].startswith("fedbound."), self._origins[nm], seq[nm])))
        return self._order

    def known_names(self) -> tuple[str, ...]:
        """Every name without importing an indexed plugin: fedbound's own (:meth:`load_own`), the
        plugins' as their cached indexes record them (:func:`plugin_index`; a plugin not indexed
        yet is imported) and whatever is registered already. For a command that builds its parser
        from one entry (``fedbound run NAME``) and must still know every name."""
        if self._loaded:
            return self.names()
        self.load_own()
        for spec, _ in plugin_requests():
            if plugin_index(spec) is None:
                load_plugin(*_request_of(spec))
        own = self._sorted()
        indexed = [name for spec, _ in plugin_requests()
                   for name in (plugin_index(spec) or {}).get(self.kind, ())]
        return tuple(dict.fromkeys([*own, *indexed]))

    def own_entries(self) -> tuple[E, ...]:
        """fedbound's own entries and those registered already, without importing a plugin."""
        self.load_own()
        return tuple(self._entries[name] for name in self._sorted())

    def entries(self) -> tuple[E, ...]:
        return tuple(self._entries[name] for name in self.names())

    def __contains__(self, name) -> bool:
        if self._registered(name):
            return True
        self.load_own()
        return name in self._entries

    def __iter__(self) -> Iterator[E]:
        return iter(self.entries())

    def __len__(self) -> int:
        return len(self.names())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._entries)} entries)"


# ---- plugins -------------------------------------------------------------------------------------
#: the entry-point group of plugins: an installed package declaring
#: ``[project.entry-points."fedbound.plugins"] name = "module"`` is loaded without a flag
PLUGIN_GROUP = "fedbound.plugins"
#: the environment variable naming plugins (comma-separated modules or .py files)
PLUGIN_ENV = "FEDBOUND_PLUGINS"

_loaded_plugins: dict[str, str] = {}    # plugin -> how it was named
_requested: list[str] = []              # --plugin values and load_plugin calls, in order


class PluginError(ValidationError):
    """A plugin that cannot be imported, or registers a name that exists already."""


def load_plugin(spec: str, how: str = "a plugin") -> None:
    """Import the plugin ``spec``: a module on ``sys.path`` or the path of a ``.py`` file; it
    registers its entries at import, as built-in modules do. Loaded once; every failure is a
    one-line :class:`PluginError` naming the plugin. What it registered is recorded in the
    on-disk cache (:func:`plugin_index`), so that later commands that do not use it need not
    import it."""
    if not isinstance(spec, str) or not spec.strip():
        raise PluginError(f"{how}: a plugin is a module name or a .py file, got {spec!r}")
    spec = spec.strip()
    shown = spec if spec.isprintable() else repr(spec)    # one line whatever the name holds
    if spec in _loaded_plugins:
        return
    _loaded_plugins[spec] = how
    before = _plugin_origins()
    registered_before = _registered_by(spec)   # imported before (by the user's code): it registered
    try:
        if spec.endswith(".py"):
            path = Path(spec)
            if not path.is_file():
                raise PluginError(f"plugin {shown} ({how}): no such file")
            name = _file_module(path)
            module_spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            module_spec.loader.exec_module(module)
        else:
            importlib.import_module(spec)
    except Exception as exc:   # noqa: BLE001 - whatever a plugin raises, the user gets one line
        _loaded_plugins.pop(spec, None)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        if isinstance(exc, PluginError):
            if first.startswith(f"plugin {shown} ("):
                raise
            raise PluginError(f"plugin {shown} ({how}): {first}") from None
        raise PluginError(f"plugin {shown} ({how}) failed to load: {type(exc).__name__}"
                          + (f": {first}" if first else "")) from None
    added = {key: origin for key, origin in _plugin_origins().items() if key not in before}
    if not added and not registered_before:
        _loaded_plugins.pop(spec, None)
        raise PluginError(f"plugin {shown} ({how}) registered nothing: a plugin registers "
                          f"algorithms, results, papers, checks, PEP methods or tasks when it is "
                          f"imported (fedbound.extend); is {spec!r} the right module?")
    if not registered_before:
        _store_plugin_index(spec, added)


def _file_module(path: Path) -> str:
    """The module name a ``.py`` plugin is imported under."""
    return f"fedbound_plugin_{path.stem}"


def _registered_by(module: str) -> bool:
    """Whether the module ``module`` or one of its submodules has registered an entry."""
    return any(origin == module or origin.startswith(module + ".")
               for registry in REGISTRIES.values() for origin in registry._origins.values())


def _plugin_origins() -> dict[tuple[str, str], str]:
    """(kind, name) -> registering module of every entry registered from outside fedbound."""
    return {(kind, name): origin for kind, registry in REGISTRIES.items()
            for name, origin in registry._origins.items() if not origin.startswith("fedbound.")}


# -- the plugins' index: what each plugin registers, cached per version of its source ---------------
def _plugin_files(spec: str) -> list[str] | None:
    """The source files of the plugin ``spec`` (its top-level package's ``.py`` files, or the
    ``.py`` file itself), found without importing it; None when they cannot be found."""
    if spec.endswith(".py"):
        return [str(Path(spec).resolve())] if Path(spec).is_file() else None
    try:
        found = importlib.util.find_spec(spec.partition(".")[0])
    except (ImportError, ValueError):
        return None
    if found is None or found.origin is None:
        return None
    if not found.submodule_search_locations:
        return [found.origin]
    files = []
    for folder in found.submodule_search_locations:
        for root, dirs, names in os.walk(folder):
            dirs.sort()
            files += [os.path.join(root, nm) for nm in sorted(names) if nm.endswith(".py")]
    return files


def plugin_fingerprint(spec: str) -> str | None:
    """A key of the plugin ``spec``'s source (path, size and modification time of each of its
    files, :func:`_plugin_files`), or None when its files cannot be found (it is then imported
    whenever a look-up could concern it)."""
    files = _plugin_files(spec)
    if not files:
        return None
    try:
        stamps = [f"{path}:{os.stat(path).st_size}:{os.stat(path).st_mtime_ns}" for path in files]
    except OSError:
        return None
    return cache.key_of(spec, *stamps)


def plugin_index(spec: str) -> dict[str, list[str]] | None:
    """{kind: names} that the plugin ``spec`` registers, as recorded when this version of its
    source was last imported (:mod:`fedbound.cache`), or None when there is no such record."""
    key = plugin_fingerprint(spec)
    index = None if key is None else cache.read_json("plugin", key)
    if not isinstance(index, dict) or not all(isinstance(v, list) for v in index.values()):
        return None
    return index


def _store_plugin_index(spec: str, added: dict[tuple[str, str], str]) -> None:
    key = plugin_fingerprint(spec)
    if key is None:
        return
    index: dict[str, list[str]] = {}
    for kind, name in added:
        index.setdefault(kind, []).append(name)
    cache.store_json("plugin", key, index)


def request_plugin(spec: str) -> None:
    """Remember the plugin ``spec`` (``fedbound --plugin``) and load it when a look-up needs it
    (at once when it is not indexed yet, so that a broken plugin is reported by every command);
    :func:`plugin_specs` hands the list to processes that must load the same plugins (Ray
    workers)."""
    if not isinstance(spec, str) or not spec.strip():
        raise PluginError(f"--plugin: a plugin is a module name or a .py file, got {spec!r}")
    spec = spec.strip()
    if plugin_index(spec) is None:
        load_plugin(spec, "--plugin")     # a plugin that fails to load is not remembered
    if spec not in _requested:
        _requested.append(spec)


def plugin_specs() -> list[str]:
    """The plugins requested in this process beyond the installed ones and the environment."""
    return list(_requested)


def _installed() -> list[tuple[str, str]]:
    """(module, entry-point name) of the installed plugins (entry-point group
    :data:`PLUGIN_GROUP`), read from the cache while no directory of ``sys.path`` changed (a
    package installed or removed changes its folder's modification time): scanning every
    distribution's metadata takes 0.05-0.1 s."""
    stamps = []
    for folder in sys.path:
        try:
            stamps.append(f"{folder}:{os.stat(folder or '.').st_mtime_ns}")
        except OSError:
            stamps.append(f"{folder}:-")
    key = cache.key_of(PLUGIN_GROUP, *stamps)
    found = cache.read_json("entry-points", key)
    if isinstance(found, list) and all(isinstance(x, list) and len(x) == 2 for x in found):
        return [(value, name) for value, name in found]
    from importlib.metadata import entry_points

    found = [[ep.value, ep.name] for ep in entry_points(group=PLUGIN_GROUP)]
    cache.store_json("entry-points", key, found)
    return [(value, name) for value, name in found]


def plugin_requests() -> list[tuple[str, str]]:
    """(spec, how it was named) of every plugin of this process: installed (entry points), of
    the environment variable :data:`PLUGIN_ENV` and requested (``--plugin``), each once."""
    out: dict[str, str] = {}
    for value, name in _installed():
        out.setdefault(value, f"entry point {name!r} of {PLUGIN_GROUP}")
    for spec in os.environ.get(PLUGIN_ENV, "").split(","):
        if spec.strip():
            out.setdefault(spec.strip(), f"${PLUGIN_ENV}")
    for spec in _requested:
        out.setdefault(spec, "--plugin")
    return list(out.items())


def _request_of(spec: str) -> tuple[str, str]:
    return spec, dict(plugin_requests()).get(spec, "a plugin")


def load_plugins() -> None:
    """Import every plugin of :func:`plugin_requests` (a full look-up of any registry)."""
    for spec, how in plugin_requests():
        load_plugin(spec, how)


def load_plugins_of(kind: str, name: str | None = None) -> None:
    """Import the plugins that may register ``name`` (any name without one) in the registry of
    ``kind``: those whose cached index (:func:`plugin_index`) names it, and those without an index
    (imported and indexed now). A plugin indexed without it is not imported: it costs a command
    that does not use it a look-up in the cache."""
    for spec, how in plugin_requests():
        if spec in _loaded_plugins:
            continue
        index = plugin_index(spec)
        if index is None or (name in index.get(kind, ()) if name is not None else kind in index):
            load_plugin(spec, how)


def modules_of(package: str) -> list[str]:
    """Every module of ``package`` and its subpackages, in name order (the package first)."""
    try:
        pkg = importlib.import_module(package)
    except ModuleNotFoundError as exc:
        raise UnknownNameError(f"package {package!r} cannot be imported: {exc}") from None
    require(hasattr(pkg, "__path__"), f"{package!r} is a module, not a package")
    out = [package]
    for info in pkgutil.walk_packages(pkg.__path__, prefix=package + "."):
        out.append(info.name)
    return sorted(dict.fromkeys(out), key=lambda m: (m != package, m))


#: what a user who reaches for ``fedbound.registry.build`` (or ``get``, ``names``) means: the
#: registry module of a kind, where those names are
_KIND_REGISTRIES = ("fedbound.algorithms.registry (build, get, names), fedbound.tasks.registry (make_task, "
                    "TASKS), fedbound.theory (get, results)")


def __getattr__(name: str):
    """An AttributeError that points a look-up of a kind's function here (``build``, ``get``,
    ``names``, ``specs``, ``make_task``) to the registry module of that kind."""
    if name in ("build", "get", "names", "specs", "make_task"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}: it is the mechanism every "
                             f"registry shares; the registries are {_KIND_REGISTRIES}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["PLUGIN_GROUP", "PLUGIN_ENV", "PluginError", "load_plugin", "request_plugin",
           "plugin_specs", "load_plugins", "load_plugins_of", "plugin_requests", "plugin_index",
           "plugin_fingerprint", "Option", "Entry", "OptionSet", "Registry", "REGISTRIES", "flag_of", "number_option",
           "integer_option", "choice_option", "modules_of"]
