"""What the races of benchmarks/bench_peers.py (least squares) and benchmarks/neural_race.py
(MLPs) share: the peers' labels and time limit, interleaved median timing, running a peer's
process group, and the printed figures."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import statistics
import subprocess
import tempfile
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


def peer_rounds(script: str, python: str, job: str, env: dict | None = None) -> tuple[dict, dict]:
    """Run a peer's ``script`` (benchmarks/peers/) with ``python`` on the job folder ``job``:
    (its RESULT line's JSON, its timing: ``per_round_s`` the median round after the first,
    ``rounds``, ``first_round_s``, ``to_first_round_s`` and ``startup_s`` from the process's start),
    or ({}, {"error": why}) where it timed out, could not start, failed or printed no readable
    RESULT line (benchmarks/peers/common.py writes it)."""
    t0 = time.time()
    try:
        res = run_group([python, script, job, repr(t0)], PEER_TIMEOUT_S, cwd=tempfile.gettempdir(), env=env)
    except subprocess.TimeoutExpired:
        return {}, {"error": f"timed out after {PEER_TIMEOUT_S} s"}
    except OSError as err:
        return {}, {"error": f"cannot start {python}: {err}"}
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("RESULT ")]
    if res.returncode != 0 or not lines:
        return {}, {"error": f"exit status {res.returncode}: " + " ".join((res.stderr or res.stdout).split())[-400:]}
    try:
        out = json.loads(lines[-1][len("RESULT "):])
    except json.JSONDecodeError as err:   # a line of 64 KiB cut by a log forwarder (seen once)
        return {}, {"error": f"its RESULT line does not parse ({len(lines[-1])} characters): {err}"}
    starts, ends = np.array(out["round_starts"]), np.array(out["round_ends"])
    durations = np.append(np.diff(starts), ends[-1] - starts[-1])
    per_round = float(np.median(durations[1:] if len(durations) > 1 else durations))
    return out, {"per_round_s": per_round, "rounds": int(len(starts)), "first_round_s": float(durations[0]),
                 "to_first_round_s": float(starts[0] - out["t_process"]),
                 "startup_s": float(starts[0] - out["t_process"] + durations[0] - per_round)}
