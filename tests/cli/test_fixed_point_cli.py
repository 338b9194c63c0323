"""The FedNova CLI as written in issue 10: ``fedbound run fedavg|fedprox|fednova --task quadratic
--data FILE.npz --local-steps 1,3,5,8,2 ...`` writes x_final.npy, and ``fedbound fixed-point`` prints
the exact finite-eta fixed point that the run reaches; since issue 21 for any registered algorithm
with its own options (server momentum, control variates, SD-GT over a network), Adam-type and random
rounds refused with the reason."""
import json

import numpy as np
import pytest
import torch

from fedbound.cli.main import main

torch.set_num_threads(1)

STEPS = "1,3,5,8,2"


@pytest.fixture
def quad_file(tmp_path):
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((5, 3, 3)))
    H = np.einsum("nij,nj,nkj->nik", Q, rng.uniform(0.5, 2.0, (5, 3)), Q)
    path = tmp_path / "quad.npz"
    np.savez(path, H=H, b=rng.standard_normal((5, 3)), p=np.array([0.1, 0.2, 0.3, 0.2, 0.2]))
    return path


@pytest.mark.parametrize("algorithm, extra", [("fedavg", []), ("fedprox", ["--proximal-mu", "1"]),
                                              ("fednova", []), ("fednova", ["--momentum", "0.5"]),
                                              ("fedavgm", ["--server-momentum", "0.6"]),
                                              ("scaffold-fl", ["--server-lr", "0.8"]),
                                              ("fednova", ["--vr", "corrected"])])
def test_run_reaches_the_fixed_point_that_fixed_point_prints(tmp_path, quad_file, capsys, algorithm, extra):
    problem = ["--task", "quadratic", "--data", str(quad_file), "--local-steps", STEPS, "--lr", "0.1",
               "--participation", "full", "--float64", *extra]
    assert main(["fixed-point", algorithm, *problem, "--json"]) == 0
    fixed = json.loads(capsys.readouterr().out)
    assert fixed["converges"] and fixed["local_steps"] == [1, 3, 5, 8, 2]
    rounds = int(np.ceil(np.log(1e-13) / np.log(fixed["spectral_radius"]))) + 10
    out = tmp_path / "out"
    assert main(["run", algorithm, *problem, "--rounds", str(rounds), "--out", str(out)]) == 0
    x = np.load(out / "x_final.npy")
    assert np.linalg.norm(x - np.array(fixed["fixed_point"])) <= 1e-10
    assert fixed["distance_to_x_star"] == pytest.approx(
        float(np.linalg.norm(np.array(fixed["fixed_point"]) - np.array(fixed["x_star"]))))


def test_fixed_point_text_output_and_p_from_the_file(quad_file, capsys):
    assert main(["fixed-point", "fednova", "--task", "quadratic", "--data", str(quad_file),
                 "--local-steps", STEPS, "--lr", "0.05"]) == 0
    text = capsys.readouterr().out
    assert "spectral radius" in text and "distance to x*" in text


@pytest.mark.parametrize("argv, message", [
    (["fixed-point", "fedavg", "--local-steps", "1,3", "--lr", "0.1"], "per client"),
    (["fixed-point", "fedprox", "--local-steps", STEPS, "--lr", "0.1"], "--proximal-mu"),
    (["fixed-point", "fedavg", "--local-steps", STEPS, "--lr", "0.1", "--momentum", "0.5"], "momentum"),
    (["fixed-point", "fednova", "--local-steps", STEPS, "--lr", "0.1", "--participation", "uniform",
      "--clients-per-round", "2"], "--participation full"),
    (["fixed-point", "fedadam", "--local-steps", STEPS, "--lr", "0.1", "--participation", "full"],
     "not affine"),
    (["fixed-point", "fedavg", "--lr", "0.1", "--subnets", "1", "--topology", "ring"],
     "takes no network"),
    (["run", "fedavg", "--local-steps", "1,3", "--lr", "0.1", "--rounds", "2"], "per client"),
    (["run", "fedavg", "--local-steps", "1,x", "--lr", "0.1"], "comma-separated"),
])
def test_bad_input_is_one_line_and_status_2(tmp_path, quad_file, capsys, argv, message):
    try:   # argparse usage errors exit through SystemExit(2)
        code = main([*argv, "--task", "quadratic", "--data", str(quad_file)]
                    + (["--out", str(tmp_path / "o")] if argv[0] == "run" else []))
    except SystemExit as exit_:
        code = exit_.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_the_issue_example_and_the_hand_derived_fields(quad_file, capsys):
    """``fixed-point fedavgm --server-lr 1 --server-momentum 0.6 --participation full`` (and the
    run's --lr): the round map on x_g and the server's velocity; the hand-derived fields (lr -> 0
    limit, client weights, ||a_i||_1) are those of fedavg, fedprox and fednova only."""
    data = ["--task", "quadratic", "--data", str(quad_file), "--lr", "0.05", "--json"]
    assert main(["fixed-point", "fedavgm", "--server-lr", "1", "--server-momentum", "0.6",
                 "--participation", "full", *data]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["state_fields"] == ["x_g", "server.velocity"] and out["converges"]
    assert out["options"]["server_momentum"] == 0.6 and "limit_lr_to_0" not in out
    assert set(out) >= {"algorithm", "n", "d", "lr", "local_steps", "fixed_point", "x_star",
                        "distance_to_x_star", "spectral_radius", "converges"}
    assert main(["fixed-point", "fedavg", *data]) == 0
    assert {"limit_lr_to_0", "client_weights", "a_norm"} <= set(json.loads(capsys.readouterr().out))


def test_sdgt_over_a_network(capsys):
    """An algorithm that takes a network, with the network flags: SD-GT's fixed point is x* (of
    uniform weights: SD-GT averages with the subnet sizes), with the subnet sums of its trackers
    (d per subnet) factored out."""
    assert main(["fixed-point", "sdgt", "--task", "quadratic", "--n", "4", "--d", "3",
                 "--subnets", "1", "--topology", "ring", "--local-steps", "2", "--lr", "0.05",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["conserved"] == 3 and out["distance_to_x_star"] < 1e-10 and out["converges"]
    assert main(["fixed-point", "sdgt", "--task", "quadratic", "--n", "4", "--d", "3",
                 "--subnets", "1", "--topology", "ring", "--lr", "0.05"]) == 0
    assert "conserved directions factored out" in capsys.readouterr().out


def test_bad_quadratic_files(tmp_path, capsys):
    bad = tmp_path / "bad.npz"
    np.savez(bad, H=np.ones((2, 3, 3)), b=np.zeros((2, 3)), p=np.array([0.5, 0.6]))
    assert main(["fixed-point", "fedavg", "--data", str(bad), "--lr", "0.1"]) == 2
    assert "sum to 1" in capsys.readouterr().err
    np.savez(bad, H=np.ones((2, 3, 3)))
    assert main(["fixed-point", "fedavg", "--data", str(bad), "--lr", "0.1"]) == 2
    assert "'b'" in capsys.readouterr().err
    np.savez(bad, H=np.stack([np.diag([1.0, -1.0, 1.0])] * 2), b=np.zeros((2, 3)))
    assert main(["fixed-point", "fedavg", "--data", str(bad), "--lr", "0.1"]) == 2
    assert "PSD" in capsys.readouterr().err


def test_local_steps_single_count_still_works_for_fedopt(tmp_path, capsys):
    assert main(["run", "fedadam", "--task", "quadratic", "--n", "4", "--d", "2", "--local-steps", "5",
                 "--lr", "0.05", "--rounds", "3", "--out", str(tmp_path / "o"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["local_steps"] == 5
