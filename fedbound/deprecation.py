"""Old spellings that still work: a renamed user-facing name (option, flag, attribute, module) keeps
working under its old spelling, which warns once per process, in one line
(:class:`FedboundDeprecationWarning`, a FutureWarning, so users see it by default).

* :func:`deprecated` is the one warning every alias goes through;
* :func:`renamed_attributes` gives a module the ``__getattr__`` of its renamed names;
* :data:`MOVED_MODULES` maps module paths of the public API that moved to where their contents live
  now; importing an old path gives a module whose attributes are those of the new ones.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings


class FedboundDeprecationWarning(FutureWarning):
    """An old spelling (option, flag, name, module) that still works; shown to users by default."""


_WARNED: set = set()


def deprecated(old: str, new: str) -> None:
    """Warn once per process, in one line, that ``old`` is deprecated in favour of ``new``."""
    if (old, new) in _WARNED:
        return
    _WARNED.add((old, new))
    warnings.warn(f"{old} is deprecated; use {new}", FedboundDeprecationWarning, stacklevel=3)


def renamed_keywords(where: str, renames: dict[str, str], old: dict, new: dict) -> dict:
    """``new`` (keyword -> value, None for not given) completed by the deprecated keywords of
    ``old`` (old name -> value), each renamed by ``renames`` with a warning; both spellings of one
    keyword given is an error."""
    from fedbound.errors import ValidationError

    out = dict(new)
    for name, value in old.items():
        if value is None:
            continue
        target = renames[name]
        if out.get(target) is not None:
            raise ValidationError(f"{where}: give {target} or its old name {name}, not both")
        deprecated(f"{where}({name}=...)", f"{target}=")
        out[target] = value
    return out


def renamed_attributes(module: str, renamed: dict[str, str]):
    """A module ``__getattr__`` resolving each old name of ``renamed`` (old -> "module:new") with a
    deprecation warning."""
    def __getattr__(name: str):
        if name in renamed:
            target, _, new = renamed[name].partition(":")
            deprecated(f"{module}.{name}", f"{target}.{new}")
            return getattr(importlib.import_module(target), new)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return __getattr__


#: moved module -> the modules that hold its contents now (issue 20's layout by family)
MOVED_MODULES: dict[str, tuple[str, ...]] = {
    **{f"fedbound.algorithms.{old}": (f"fedbound.algorithms.federated.{old}",)
       for old in ("aggregation", "local_steps", "control_variates", "variance_reduction", "fedopt",
                   "fednova", "feddyn", "afga", "fedada2", "scaffold")},
    "fedbound.algorithms.dsgd": ("fedbound.algorithms.decentralized.dsgd",),
    "fedbound.algorithms.gradient_tracking": ("fedbound.algorithms.decentralized.gradient_tracking",),
    "fedbound.algorithms.gossip_baselines": ("fedbound.algorithms.decentralized.pga",
                                             "fedbound.algorithms.decentralized.dadam"),
    **{f"fedbound.algorithms.{old}": (f"fedbound.algorithms.semidecentralized.{old}",)
       for old in ("sdgt", "sd_fedavg", "scaffnew")},
}


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports of :data:`MOVED_MODULES`: a module whose attributes are looked up in the new ones."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in MOVED_MODULES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        targets = MOVED_MODULES[spec.name]
        deprecated(f"the module {spec.name}", " and ".join(targets))
        module = types.ModuleType(spec.name, f"Moved to {', '.join(targets)}.")

        def __getattr__(name):
            for target in targets:
                mod = importlib.import_module(target)
                if hasattr(mod, name):
                    return getattr(mod, name)
            raise AttributeError(f"module {spec.name!r} (moved to {', '.join(targets)}) has no "
                                 f"attribute {name!r}")
        module.__getattr__ = __getattr__
        return module

    def exec_module(self, module):
        pass


def install() -> None:
    """Put the finder of moved modules on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Moved) for f in sys.meta_path):
        sys.meta_path.insert(0, _Moved())


__all__ = ["FedboundDeprecationWarning", "deprecated", "renamed_keywords", "renamed_attributes", "MOVED_MODULES", "install"]
