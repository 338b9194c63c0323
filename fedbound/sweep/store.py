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
from fedbound.errors import ValidationError, require

DB_NAME = "sweep.sqlite"
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

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path) / DB_NAME
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self._schema()
        except sqlite3.DatabaseError as exc:
            raise ValidationError(f"{self.path} is not a fedbound sweep database: {exc}") from None

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
        schema = self.meta("schema")
        require(schema in READABLE, f"{self.path} has schema {schema}, this fedbound reads "
                                    f"{', '.join(READABLE)}")

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
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('spec', ?)", (spec_text,))
            self.db.executemany("INSERT INTO cells (key, config, algorithm, seed, sigma, batch, status) "
                                "VALUES (?, ?, ?, ?, ?, ?, 'pending')", cells)

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
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            for r in results:
                final = None
                self.db.execute("DELETE FROM rounds WHERE cell = ?", (r.cell_id,))
                if r.columns is not None:
                    cols = r.columns
                    rows = [(r.cell_id, t, *(_real(cols[m][t]) for m in METRICS[:-1]), int(cols["K"][t]),
                             *(_real(cols[c][t]) for c in COMM)) for t in range(len(cols["loss"]))]
                    self.db.executemany(insert, rows)
                    final = json.dumps({m: _real(cols[m][-1]) for m in METRICS[:-1]}, sort_keys=True)
                self.db.execute("UPDATE cells SET status = ?, error = ?, final = ?, wall_s = ? WHERE id = ?",
                                (r.status, r.error, final, r.wall_s, r.cell_id))

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


def exists(path: str | os.PathLike) -> bool:
    return (Path(path) / DB_NAME).is_file()


__all__ = ["Store", "CellResult", "DB_NAME", "METRICS", "COMM", "FINISHED", "exists"]
