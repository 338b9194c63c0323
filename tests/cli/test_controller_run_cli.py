"""`fedbound run sdgt --controller SPEC.json`: files, agreement with the library, exit 2 on bad input."""
import csv
import json

import pytest

from fedbound.algorithms import SDGT, EnergyModel
from fedbound.cli.main import build_parser, main
from fedbound.cli.problem import problem_from
from fedbound.network.build import build_network
from fedbound.control import ClosedLoop, load_spec

NET = {"subnets": [{"m": 4, "E": 30.0, "E_d2d": 0.3}, {"m": 4, "E": 70.0, "E_d2d": 0.7}]}
BASE = ["run", "sdgt", "--task", "quadratic", "--float64", "--rounds", "5", "--K-cap", "8",
        "--lambdas", "0.01,0.1,2e-3", "--lr", "0.02", "--seed", "3"]


def write(tmp_path, data, name="net.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def test_closed_loop_run_writes_log_and_plot_and_matches_the_library(tmp_path, capsys):
    spec_path = write(tmp_path, NET)
    argv = BASE + ["--controller", spec_path, "--out", str(tmp_path / "out"), "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    files = out["files"]
    assert (tmp_path / "out" / "controller.png").stat().st_size > 0
    with open(files["csv"]) as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["t"]) for r in rows] == list(range(6))
    assert {"K", "h_0", "h_1", "H_hat", "energy", "thm5_corrected_lower", "thm5_printed_upper",
            "K_root", "corrected_contains_root"} <= set(rows[0])
    logged = json.loads((tmp_path / "out" / "controller.json").read_text())
    assert logged["theorem5"]["control_steps"] == 5
    assert out["theorem5"] == logged["theorem5"]
    # the same run through the library
    args = build_parser().parse_args(argv)
    spec = load_spec(spec_path)
    problem = problem_from(args, n=8)
    task = problem.task
    alg = SDGT(task, build_network(8, default_subnets=spec.S, **problem.network_options), lr=0.02, local_steps=1, seed=3,
               energy=EnergyModel(spec.E, spec.E_d2d))
    traj = ClosedLoop(alg, spec, (0.01, 0.1, 2e-3), 8).run(5)
    assert [int(r["K"]) for r in rows] == traj.column("K").tolist()
    assert [[int(r["h_0"]), int(r["h_1"])] for r in rows] == traj.column("h").tolist()
    assert [float(r["energy"]) for r in rows] == pytest.approx(traj.column("energy"), rel=1e-15)
    assert out["final"]["K_next"] == traj.logs[-1].K_next
    assert len(set(traj.column("K")[1:].tolist())) > 1


def test_text_summary(tmp_path, capsys):
    spec_path = write(tmp_path, NET)
    assert main(BASE + ["--controller", spec_path, "--control-every", "2",
                        "--out", str(tmp_path / "o")]) == 0
    text = capsys.readouterr().out
    assert "Algorithm 2" in text and "Theorem 5 over 2 control steps" in text


@pytest.mark.parametrize("spec, extra, message", [
    (NET, ["--clients-per-subnet", "2"], "--clients-per-subnet"),
    (NET, ["--control-every", "0"], "--control-every"),
    (NET, ["--K-cap", "0"], "K_cap"),
    (NET, ["--lambdas", "1,0,1"], "--lambdas"),
    (NET, ["--subnets", "4"], "subnet sizes"),
    ({**NET, "gamma": 0.5}, [], "gamma"),
    ({"subnets": [{"m": 4, "E": -1.0, "E_d2d": 0.1}]}, [], "E"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, spec, extra, message):
    argv = BASE + ["--controller", write(tmp_path, spec), "--out", str(tmp_path / "o")] + extra
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fedbound: error:") and message in err and "\n" not in err


def test_controller_needs_sdgt(tmp_path, capsys):
    argv = ["run", "sd-fedavg", "--controller", write(tmp_path, NET), "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    assert "SD-GT only" in capsys.readouterr().err


def test_missing_spec_file(tmp_path, capsys):
    assert main(BASE + ["--controller", str(tmp_path / "none.json")]) == 2
    assert "cannot read spec file" in capsys.readouterr().err
