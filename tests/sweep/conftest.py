"""Shared pieces of the sweep tests: a SPEC with batched (fedavg) and unbatched (sdgt) cells, the
CLI in a subprocess, and a kill -9 (or Ctrl-C) at a chosen point of a running sweep: after the commit
that reaches a random number of finished cells, where the sweep is held (held_sweep.py), never
raced against the clock."""
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = {"algorithm": ["fedavg", "sdgt"], "task": {"name": "lsq", "n": 8, "d": 4, "rows": 6},
        "network": {"subnets": 2, "topology": "ring"}, "rounds": 60,
        "grid": {"lr": [0.02, 0.05], "gamma": 0.02, "K": 2, "local_steps": 3,
                 "clients_per_round": 4, "sigma": 0.2, "seed": list(range(5))}}


@pytest.fixture(scope="module")
def spec_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("spec") / "spec.json"
    path.write_text(json.dumps(SPEC))
    return path


def database_content(folder) -> list:
    """Everything the store of ``folder`` holds (``Store.content``), the store closed again."""
    from fedbound.sweep.store import Store

    store = Store(folder)
    try:
        return store.content()
    finally:
        store.close()


@pytest.fixture
def content():
    return database_content


@pytest.fixture(scope="module")
def reference(spec_file, tmp_path_factory):
    """The database content of the uninterrupted embedded sweep of SPEC."""
    from fedbound.sweep import load, run_sweep

    folder = tmp_path_factory.mktemp("reference")
    run_sweep(load(spec_file), folder)
    return database_content(folder)


def ctrl_c_default() -> None:
    """In the child: Ctrl-C (SIGINT) with Python's default handler, even when the test suite was
    started where SIGINT is ignored (a background job of a non-interactive shell), which a child
    would otherwise inherit."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cli(*args, driver: tuple = ("-m", "fedbound", "sweep"), env: dict | None = None,
        preexec=ctrl_c_default) -> subprocess.Popen:
    env = dict(os.environ, **(env or {}),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, *driver, *map(str, args)], env=env,
                            preexec_fn=preexec,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(db: Path) -> int:
    """Finished cells in the database (0 while it or its tables do not exist yet; a database busy
    with the writer's recovery after a kill is read again)."""
    for _ in range(500):
        if not db.exists():
            return 0
        try:
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
            try:
                return con.execute("SELECT COUNT(*) FROM cells WHERE status != 'pending'").fetchone()[0]
            finally:
                con.close()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return 0
            time.sleep(0.01)
    raise AssertionError(f"{db} stayed unreadable")


def kill_midway(args, db: Path, total: int, rng: random.Random, sig=signal.SIGKILL) -> int:
    """Start the sweep CLI held after the commit that reaches a random number of finished cells (at
    most half of ``total``, so that some are left), send ``sig`` there (SIGKILL; SIGINT is Ctrl-C:
    exit status 130) and return the finished cells at that point."""
    held = db.parent.with_name(db.parent.name + f".held-{rng.getrandbits(32)}")
    target = rng.randint(1, total // 2)
    proc = cli(held, target, *args, driver=(str(Path(__file__).with_name("held_sweep.py")),))
    try:
        deadline = time.monotonic() + 600
        while not held.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert held.exists(), f"the sweep was never held: {proc.communicate()[1][-500:]}"
        seen = int(held.read_text())
        assert target <= seen < total and finished(db) == seen
        os.kill(proc.pid, sig)
        code = proc.wait(timeout=60)
        assert code == (130 if sig == signal.SIGINT else -signal.SIGKILL), proc.communicate()[1][-500:]
        con = sqlite3.connect(db, timeout=30)
        try:
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            con.close()
        return seen
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        held.unlink(missing_ok=True)


@pytest.fixture
def kill():
    return kill_midway


@pytest.fixture
def run_cli():
    def run(*args):
        proc = cli(*args)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-1000:]
        return out
    return run


@pytest.fixture
def launch():
    """The sweep CLI in a subprocess (:func:`cli`), and the default child setup (Ctrl-C restored)."""
    return cli, ctrl_c_default
