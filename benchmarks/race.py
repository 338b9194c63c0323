"""What the races of benchmarks/bench_peers.py (least squares) and benchmarks/neural_race.py
(MLPs) share: the peers' labels and time limit, interleaved median timing, running a peer's
process group, and the printed figures."""
from __future__ import annotations

import contextlib
import os
import signal
import statistics
import subprocess
import time

import numpy as np

#: the peers' names as printed
LABEL = {"flower": "Flower", "pfl": "pfl"}
#: seconds a peer's run may take before its whole process group is killed
PEER_TIMEOUT_S = 600


def median_time(fn, repeats: int) -> float:
    return median_times([fn], repeats)[0]


def median_times(fns, repeats: int) -> list[float]:
    """The median seconds of each of ``fns``, timed in turn (interleaved, so that a change of
    the machine's load between repetitions hits all of them alike)."""
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, out in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def run_group(cmd: list[str], timeout: float, **kwargs) -> subprocess.CompletedProcess:
    """``subprocess.run`` in a process group of its own, the whole group killed on timeout (Ray
    starts helper processes that would outlive their driver)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kwargs)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def fmt_ms(seconds: float) -> str:
    return "n/a" if not np.isfinite(seconds) else f"{seconds * 1e3:.3f} ms"


def fmt_s(seconds: float) -> str:
    return "n/a" if seconds is None or not np.isfinite(seconds) else f"{seconds:.2f} s"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"
