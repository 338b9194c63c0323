"""The results store of a sweep: one SQLite database, ``DIR/sweep.sqlite``, written only by the
driver process.

Tables:

* ``meta(key, value)``: the SPEC (canonical JSON) and the schema version;
* ``cells(id, key, config, algorithm, seed, sigma, batch, status, error, final, wall_s)``: one row
  per cell, inserted as ``pending`` when the sweep is prepared (ids in SPEC order, so they do not
  depend on the order in which cells finish); ``status`` becomes ``done`` or ``diverged`` (with the
  message in ``error``); ``final`` holds the last round's metrics as JSON; ``wall_s`` the cell's
  share of its batch's wall time (the one column that differs between two runs of a sweep);
* ``rounds(cell, round, loss, loss_gap, dist2, grad_norm2, K, <CommCounts fields>)``: the per-round
  metrics and cumulative communication of every finished cell (NaN is stored as NULL).

A batch of cells (seeds run together, :mod:`fedbound.sweep.batch`) is committed in one transaction:
a process killed at any moment leaves every cell either finished with all its rounds or pending
with none, so rerunning resumes exactly. The journal is SQLite's write-ahead log with
synchronous=NORMAL: atomic and durable against a killed process (what the OS has accepted survives
it), and against a power loss consistent, losing at most the last commits (those cells rerun); a
commit costs ~0.2 ms instead of the ~25 ms of fsync-per-commit (synchronous=FULL) on this machine's
disk, which made the store the bottleneck of small sweeps.
"""
from __future__ import annotations

import os

import json
import math
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fedbound.algorithms.accounting import COUNTERS
from fedbound.errors import OutputError, ValidationError, require

DB_NAME = "sweep.sqlite"
#: the writer lock of a sweep folder (fcntl.flock; holds the writer's pid)
LOCK_NAME = "sweep.lock"
#: 2: the option names of issue 20's one vocabulary (lr, local_steps, clients_per_subnet, ...) in
#: the cells' keys; a store of schema 1 (gamma, K, h) is still read, not resumed
SCHEMA = 2
READABLE = ("1", "2")
METRICS = ("loss", "loss_gap", "dist2", "grad_norm2", "K")
COMM = COUNTERS
FINISHED = ("done", "diverged")


@dataclass
class CellResult:
    """What a worker returns for one cell: ``status`` ("done" or "diverged"), the per-round
    ``columns`` (METRICS and COMM names -> arrays; None when diverged), ``error`` and ``wall_s``."""

    cell_id: int
    status: str
    columns: dict | None
    error: str | None
    wall_s: float


def _real(value):
    value = float(value)
    return value if math.isfinite(value) else None


class Store:
    """The sweep database of folder ``path`` (module doc)."""

    def __init__(self, path: str | os.PathLike, *, create: bool = True):
        """Open the store of folder ``path``; a new one is created only with ``create``. A file that
        is not a fedbound store (another SQLite database, a corrupt one, not SQLite at all) is
        refused and left exactly as it is."""
        self.path = Path(path) / DB_NAME
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        require(create or not fresh, f"{self.path.parent} holds no sweep database (run `fedbound "
                                     f"sweep SPEC.json --out {self.path.parent}` first)")
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        except sqlite3.Error as exc:
            raise OutputError(f"cannot open the sweep store {self.path}: {exc}") from None
        try:
            if not fresh:
                self._recognize()
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            if fresh:
                self._schema()
            schema = self.meta("schema")
            require(schema in READABLE, f"{self.path} has schema {schema}, this fedbound reads "
                                        f"{', '.join(READABLE)}")
            self._inode = self.path.stat().st_ino
        except sqlite3.DatabaseError as exc:
            self.db.close()
            raise ValidationError(f"{self.path} is not a fedbound sweep database: {exc} (left as it is; "
                                  "move it away or choose another folder)") from None
        except ValidationError:
            self.db.close()
            raise

    def _recognize(self) -> None:
        """Refuse a database that is corrupt or was not written by fedbound, before writing to it."""
        check = [r[0] for r in self.db.execute("PRAGMA quick_check").fetchall()]
        if check != ["ok"]:
            raise ValidationError(f"{self.path} is corrupt (SQLite quick_check: {check[0]}); it is left "
                                  "as it is: move it away, or rerun with --overwrite to start afresh")
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"meta", "cells", "rounds"} <= tables or self.db.execute(
                "SELECT COUNT(*) FROM meta WHERE key = 'schema'").fetchone()[0] != 1:
            shown = ", ".join(sorted(tables)) or "none"
            raise ValidationError(f"{self.path} is not a fedbound sweep database (its tables: {shown}); "
                                  "it is left as it is: choose another folder")

    def _write(self, what: str, statements) -> None:
        """Run ``statements(db)`` in one transaction; a write that fails (a full disk, the folder
        removed or moved away) is a one-line OutputError and leaves the store as it was before."""
        try:
            still = self.path.stat().st_ino == self._inode
        except OSError:
            still = False
        if not still:
            raise OutputError(f"the sweep store {self.path} vanished during the sweep (its folder was "
                              "moved or removed): the cells finished before are in the moved store; "
                              "rerun into its folder to resume")
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                statements(self.db)
        except (sqlite3.OperationalError, OSError) as exc:
            raise OutputError(f"cannot {what} in {self.path}: {exc}; the store keeps every cell "
                              "finished before: free space and rerun the same command to resume") from None

    def _schema(self) -> None:
        comm = ", ".join(f"{c} REAL" for c in COMM)
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self.db.execute("CREATE TABLE IF NOT EXISTS cells (id INTEGER PRIMARY KEY, key TEXT UNIQUE "
                            "NOT NULL, config TEXT NOT NULL, algorithm TEXT NOT NULL, seed INTEGER NOT "
                            "NULL, sigma REAL NOT NULL, batch INTEGER NOT NULL, status TEXT NOT NULL, "
                            "error TEXT, final TEXT, wall_s REAL)")
            self.db.execute(f"CREATE TABLE IF NOT EXISTS rounds (cell INTEGER NOT NULL, round INTEGER "
                            f"NOT NULL, loss REAL, loss_gap REAL, dist2 REAL, grad_norm2 REAL, K INTEGER, "
                            f"{comm}, PRIMARY KEY (cell, round)) WITHOUT ROWID")
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA),))

    def require_current(self) -> None:
        """Refuse to add to a store of an older schema (its cells name options the old way)."""
        schema = self.meta("schema")
        require(schema == str(SCHEMA),
                f"{self.path.parent} holds a sweep written before the option names of fedbound's one "
                f"vocabulary (schema {schema}; gamma, K, h are now lr, local_steps, "
                "clients_per_subnet): `fedbound sweep report` still reads it; rerun the SPEC in a new "
                "folder to resume or extend it")

    def close(self) -> None:
        self.db.close()

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def add_cells(self, spec_text: str, cells: list) -> None:
        """Record ``spec_text`` and append ``cells`` ((key, config, algorithm, seed, sigma, batch)
        tuples, not yet stored) as pending, in one transaction."""
        def statements(db):
            db.execute("INSERT OR REPLACE INTO meta VALUES ('spec', ?)", (spec_text,))
            db.executemany("INSERT INTO cells (key, config, algorithm, seed, sigma, batch, status) "
                           "VALUES (?, ?, ?, ?, ?, ?, 'pending')", cells)
        self._write("record the cells", statements)

    def mark_extended(self) -> None:
        """Record that cells of an earlier SPEC may stay beside the current SPEC's (--extend)."""
        self._write("record the extension", lambda db: db.execute(
            "INSERT OR REPLACE INTO meta VALUES ('extended', '1')"))

    def configs(self) -> dict[str, str]:
        """cell key -> its configuration JSON."""
        return dict(self.db.execute("SELECT key, config FROM cells"))

    def keys(self) -> dict[str, tuple[int, str, int]]:
        """cell key -> (id, status, batch)."""
        return {k: (i, s, b) for i, k, s, b in
                self.db.execute("SELECT id, key, status, batch FROM cells ORDER BY id")}

    def next_batch(self) -> int:
        return int(self.db.execute("SELECT COALESCE(MAX(batch) + 1, 0) FROM cells").fetchone()[0])

    def commit(self, results: list[CellResult]) -> None:
        """Record the results of one batch in one transaction (module doc)."""
        names = ("cell", "round", *METRICS, *COMM)
        insert = f"INSERT INTO rounds ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"

        def statements(db):
            for r in results:
                final = None
                db.execute("DELETE FROM rounds WHERE cell = ?", (r.cell_id,))
                if r.columns is not None:
                    cols = r.columns
                    rows = [(r.cell_id, t, *(_real(cols[m][t]) for m in METRICS[:-1]), int(cols["K"][t]),
                             *(_real(cols[c][t]) for c in COMM)) for t in range(len(cols["loss"]))]
                    db.executemany(insert, rows)
                    final = json.dumps({m: _real(cols[m][-1]) for m in METRICS[:-1]}, sort_keys=True)
                db.execute("UPDATE cells SET status = ?, error = ?, final = ?, wall_s = ? WHERE id = ?",
                           (r.status, r.error, final, r.wall_s, r.cell_id))
        self._write("store the finished cells", statements)

    def cells(self) -> list[dict]:
        """Every cell as a dict of its columns (``final`` decoded), in id order."""
        cur = self.db.execute("SELECT * FROM cells ORDER BY id")
        names = [c[0] for c in cur.description]
        out = []
        for row in cur:
            cell = dict(zip(names, row))
            cell["final"] = None if cell["final"] is None else json.loads(cell["final"])
            out.append(cell)
        return out

    def rounds(self, cell_id: int) -> dict[str, np.ndarray]:
        """The per-round columns of a cell (NULL read back as NaN)."""
        cur = self.db.execute("SELECT * FROM rounds WHERE cell = ? ORDER BY round", (cell_id,))
        names = [c[0] for c in cur.description]
        rows = cur.fetchall()
        return {n: np.array([np.nan if r[i] is None else r[i] for r in rows], dtype=float)
                for i, n in enumerate(names)}

    def content(self) -> list:
        """Every stored value except the wall times, in key order: what two runs of one sweep must
        agree on bitwise."""
        cells = self.db.execute("SELECT id, key, config, algorithm, seed, sigma, batch, status, error, "
                                "final FROM cells ORDER BY id").fetchall()
        rounds = self.db.execute("SELECT * FROM rounds ORDER BY cell, round").fetchall()
        meta = self.db.execute("SELECT * FROM meta ORDER BY key").fetchall()
        return [meta, cells, rounds]


def lock_folder(path: str | os.PathLike):
    """Take the writer lock of the sweep folder ``path`` (the file :data:`LOCK_NAME`, an exclusive
    ``fcntl.flock`` holding the writer's pid) and return its open file; closing it, or the death of
    the process (a SIGKILL included), releases it. A second writer is refused with a one-line
    ValidationError naming the first, never interleaved with it."""
    import fcntl

    lock_path = Path(path) / LOCK_NAME
    try:
        handle = open(lock_path, "a+")
    except OSError as exc:
        raise OutputError(f"cannot create the sweep lock {lock_path}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        owner = handle.read().strip() or "?"
        handle.close()
        raise ValidationError(f"another `fedbound sweep` (pid {owner}) is writing {Path(path)}; wait for "
                              "it to finish (then rerun to resume), or choose another folder") from None
    handle.truncate(0)
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def remove(path: str | os.PathLike) -> None:
    """Delete the store of folder ``path`` (its database and SQLite's journal files): --overwrite,
    under the folder's lock."""
    for suffix in ("", "-wal", "-shm"):
        target = Path(path) / (DB_NAME + suffix)
        try:
            target.unlink(missing_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot remove the sweep store {target}: {exc.strerror or exc}") from None


def exists(path: str | os.PathLike) -> bool:
    return (Path(path) / DB_NAME).is_file()


__all__ = ["Store", "CellResult", "DB_NAME", "LOCK_NAME", "lock_folder", "remove", "METRICS", "COMM", "FINISHED", "exists"]
