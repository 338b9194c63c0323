"""``fedbound new plugin DIR --name NAME``: a complete, pip-installable plugin written from the
template in ``plugin_template/`` (its files end in ``.tmpl``; ``PACKAGE`` in a path is the
plugin's Python package, ``$name``, ``$package`` and ``$distribution`` in a file are replaced).

What it writes: an algorithm NAME (FedAvg with server Nesterov momentum, on the round template),
a theorem NAME.thm1 with its constants' meanings, domains and step condition, its claims and the
paper NAME (audit, adapter, the check of the theorem against runs), a PEP method NAME, tests with
:mod:`fedbound.testing`, and the entry point ``fedbound.plugins``.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from string import Template

from fedbound.errors import ValidationError, require
from fedbound.outputs import write_text

TEMPLATE = Path(__file__).with_name("plugin_template")
#: a plugin's name: the algorithm's, the paper's (the scope of its theorems' ids) and the entry point's
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,39}")


def check_name(name: str) -> str:
    """``name`` if it can name an algorithm, a paper and a Python package: lowercase letters,
    digits and underscores, starting with a letter, not taken by a registered algorithm or paper."""
    require(isinstance(name, str) and NAME_PATTERN.fullmatch(name) is not None,
            f"--name must be lowercase letters, digits and underscores, starting with a letter "
            f"(at most 40), got {name!r}")
    from fedbound.algorithms.registry import ALGORITHMS
    from fedbound.papers import PAPERS

    for kind, registry in (("algorithm", ALGORITHMS), ("paper", PAPERS)):
        if name in registry:
            raise ValidationError(f"an {kind} named {name!r} exists already (registered by "
                                  f"{registry.origin(name)}); pick another --name")
    return name


def files(name: str) -> dict[str, str]:
    """Relative path -> text of every file of the plugin ``name``."""
    package = f"fedbound_{name}"
    values = {"name": name, "package": package, "distribution": f"fedbound-{name.replace('_', '-')}"}
    out = {}
    for path in sorted(TEMPLATE.rglob("*.tmpl")):
        relative = path.relative_to(TEMPLATE).with_suffix("").as_posix()
        relative = relative.replace("PACKAGE", package)
        out[relative] = Template(path.read_text()).substitute(values)
    return out


def new_plugin(directory: str | os.PathLike, name: str, *, overwrite: bool = False) -> list[Path]:
    """Write the plugin ``name`` into ``directory`` (created; an existing non-empty one only with
    ``overwrite``); returns the written files. Each file is written atomically."""
    name = check_name(name)
    if not isinstance(directory, (str, os.PathLike)) or not str(directory).strip():
        raise ValidationError(f"DIR must be a folder path, got {directory!r}")
    root = Path(directory)
    require(not root.exists() or root.is_dir(), f"{root} exists and is not a folder")
    if root.is_dir() and any(root.iterdir()) and not overwrite:
        raise ValidationError(f"{root} is not empty; give --overwrite to write into it")
    written = []
    for relative, text in files(name).items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text(target, text)
        written.append(target)
    return written


__all__ = ["new_plugin", "files", "check_name", "NAME_PATTERN", "TEMPLATE"]
