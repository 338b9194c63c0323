"""``python lost_worker_driver.py SPEC.json OUT ADDRESS``: the sweep of SPEC into OUT on the Ray
cluster at ADDRESS with the plugin held_worker_plugin.py (copied beside OUT with its JSON naming
this process as the driver), which holds the first batch's worker; once it is held the worker is
killed with SIGKILL; prints the sweep's summary as JSON. A separate process, so that the plugin's
registration does not outlive the test."""
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

from fedbound.registry import request_plugin
from fedbound.sweep import load, run_sweep

spec_file, out, address = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
here = out.parent
plugin = here / "held_worker_plugin.py"
plugin.write_text(Path(__file__).with_name(plugin.name).read_text())
plugin.with_suffix(".json").write_text(json.dumps({"driver": os.getpid(), "folder": str(here)}))
request_plugin(str(plugin))   # loaded here and, named by the driver, in every Ray worker
done = {}
sweep = threading.Thread(target=lambda: done.update(s=run_sweep(load(spec_file), out, ray=True,
                                                                ray_address=address)))
sweep.start()
flag, deadline = here / "held", time.monotonic() + 600
while not (flag.exists() and flag.read_text()) and sweep.is_alive() and time.monotonic() < deadline:
    time.sleep(0.02)
if not flag.exists():
    sys.exit("no Ray worker was held")
os.kill(int(flag.read_text()), signal.SIGKILL)
sweep.join(timeout=300)
print(json.dumps(vars(done["s"])))
