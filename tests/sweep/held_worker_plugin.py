"""A plugin for tests/sweep/test_ray.py: a Ray worker held at a chosen point. Copied by the test
beside a JSON file of the same name ({"driver": pid, "folder": path}): in a process other than the
driver, the first batch of a sweep writes its pid to the file FOLDER/held and waits there until it
is killed; the retry (the file exists) computes as usual. The plugin registers the task preset
``held-worker-noop`` (a plugin registers something)."""
import json
import os
import time
from pathlib import Path

from fedbound import extend
from fedbound.sweep import runner
from fedbound.tasks.registry import TaskSpec

_run_cells = runner.run_cells
CONFIG = json.loads(Path(__file__).with_suffix(".json").read_text())


def held_run_cells(algs, rounds):
    if os.getpid() != CONFIG["driver"]:
        flag = Path(CONFIG["folder"]) / "held"
        try:
            fd = os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY)   # the first batch only
        except FileExistsError:
            pass
        else:
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            while True:
                time.sleep(0.05)
    return _run_cells(algs, rounds)


runner.run_cells = held_run_cells
extend.register_task(TaskSpec("held-worker-noop", lambda **options: None, "a test plugin's marker"))
