"""Atomic files and output folders that never overwrite silently.

Files. Every file fedbound writes goes to a temporary name in the same folder and is renamed over
its final name with ``os.replace`` once complete (:func:`atomic_open`, :func:`atomic_path`,
:func:`write_text`, :func:`write_json`): a reader never sees a half-written file, and an interrupted
write leaves no file under the final name.

Folders. A command with ``--out DIR`` describes it by an :class:`OutputFolder`. Before any work,
:meth:`OutputFolder.check` refuses a DIR that is a file, an existing non-empty folder (unless
``overwrite``, or ``resume`` for a folder fedbound started), or a place that cannot be written,
with one line naming the option. :meth:`OutputFolder.create` makes the folder and records
``{"status": "incomplete"}`` in :data:`STATUS_FILE`; :meth:`OutputFolder.complete` records
``"complete"`` once every file is written. A run killed at any point therefore leaves no folder, or
a folder whose status file says ``incomplete``.
"""
from __future__ import annotations

import contextlib
import datetime
import json
import argparse
import os
import secrets
from pathlib import Path

from fedbound.errors import OutputError
from fedbound.jsonable import jsonable

#: the status file of an output folder
STATUS_FILE = "fedbound-status.json"


def _temporary(path: Path) -> Path:
    """A fresh hidden name beside ``path`` with the same suffix (numpy and matplotlib go by it)."""
    return path.with_name(f".{path.stem}.tmp-{os.getpid()}-{secrets.token_hex(4)}{path.suffix}")


def _os_error(path, exc: OSError, option: str = "output") -> OutputError:
    return OutputError(f"cannot write {option} {os.fspath(path)!r}: {exc.strerror or exc}")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path beside ``path``; on normal exit it is renamed to ``path`` (os.replace),
    on an exception it is removed. For writers that take a file name (np.save, savefig)."""
    path = Path(path)
    tmp = _temporary(path)
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as exc:
        raise _os_error(path, exc) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", **kwargs):
    """``open`` on a temporary name, flushed, synced and renamed to ``path`` when the block ends
    without an exception (``mode`` "w" or "wb"; keyword arguments go to ``open``)."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open mode must be 'w' or 'wb', got {mode!r}")
    with atomic_path(path) as tmp:
        try:
            fh = open(tmp, mode, **kwargs)
        except OSError as exc:
            raise _os_error(path, exc) from None
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return Path(path)


def write_json(path: str | os.PathLike, value: object, *, nonfinite: str = "string", indent: int = 1) -> Path:
    """Write ``value`` as strict JSON (:func:`~fedbound.jsonable.jsonable`, no NaN/Infinity tokens)
    to ``path`` atomically."""
    return write_text(path, json.dumps(jsonable(value, nonfinite), indent=indent, allow_nan=False))


def status(path: str | os.PathLike) -> str | None:
    """``"complete"``, ``"incomplete"`` or None (no fedbound status file) of an output folder."""
    try:
        return json.loads((Path(path) / STATUS_FILE).read_text(encoding="utf-8")).get("status")
    except (OSError, ValueError, AttributeError):
        return None


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class OutputFolder:
    """The output folder of one command (module doc): check up front, create, complete."""

    def __init__(self, path: str | os.PathLike, *, overwrite: bool = False, resume: bool = False,
                 option: str = "--out", command: str | None = None):
        self.path = Path(path)
        self.overwrite, self.resume = bool(overwrite), bool(resume)
        self.option, self.command = option, command
        self.created = False

    def check(self) -> "OutputFolder":
        """Refuse, with one line, a path fedbound must not write into (module doc); no side effect.
        A path the system refuses to look at (a name too long, a loop of links) is refused too."""
        try:
            return self._check()
        except OSError as exc:
            raise _os_error(self.path, exc, self.option) from None

    def _check(self) -> "OutputFolder":
        p, opt = self.path, self.option
        if not str(p) or "\x00" in str(p) or str(p) != str(p).strip():
            raise OutputError(f"{opt} must be a folder path without NUL bytes or surrounding "
                              f"spaces, got {str(p)!r}")
        if p.exists() and not p.is_dir():
            raise OutputError(f"{opt} {str(p)!r} is a file, not a folder; choose a folder path")
        if p.is_dir():
            try:
                entries = next(os.scandir(p), None) is not None
            except OSError as exc:
                raise _os_error(p, exc, opt) from None
            if entries and not self.overwrite:
                if self.resume and status(p) is not None:
                    pass
                else:
                    state = status(p)
                    what = f"holds {'an' if state[:1] in 'aeiou' else 'a'} {state} fedbound output" if state else "is not empty"
                    hint = "--overwrite to replace its files" + (
                        " or --resume to continue it" if self.resume else "")
                    raise OutputError(f"{opt} {str(p)!r} {what}; pass {hint}, or choose another folder")
            if not os.access(p, os.W_OK | os.X_OK):
                raise OutputError(f"{opt} {str(p)!r} is not writable")
            return self
        parent = p.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise OutputError(f"{opt} {str(p)!r} cannot be created: {str(parent)!r} is a file")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise OutputError(f"{opt} {str(p)!r} cannot be created: {str(parent)!r} is not writable")
        return self

    def create(self) -> Path:
        """Make the folder (checked again) and mark it incomplete; returns its path."""
        if self.created:
            return self.path
        self.check()
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _os_error(self.path, exc, self.option) from None
        self._write_status("incomplete")
        self.created = True
        return self.path

    def complete(self) -> None:
        """Record that every file is written (only for a folder this object created)."""
        if self.created:
            self._write_status("complete")

    def _write_status(self, state: str) -> None:
        write_json(self.path / STATUS_FILE, {"status": state, "time": _now(), "command": self.command})


def output_folder(args: argparse.Namespace) -> OutputFolder:
    """The :class:`OutputFolder` of a parsed CLI namespace (made by ``fedbound.cli.main`` from
    ``--out``, ``--overwrite`` and ``--resume``; built here when a command is called directly)."""
    folder = getattr(args, "output_folder", None)
    if folder is None:
        folder = OutputFolder(args.out, overwrite=getattr(args, "overwrite", False),
                              resume=getattr(args, "resume", False))
        args.output_folder = folder.check()
    return folder


__all__ = ["STATUS_FILE", "atomic_path", "atomic_open", "write_text", "write_json", "status",
           "OutputFolder", "output_folder"]
