"""Faults of a sweep's store, each made to happen at a chosen point (issue 23): a second sweep on
the same folder while the first is held after a commit, a full disk (the writer's file-size limit,
RLIMIT_FSIZE, makes the kernel refuse its writes: a real write error, no root needed), the folder
moved away mid-run, a corrupt and a foreign database. After each: a one-line error with exit status
2, the store passes ``PRAGMA integrity_check``, every finished cell is present exactly once, and a
rerun completes with the database of an undisturbed sweep."""
import json
import os
import resource
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from fedbound.sweep import load
from fedbound.sweep.store import DB_NAME

HELD_SWEEP = str(Path(__file__).with_name("held_sweep.py"))
cli = ctrl_c_default = None   # set from the launch fixture (tests/sweep/conftest.py)


@pytest.fixture(autouse=True)
def _launcher(launch):
    global cli, ctrl_c_default
    cli, ctrl_c_default = launch


def integrity(db: Path) -> tuple[int, int]:
    """(finished cells, rounds rows) of a store that passes integrity_check, each finished cell with
    its rounds exactly once."""
    con = sqlite3.connect(db, timeout=30)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finished = con.execute("SELECT COUNT(*) FROM cells WHERE status != 'pending'").fetchone()[0]
        keys = con.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM cells").fetchone()
        assert keys[0] == keys[1]
        orphan = con.execute("SELECT COUNT(*) FROM rounds r JOIN cells c ON r.cell = c.id "
                             "WHERE c.status = 'pending'").fetchone()[0]
        assert orphan == 0, "a pending cell has rounds: a batch was half written"
        rows = con.execute("SELECT COUNT(*) FROM rounds").fetchone()[0]
        return finished, rows
    finally:
        con.close()


def held(tmp_path, out, target, release):
    """A sweep of SPEC into ``out`` held after the commit reaching ``target`` finished cells until the
    file ``release`` exists; returns (process, the file saying it is held)."""
    flag = tmp_path / f"held-{out.name}"
    return flag, lambda spec_file: cli(flag, target, spec_file, "--out", out, driver=(HELD_SWEEP,),
                                       env={"HELD_RELEASE": str(release)})


def wait_for(path: Path, proc) -> None:
    deadline = time.monotonic() + 600
    while not path.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert path.exists(), f"the sweep was never held: {proc.communicate()[1][-500:]}"


def one_line_error(proc) -> str:
    out, err = proc.communicate(timeout=300)
    lines = [ln for ln in err.splitlines() if ln.startswith("fedbound: error")]
    assert proc.returncode == 2, err[-1000:]
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err[-1000:]
    return lines[0]


@pytest.mark.slow
def test_a_second_sweep_on_the_same_folder_is_refused_while_the_first_runs(tmp_path, spec_file,
                                                                           reference, run_cli, content):
    out, release = tmp_path / "shared", tmp_path / "release"
    flag, start = held(tmp_path, out, 2, release)
    first = start(spec_file)
    try:
        wait_for(flag, first)
        second = cli(spec_file, "--out", out)
        message = one_line_error(second)
        assert f"another `fedbound sweep` (pid {first.pid}) is writing" in message
        release.touch()
        _, err = first.communicate(timeout=300)
        assert first.returncode == 0, err[-1000:]
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    spec = load(spec_file)
    assert integrity(out / DB_NAME) == (len(spec.cells), len(spec.cells) * (spec.rounds + 1))
    assert content(out) == reference
    run_cli(spec_file, "--out", out)        # the lock went with the first process: a rerun works
    assert content(out) == reference


def _file_size_limit(nbytes: int):
    def limit():
        ctrl_c_default()
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return limit


@pytest.mark.slow
def test_a_full_disk_is_a_clear_error_and_the_store_resumes(tmp_path, spec_file, reference, run_cli,
                                                            content):
    out = tmp_path / "full"
    spec = load(spec_file)
    proc = cli(spec_file, "--out", out, preexec=_file_size_limit(96 * 1024))
    message = one_line_error(proc)
    assert "the store keeps every cell finished before" in message, message
    finished, rows = integrity(out / DB_NAME)
    assert 0 < finished < len(spec.cells) and rows == finished * (spec.rounds + 1)
    run_cli(spec_file, "--out", out)
    assert content(out) == reference


@pytest.mark.slow
def test_the_folder_moved_away_mid_run_is_a_clear_error_and_the_moved_store_resumes(
        tmp_path, spec_file, reference, run_cli, content):
    out, moved, release = tmp_path / "before", tmp_path / "after", tmp_path / "release-moved"
    flag, start = held(tmp_path, out, 3, release)
    proc = start(spec_file)
    try:
        wait_for(flag, proc)
        os.rename(out, moved)
        release.touch()
        message = one_line_error(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "vanished during the sweep" in message, message
    spec = load(spec_file)
    finished, rows = integrity(moved / DB_NAME)
    assert 3 <= finished < len(spec.cells) and rows == finished * (spec.rounds + 1)
    run_cli(spec_file, "--out", moved)
    assert content(moved) == reference


def test_a_corrupt_store_is_refused_and_left_as_it_is(tmp_path, spec_file, reference, run_cli):
    out = tmp_path / "corrupt"
    run_cli(spec_file, "--out", out)
    db = out / DB_NAME
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")   # every page in the file, none in the journal
    con.close()
    with open(db, "r+b") as fh:           # damage the b-tree pages after the header page
        fh.seek(4096)
        fh.write(b"\xff" * 8192)
    before = db.read_bytes()
    for args in ((spec_file, "--out", out), ("report", out)):
        message = one_line_error(cli(*args))
        assert ("is corrupt" in message or "malformed" in message) and "left as it is" in message, message
    assert db.read_bytes() == before


def test_a_foreign_database_is_refused_and_left_as_it_is(tmp_path, spec_file):
    out = tmp_path / "foreign"
    out.mkdir()
    con = sqlite3.connect(out / DB_NAME)
    con.execute("CREATE TABLE notes (text TEXT)")
    con.commit()
    con.close()
    before = (out / DB_NAME).read_bytes()
    message = one_line_error(cli("report", out))
    assert "is not a fedbound sweep database (its tables: notes)" in message, message
    assert (out / DB_NAME).read_bytes() == before


def test_a_store_with_foreign_cells_is_refused_not_resumed(tmp_path):
    """A store whose cells carry keys a sweep does not write (edited, or written by something else)
    is refused with a clear error, never resumed with exit 0 (issue 31)."""
    from fedbound.errors import ValidationError
    from fedbound.sweep import spec as S
    from fedbound.sweep.runner import run_sweep

    spec = S.parse({"algorithm": "fedavg", "task": {"name": "lsq", "n": 6, "d": 3, "rows": 5},
                    "rounds": 2, "grid": {"lr": 0.1, "seed": [0, 1]}})
    run_sweep(spec, tmp_path / "s")
    db = sqlite3.connect(tmp_path / "s" / DB_NAME)
    key = db.execute("SELECT key FROM cells ORDER BY id LIMIT 1").fetchone()[0]
    foreign = json.dumps({**json.loads(key), "foreign": 1}, sort_keys=True)
    db.execute("UPDATE cells SET key = ? WHERE key = ?", (foreign, key))
    db.execute("INSERT OR REPLACE INTO meta VALUES ('extended', '1')")
    db.commit()
    db.close()
    with pytest.raises(ValidationError, match="holds a cell this version of fedbound does not write"):
        run_sweep(spec, tmp_path / "s")
