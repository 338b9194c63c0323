"""``python held_sweep.py HELD TARGET SWEEP-ARGS...``: ``fedbound sweep SWEEP-ARGS`` whose store is
held after the commit that brings it to at least TARGET finished cells while some are left: the
file HELD then names the finished cells, and the process waits there until it is killed (SIGKILL)
or interrupted (Ctrl-C: exit status 130), or, when $HELD_RELEASE names a file, until that file
exists (then the sweep goes on). A fault at a chosen point of a sweep, for the tests of
tests/sweep, instead of a kill raced against the clock."""
import os
import sys
import time
from pathlib import Path

from fedbound.cli.main import main
from fedbound.sweep.store import Store

HELD, TARGET = Path(sys.argv[1]), int(sys.argv[2])
_commit = Store.commit


def held_commit(self, results) -> None:
    _commit(self, results)
    done, total = self.db.execute("SELECT SUM(status != 'pending'), COUNT(*) FROM cells").fetchone()
    if TARGET <= done < total:
        partial = HELD.with_name(HELD.name + ".partial")
        partial.write_text(str(done))
        partial.replace(HELD)
        release = os.environ.get("HELD_RELEASE")
        while not (release and Path(release).exists()):
            time.sleep(0.05)


Store.commit = held_commit
sys.exit(main(["sweep", *sys.argv[3:]]))
