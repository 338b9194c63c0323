"""``fedbound network info``."""
import json
import subprocess
import sys

import pytest

from fedbound.cli.main import main
from fedbound.network import Network, rho_tight, ring_weights


def run(capsys, *argv):
    code = main(["network", "info", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_module_entry_point_ring50_json():
    result = subprocess.run([sys.executable, "-m", "fedbound", "network", "info", "--topology", "ring",
                             "--n", "50", "--json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert round(report["spectral_norm"], 4) == 0.9947
    assert report["rho_tight"] == pytest.approx(1 - report["spectral_norm"] ** 2, abs=1e-15)
    assert {"spectral_gap", "topology", "n", "doubly_stochastic", "connected"} <= report.keys()
    assert report["doubly_stochastic"] and report["connected"] and report["n"] == 50


def test_module_entry_point_bad_input_one_line_exit_2():
    result = subprocess.run([sys.executable, "-m", "fedbound", "network", "info", "--topology", "ring",
                             "--n", "0"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "--n must be >= 1, got 0" in result.stderr


def test_single_topology_options_and_table(capsys):
    code, out, _ = run(capsys, "--topology", "ring", "--n", "10", "--self-weight", "0.5", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["options"] == {"self_weight": 0.5}
    assert report["rho_tight"] == rho_tight(ring_weights(10, self_weight=0.5))
    code, out, _ = run(capsys, "--topology", "ring", "--n", "10")
    assert code == 0 and "0.872678" in out and "connected: yes" in out


def test_network_of_subnets(capsys):
    code, out, _ = run(capsys, "--topology", "erdos_renyi", "--prob", "0.5", "--subnets", "2",
                       "--per-subnet", "6,9", "--seed", "3", "--json")
    assert code == 0
    report = json.loads(out)
    expected = Network.from_topology("erdos_renyi", 2, [6, 9], seed=3, prob=0.5)
    assert [s["m"] for s in report["subnets"]] == [6, 9]
    assert [s["rho_tight"] for s in report["subnets"]] == expected.rho.tolist()
    assert report["q"] == expected.q
    assert {"m", "rho_tight", "spectral_norm", "spectral_gap"} <= report["subnets"][0].keys()


def test_rgg(capsys):
    code, out, _ = run(capsys, "--rgg", "--subnets", "3", "--per-subnet", "5", "--radius-min", "1",
                       "--radius-max", "3", "--seed", "4", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["q"] == Network.random_geometric(3, 5, (1.0, 3.0), seed=4).q
    assert report["radius_range"] == [1.0, 3.0] and len(report["subnets"]) == 3
    code, out, _ = run(capsys, "--rgg")  # SD-GT defaults: 3 subnets of 10, table output
    assert code == 0 and "q = min rho_tight = " in out and len(out.splitlines()) == 6


def test_spec_file(tmp_path, capsys):
    spec = tmp_path / "net.json"
    spec.write_text(json.dumps({"subnets": [{"m": 10, "topology": "ring", "E": 1.0},
                                            {"W": [[0.5, 0.5], [0.5, 0.5]]}]}))
    code, out, _ = run(capsys, "--spec", str(spec), "--json")
    assert code == 0
    report = json.loads(out)
    assert [s["m"] for s in report["subnets"]] == [10, 2]
    assert round(report["subnets"][0]["spectral_norm"], 4) == 0.8727


@pytest.mark.parametrize("argv, message", [
    (["--topology", "ring", "--n", "0"], "--n must be >= 1, got 0"),
    (["--topology", "moebius", "--n", "5"], "unknown topology 'moebius'"),
    (["--topology", "erdos_renyi", "--n", "8", "--prob", "1.5"], "prob must be in (0, 1], got 1.5"),
    (["--topology", "erdos_renyi", "--n", "8", "--prob", "0"], "prob must be in (0, 1], got 0"),
    (["--topology", "ring", "--n", "5", "--prob", "0.5"], "has no option 'prob'"),
    (["--topology", "ring", "--n", "5", "--subnets", "2"], "--n describes one topology"),
    (["--topology", "ring"], "--subnets S and --per-subnet m"),
    ([], "give --topology NAME"),
    (["--rgg", "--radius-min", "0.01", "--radius-max", "0.02", "--subnets", "1", "--per-subnet", "40"],
     "disconnected subnet"),
])
def test_bad_input_exit_2_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and err.startswith("fedbound: error: ")


def test_disconnected_spec_exit_2(tmp_path, capsys):
    spec = tmp_path / "bad.json"
    spec.write_text(json.dumps({"subnets": [{"W": [[1, 0, 0], [0, 0.5, 0.5], [0, 0.5, 0.5]]}]}))
    code, _, err = run(capsys, "--spec", str(spec))
    assert code == 2 and err.count("\n") == 1 and "must be connected" in err


def test_argparse_errors_exit_2_one_line(capsys):
    for argv in (["--topology", "ring", "--n", "x"], ["--per-subnet", "3,a"]):
        with pytest.raises(SystemExit) as info:
            main(["network", "info", *argv])
        assert info.value.code == 2
        assert capsys.readouterr().err.count("\n") == 1


def test_help(capsys):
    with pytest.raises(SystemExit) as info:
        main(["network", "info", "--help"])
    assert info.value.code == 0 and "--per-subnet" in capsys.readouterr().out
