"""``fedbound run``: files written, final model, one-line errors with exit status 2."""
import csv
import json

import numpy as np
import pytest
import torch

from fedbound.cli.main import main

torch.set_num_threads(1)


def test_run_sdgt_on_user_data_writes_files(tmp_path, lsq_file, capsys):
    out = tmp_path / "out"
    code = main(["run", "sdgt", "--task", "lsq", "--data", str(lsq_file), "--subnets", "2",
                 "--topology", "ring", "--local-steps", "5", "--clients-per-subnet", "4", "--lr", "0.01",
                 "--rounds", "400", "--sigma", "0", "--float64", "--seed", "0", "--out", str(out)])
    assert code == 0
    captured = capsys.readouterr()
    assert "SD-GT" in captured.err                      # progress bar on stderr
    for name in ("metrics.csv", "metrics.json", "plot.png", "x_final.npy"):
        assert (out / name).stat().st_size > 0
    x_final = np.load(out / "x_final.npy")
    assert x_final.shape == (3,) and x_final.dtype == np.float64
    rows = list(csv.DictReader(open(out / "metrics.csv")))
    assert len(rows) == 401 and {"round", "loss", "loss_gap", "dist2", "grad_norm2"} <= set(rows[0])
    assert float(rows[-1]["dist2"]) < 1e-16           # SD-GT is exact with partial sampling
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["config"]["m"] == [4, 4] and metrics["config"]["clients_per_subnet"] == 4
    assert (out / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("algorithm, extra", [
    ("sd-fedavg", ["--rgg", "--subnets", "2", "--clients-per-subnet", "2"]),
    ("scaffold", ["--clients-per-subnet", "3"]),
    ("gt", ["--subnets", "1", "--topology", "complete"]),
    ("scaffnew", []),
])
def test_baselines_and_json_summary(tmp_path, capsys, algorithm, extra):
    code = main(["run", algorithm, "--task", "quadratic", "--n", "6", "--d", "3", "--rounds", "5",
                 "--sigma", "0.1", "--out", str(tmp_path), "--json", *extra])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["config"]["algorithm"] == algorithm and summary["config"]["dtype"] == "float32"
    assert np.load(tmp_path / "x_final.npy").shape == (3,)


def test_network_from_json_file(tmp_path, capsys):
    spec = tmp_path / "net.json"
    spec.write_text(json.dumps({"subnets": [{"m": 3, "topology": "ring"}, {"m": 3, "topology": "star"}]}))
    assert main(["run", "sdgt", "--d", "2", "--network", str(spec), "--rounds", "3",   # n from the file
                 "--out", str(tmp_path / "o"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["m"] == [3, 3]


@pytest.mark.parametrize("args, message", [
    (["--n", "10", "--subnets", "3"], "cannot be split evenly"),
    (["--clients-per-subnet", "5"], "--clients-per-subnet must be in [1, min_s m_s = 4]"),
    (["--lr", "-1"], "--lr must be > 0"),
    (["--lr", "0"], "--lr must be > 0"),
    (["--task", "lsq", "--data", "missing.npz"], "does not exist"),
    (["--rgg", "--topology", "ring"], "exclude each other"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, args, message):
    code = main(["run", "sdgt", "--rounds", "2", "--out", str(tmp_path), *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and len(err.splitlines()) == 1


def test_bad_npz_files(tmp_path, capsys):
    missing_key = tmp_path / "a.npz"
    np.savez(missing_key, A=np.zeros((2, 3, 2)))
    not_npz = tmp_path / "b.npz"
    not_npz.write_text("not an archive")
    wrong_shape = tmp_path / "c.npz"
    np.savez(wrong_shape, A=np.zeros((2, 3, 2)), y=np.zeros((2, 4)))
    for path, message in ((missing_key, "'y'"), (not_npz, "not a readable .npz"),
                          (wrong_shape, "shape")):
        code = main(["run", "sdgt", "--task", "lsq", "--data", str(path), "--subnets", "1",
                     "--out", str(tmp_path / "out")])
        err = capsys.readouterr().err.strip()
        assert code == 2 and message in err and len(err.splitlines()) == 1


def test_help(capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", "--help"])
    assert info.value.code == 0 and "--controller" in capsys.readouterr().out


def test_metrics_json_is_strict_when_the_optimum_is_unknown(tmp_path, capsys):
    """MLP: f* and x* unknown -> null in metrics.json, and the plot shows loss and gradient norm."""
    assert main(["run", "sdgt", "--task", "mlp-gmm", "--n", "6", "--d", "4", "--subnets", "2",
                 "--rounds", "2", "--out", str(tmp_path), "--json"]) == 0

    def reject(constant):
        raise ValueError(f"non-strict JSON constant {constant}")

    summary = json.loads(capsys.readouterr().out, parse_constant=reject)
    assert summary["final"]["loss_gap"] is None
    metrics = json.loads((tmp_path / "metrics.json").read_text(), parse_constant=reject)
    assert metrics["metrics"]["dist2"] == [None, None, None]


def test_summary_line_says_unknown_when_the_optimum_is_unknown(tmp_path, capsys):
    """The text summary says "unknown" for the gap and distance of a task without f* and x*, never
    "nan"; a task that knows them prints numbers."""
    assert main(["run", "sdgt", "--task", "mlp-gmm", "--n", "6", "--d", "4", "--subnets", "2",
                 "--rounds", "2", "--out", str(tmp_path / "mlp")]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert "f - f* unknown, ||x_g - x*||^2 unknown" in line and "nan" not in line
    assert main(["run", "fedavg", "--task", "lsq", "--n", "6", "--lr", "0.01", "--rounds", "2",
                 "--out", str(tmp_path / "lsq")]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert "unknown" not in line and "nan" not in line and "f - f* " in line


def test_summary_notes_a_run_that_grows_without_overflowing(tmp_path, capsys):
    """A run whose errors grow by a factor of 10^15 while its state stays finite (no DivergenceError)
    gets a note after its summary line naming the error and the factor; a converging run none."""
    assert main(["run", "fedavg", "--task", "lsq", "--lr", "10", "--rounds", "5", "--float64",
                 "--out", str(tmp_path / "grows")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("note: f - f* grew by a factor of 10^") and "the run diverges" in lines[1]
    assert main(["run", "fedavg", "--task", "lsq", "--lr", "0.01", "--rounds", "5", "--float64",
                 "--out", str(tmp_path / "converges")]) == 0
    assert "note:" not in capsys.readouterr().out


# ---- the FedOpt family (issue 9, "CLI for FedAvg") ------------------------------------------------
def numpy_fedavg(A, y, lr, K, rounds):
    """Full participation FedAvg on f_i = 1/(2m)||A_i x - y_i||^2, written plainly."""
    m = A.shape[1]
    x = np.zeros(A.shape[2])
    for _ in range(rounds):
        models = []
        for Ai, yi in zip(A, y):
            xi = x.copy()
            for _ in range(K):
                xi = xi - lr * Ai.T @ (Ai @ xi - yi) / m
            models.append(xi)
        x = np.mean(models, axis=0)
    return x


def fedavg_command(lsq_file, out, clients):
    return ["run", "fedavg", "--task", "lsq", "--data", str(lsq_file), "--clients-per-round",
            str(clients), "--local-steps", "3", "--lr", "0.05", "--rounds", "7", "--sigma", "0",
            "--float64", "--seed", "0", "--out", str(out)]


def test_fedavg_command_as_written_full_participation(tmp_path, lsq_file, capsys):
    assert main(fedavg_command(lsq_file, tmp_path / "o", 8)) == 0
    data = np.load(lsq_file)
    x_final = np.load(tmp_path / "o" / "x_final.npy")
    np.testing.assert_allclose(x_final, numpy_fedavg(data["A"], data["y"], 0.05, 3, 7), rtol=0, atol=1e-12)
    metrics = json.loads((tmp_path / "o" / "metrics.json").read_text())
    assert metrics["config"]["clients_per_round"] == 8 and metrics["config"]["local_steps"] == 3
    assert metrics["metrics"]["uploads"][-1] == 7 * 8
    assert metrics["metrics"]["gradient_evaluations"][-1] == 7 * 8 * 3


def test_fedavg_command_with_sampling_is_the_python_fedavg(tmp_path, lsq_file, capsys):
    from fedbound.algorithms import FedAvg, run
    from fedbound.tasks import LeastSquares

    assert main(fedavg_command(lsq_file, tmp_path / "o", 3)) == 0
    task = LeastSquares.from_npz(lsq_file)
    expected = run(FedAvg(task, lr=0.05, local_steps=3, clients_per_round=3, seed=0), 7).x_g[-1]
    assert np.array_equal(np.load(tmp_path / "o" / "x_final.npy"), expected.numpy())
    rows = list(csv.DictReader(open(tmp_path / "o" / "metrics.csv")))
    assert int(rows[-1]["uploads"]) == 7 * 3


@pytest.mark.parametrize("algorithm, extra", [
    ("fedprox", ["--proximal-mu", "0.1"]),
    ("fedavgm", ["--server-momentum", "0.9", "--server-lr", "0.5"]),
    ("fedadagrad", ["--server-lr", "0.05", "--tau", "1e-3"]),
    ("fedadam", ["--server-lr", "0.05", "--beta1", "0.9", "--beta2", "0.99", "--tau", "1e-3"]),
    ("fedyogi", ["--server-lr", "0.05", "--beta1", "0.8", "--beta2", "0.95"]),
])
def test_fedopt_algorithms_take_their_options(tmp_path, lsq_file, capsys, algorithm, extra):
    code = main(["run", algorithm, "--task", "lsq", "--data", str(lsq_file), "--clients-per-round", "4",
                 "--local-steps", "2", "--lr", "0.05", "--rounds", "3", "--float64", "--out",
                 str(tmp_path / "out"), "--json", *extra])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    flag = extra[0][2:].replace("-", "_")
    assert summary["config"]["algorithm"] == algorithm and summary["config"][flag] == float(extra[1])


@pytest.mark.parametrize("args, message", [
    (["fedavg", "--lr", "0.1", "--gamma", "0.1"], "--gamma does not apply to fedavg"),
    (["sdgt", "--server-lr", "0.1"], "--server-lr does not apply to sdgt"),
    (["fedavg"], "fedavg needs --lr"),
    (["fedprox", "--lr", "0.1"], "fedprox needs --proximal-mu"),
    (["fedavg", "--lr", "-1"], "--lr must be > 0, got -1"),
    (["fedavg", "--lr", "0.1", "--clients-per-round", "13"], "clients_per_round must be an integer in [1, 12]"),
    (["fedavgm", "--lr", "0.1", "--server-momentum", "1"], "--server-momentum must be in [0, 1)"),
    (["fedavg", "--lr", "0.1", "--subnets", "2"], "fedavg takes no network"),
    (["gt", "--local-steps", "2"], "--local-steps does not apply to gt"),
    (["gt", "--clients-per-subnet", "2"], "--clients-per-subnet does not apply to gt"),
    (["fedavg", "--lr", "0.1", "--weights", "examples"], "--weights does not apply to --task quadratic"),
])
def test_fedopt_bad_input_exits_2_with_one_line(tmp_path, capsys, args, message):
    code = main(["run", *args, "--rounds", "1", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and len(err.splitlines()) == 1, err


def test_example_weights_on_logistic(tmp_path, capsys):
    assert main(["run", "fedavg", "--task", "logistic", "--n", "5", "--d", "3", "--lr", "0.1",
                 "--weights", "examples", "--rounds", "2", "--out", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["weights"] == "examples"


def test_old_flags_still_work_and_warn_once_each(tmp_path, capsys):
    """--gamma, --K and --sample (issue 20 renamed them --lr, --local-steps, --clients-per-subnet)
    give the same run as the new flags, with one warning line each."""
    new = ["run", "sdgt", "--rounds", "3", "--lr", "0.02", "--local-steps", "2",
           "--clients-per-subnet", "2", "--float64", "--json"]
    old = ["run", "sdgt", "--rounds", "3", "--gamma", "0.02", "--K", "2", "--sample", "2",
           "--float64", "--json"]
    assert main([*new, "--out", str(tmp_path / "new")]) == 0
    fresh = json.loads(capsys.readouterr().out)
    assert main([*old, "--out", str(tmp_path / "old")]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["final"] == fresh["final"]
    warnings = [line for line in captured.err.splitlines() if line.startswith("fedbound: warning:")]
    for flag, new_flag in (("--gamma", "--lr"), ("--K", "--local-steps"), ("--sample", "--clients-per-subnet")):
        assert sum(flag + " is deprecated; use " + new_flag in w for w in warnings) <= 1
    assert main(["run", "sdgt", "--lr", "0.1", "--gamma", "0.1", "--out", str(tmp_path / "both")]) == 2
    assert "give --lr or its old spelling --gamma, not both" in capsys.readouterr().err


def test_eval_every_writes_the_metrics_on_its_schedule(tmp_path, capsys):
    out = tmp_path / "every"
    assert main(["run", "fedavg", "--lr", "0.05", "--task", "lsq", "--n", "6", "--rounds", "7",
                 "--eval-every", "3", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["config"]["eval_every"] == 3 and np.isfinite(summary["final"]["loss"])
    loss = json.loads((out / "metrics.json").read_text())["metrics"]["loss"]
    assert [v is not None for v in loss] == [True, False, False, True, False, False, True, True]
    assert main(["run", "fedavg", "--lr", "0.05", "--eval-every", "0", "--out", str(tmp_path / "x")]) == 2
    assert "--eval-every must be an integer >= 1, got 0" in capsys.readouterr().err
