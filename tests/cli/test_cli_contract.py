"""The CLI contract of issue 8: exit 0 / 2 (one line) / 130 (Ctrl-C, one line) / 1 (internal error,
one line asking for a bug report, traceback only with FEDBOUND_DEBUG=1); runs interrupted by SIGINT
or SIGKILL leave no output or a folder marked incomplete, which a rerun refuses without
--overwrite."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fedbound
from fedbound.cli import network_cmd
from fedbound.cli.main import main
from fedbound.outputs import STATUS_FILE, status

ROOT = Path(fedbound.__file__).resolve().parent.parent
LONG_RUN = ["run", "sdgt", "--task", "quadratic", "--n", "6", "--d", "4", "--subnets", "2",
            "--rounds", "2000000", "--lr", "0.01"]


def fedbound_process(*argv, **env):
    return subprocess.Popen([sys.executable, "-m", "fedbound", *argv], cwd=ROOT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                            env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(path: Path, proc, timeout: float = 120.0) -> None:
    """Wait until ``path`` exists (the run has started its main loop), then a little longer."""
    start = time.monotonic()
    while not path.exists():
        assert proc.poll() is None, f"fedbound exited early: {proc.communicate()}"
        assert time.monotonic() - start < timeout, "the run never started"
        time.sleep(0.05)
    time.sleep(1.0)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("fedbound:")]


def test_sigint_exits_130_with_one_line_and_leaves_an_incomplete_folder(tmp_path):
    out = tmp_path / "run"
    proc = fedbound_process(*LONG_RUN, "--out", str(out))
    wait_for(out / STATUS_FILE, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err and error_lines(err) == ["fedbound: interrupted"]
    assert status(out) == "incomplete"
    assert sorted(p.name for p in out.iterdir()) == [STATUS_FILE]   # no file that looks complete
    assert main([*LONG_RUN[:-4], "--rounds", "2", "--out", str(out)]) == 2   # refused without --overwrite


def test_a_reader_that_closes_the_pipe_ends_the_command_quietly():
    """`fedbound list --json | head -c 10`: exit 141 (as a tool killed by SIGPIPE), nothing on
    stderr (it was an internal error, a BrokenPipeError)."""
    proc = fedbound_process("list", "--json")
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 141 and err == ""


def test_sigkill_leaves_an_incomplete_folder_that_reruns_refuse(tmp_path, capsys):
    out = tmp_path / "run"
    proc = fedbound_process(*LONG_RUN, "--out", str(out))
    wait_for(out / STATUS_FILE, proc)
    proc.kill()
    proc.communicate(timeout=60)
    assert status(out) == "incomplete"
    assert not [p for p in out.iterdir() if p.name != STATUS_FILE and not p.name.startswith(".")]
    short = [*LONG_RUN[:-4], "--rounds", "2", "--lr", "0.01", "--out", str(out)]
    assert main(short) == 2
    err = capsys.readouterr().err
    assert error_lines(err) == [line for line in err.splitlines() if line] and len(error_lines(err)) == 1
    assert "incomplete fedbound output" in err and "--overwrite" in err
    assert main([*short, "--overwrite"]) == 0
    assert status(out) == "complete"
    assert {"metrics.csv", "metrics.json", "plot.png", "x_final.npy"} <= {p.name for p in out.iterdir()}
    assert not [p for p in out.iterdir() if p.name.startswith(".")]   # no temporary file left


def test_complete_folder_is_refused_then_overwritten(tmp_path, capsys):
    out = tmp_path / "o"
    argv = ["run", "gt", "--rounds", "2", "--out", str(out), "--json"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert status(out) == "complete" and Path(first["files"]["csv"]).exists()
    assert main(argv) == 2
    assert "holds a complete fedbound output" in capsys.readouterr().err
    assert main([*argv, "--overwrite"]) == 0 and status(out) == "complete"


def test_interrupt_and_internal_error_in_process(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    def broken(args):
        raise RuntimeError("boom\nsecond line")

    argv = ["network", "info", "--topology", "ring", "--n", "4"]
    monkeypatch.setattr(network_cmd, "run_info", interrupted)
    assert main(argv) == 130
    assert capsys.readouterr().err == "fedbound: interrupted\n"
    monkeypatch.setattr(network_cmd, "run_info", broken)
    monkeypatch.delenv("FEDBOUND_DEBUG", raising=False)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: RuntimeError: boom second line" in err
    assert "bug" in err and "FEDBOUND_DEBUG=1" in err and "Traceback" not in err
    monkeypatch.setenv("FEDBOUND_DEBUG", "1")
    assert main(argv) == 1
    assert "Traceback" in capsys.readouterr().err


@pytest.mark.parametrize("argv,message", [
    (["network", "info", "--topology", "ring", "--n", "4", "--self-weight", "nan"],
     "argument --self-weight: must be a finite number, got 'nan'"),
    (["run", "gt", "--lr", "inf"], "--lr must be finite and > 0, got inf"),
    (["network", "info", "--topology", "ring", "--n", "4", "--seed", "-1"], "seed must be an integer in [0, 2**63), got -1"),
    (["network", "info", "--topology", "ring", "--n", "4", "--seed", str(2 ** 70)], "seed must be an integer in [0, 2**63), got 1180591620717411303424"),
    (["network", "info", "--topology", "ring", "--n", "300000"], "needs about"),
])
def test_bad_input_is_one_line_exit_2(argv, message, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:     # argparse's usage errors exit from inside main
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_subprocess_exit_codes_and_strict_json(tmp_path):
    ok = subprocess.run([sys.executable, "-m", "fedbound", "network", "info", "--topology", "ring",
                         "--n", "5", "--json"], cwd=ROOT, capture_output=True, text=True,
                        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert ok.returncode == 0
    json.loads(ok.stdout, parse_constant=lambda t: pytest.fail(f"non-strict JSON token {t}"))
    bad = tmp_path / "spec.json"
    bad.write_bytes(b'{"subnets": [{"m": 3, "topology": "ring", "x": "\xff"}]}')
    result = subprocess.run([sys.executable, "-m", "fedbound", "network", "info", "--spec", str(bad)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "not UTF-8" in result.stderr and "Traceback" not in result.stderr
