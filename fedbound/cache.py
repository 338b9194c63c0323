"""The on-disk cache of facts derived from fedbound's source: which module registers which entry
(:class:`fedbound.registry.Registry` imports only that module for a look-up by name) and the text
of each command's ``--help`` (:mod:`fedbound.cli.main`).

Files live in ``cache_dir() / fingerprint()``: the fingerprint hashes fedbound's version and the
path, size and modification time of every source file of the package, so an upgrade or an edit of
any module makes a fresh folder and nothing stale is ever read. The cache is never required: a
folder that cannot be written, or a file that cannot be read or parsed, is recomputed and the
command goes on. Files are written atomically (:func:`fedbound.outputs.write_text`), so concurrent
processes read either nothing or a whole file. ``FEDBOUND_CACHE_DIR`` moves the cache (default
``$XDG_CACHE_HOME/fedbound`` or ``~/.cache/fedbound``); ``FEDBOUND_CACHE_DIR=off`` disables it.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import time
from pathlib import Path

from fedbound.errors import require
from fedbound.outputs import write_text

#: the environment variable that moves (or, set to ``off``, disables) the cache
CACHE_ENV = "FEDBOUND_CACHE_DIR"
#: folders of other fingerprints untouched for this long are removed when a file is written
STALE_DAYS = 7
_PACKAGE = Path(__file__).resolve().parent


def cache_dir() -> Path | None:
    """The cache's root folder, or None when ``FEDBOUND_CACHE_DIR=off``."""
    chosen = os.environ.get(CACHE_ENV, "").strip()
    if chosen.lower() == "off":
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache"
    return Path(base) / "fedbound"


@functools.cache
def fingerprint() -> str:
    """sha256 (16 hex digits) of the version and of every ``.py`` file's path, size and mtime."""
    from fedbound.version import __version__

    digest = hashlib.sha256(__version__.encode())
    for root, dirs, files in os.walk(_PACKAGE):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                stat = os.stat(path)
                digest.update(f"{os.path.relpath(path, _PACKAGE)}:{stat.st_size}:"
                              f"{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def _path(kind: str, key: str) -> Path | None:
    for part in (kind, key):
        require(part != "" and all(c.isalnum() or c in "_.-" for c in part) and part[0] != ".",
                f"a cache kind or key is letters, digits, '_', '.' and '-', got {part!r}")
    root = cache_dir()
    return None if root is None else root / fingerprint() / f"{kind}-{key}"


def read_text(kind: str, key: str) -> str | None:
    """The cached text of (``kind``, ``key``), or None when there is none (or it cannot be read)."""
    path = _path(kind, key)
    try:
        return None if path is None else path.read_text(encoding="utf-8")
    except (OSError, UnicodeError):
        return None


def store_text(kind: str, key: str, text: str) -> None:
    """Cache ``text`` under (``kind``, ``key``); a cache that cannot be written is left alone."""
    path = _path(kind, key)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, text)
    except Exception:   # noqa: BLE001 - the cache is an optimization: any failure means no cache
        return
    _remove_stale(path.parent.parent, keep=path.parent.name)


def read_json(kind: str, key: str):
    """The cached JSON value of (``kind``, ``key``), or None."""
    text = read_text(kind, key)
    try:
        return None if text is None else json.loads(text)
    except ValueError:
        return None


def store_json(kind: str, key: str, value: object) -> None:
    """Cache the JSON value ``value`` under (``kind``, ``key``)."""
    store_text(kind, key, json.dumps(value, sort_keys=True))


def _remove_stale(root: Path, keep: str) -> None:
    """Remove the folders of other fingerprints not written for :data:`STALE_DAYS` days (another
    installation sharing the cache keeps its own while it is used)."""
    limit = time.time() - STALE_DAYS * 86400
    try:
        for folder in root.iterdir():
            if folder.name != keep and folder.is_dir() and folder.stat().st_mtime < limit:
                shutil.rmtree(folder, ignore_errors=True)
    except OSError:
        return


def key_of(*parts: str) -> str:
    """A file-name-safe key (sha256, 16 hex digits) for the strings ``parts``."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]
