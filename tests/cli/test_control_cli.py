"""`fedbound control plan`: JSON keys, agreement with the library, exit status 2 on bad input."""
import json

import pytest

from fedbound.cli.main import main
from fedbound.control import ControlProblem, load_spec, plan

NET = {"subnets": [{"m": 10, "E": 42.0, "E_d2d": 0.4}, {"m": 8, "E": 90.0, "E_d2d": 0.9},
                   {"m": 12, "E": 5.0, "E_d2d": 0.05}]}


def write(tmp_path, data, name="net.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def test_plan_json(tmp_path, capsys):
    path = write(tmp_path, NET)
    assert main(["control", "plan", "--spec", path, "--H", "0.02", "--lambdas", "1,0.1,1e-5",
                 "--K-cap", "500", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("K", "h", "p", "objective", "lower_bound", "beta", "energy_per_round", "gap",
                "continuous", "certificate"):
        assert key in out
    assert set(out["continuous"]) >= {"K", "p", "u"}
    want = plan(ControlProblem(load_spec(path), H=0.02, K_cap=500))
    assert out["K"] == want.K and out["h"] == list(want.h)
    assert out["objective"] == pytest.approx(want.objective, rel=1e-12)
    assert out["lower_bound"] <= out["objective"] * (1 + 1e-6)


def test_plan_text_and_variants(tmp_path, capsys):
    path = write(tmp_path, NET)
    assert main(["control", "plan", "--spec", path, "--variant", "cor1", "--method", "reduced"]) == 0
    text = capsys.readouterr().out
    assert "K (D2D rounds)" in text and "certificate" in text and "lower bound" in text


@pytest.mark.parametrize("spec, extra", [
    ({"subnets": [{"m": 0, "E": 1.0, "E_d2d": 0.1}]}, []),               # m_s < 1
    ({"subnets": [{"m": 2.5, "E": 1.0, "E_d2d": 0.1}]}, []),             # non-integer m_s
    ({"subnets": [{"m": 3, "E": -1.0, "E_d2d": 0.1}]}, []),              # negative cost
    ({"subnets": [{"m": 3, "E": 1.0, "E_d2d": -0.1}]}, []),
    ({"subnets": [{"m": 3, "E": 1.0}]}, []),                             # missing key
    ({"nets": []}, []),
    (NET, ["--K-cap", "0"]),                                              # K_cap < 1
    (NET, ["--lambdas", "1,0,1e-5"]),                                    # lambdas not positive
    (NET, ["--lambdas", "1,0.1"]),
    (NET, ["--lambdas", "a,b,c"]),
    (NET, ["--H", "-1"]),
    (NET, ["--variant", "static", "--H", "0.5"]),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, spec, extra):
    code = main(["control", "plan", "--spec", write(tmp_path, spec), "--json", *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("fedbound: error: ") and err.count("\n") == 1


def test_usage_errors_exit_2(tmp_path, capsys):
    for argv in (["control", "plan", "--spec", write(tmp_path, NET), "--K-cap", "2.5"],
                 ["control", "plan"], ["control", "plan", "--spec", "x.json", "--variant", "nope"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
    assert main(["control", "plan", "--spec", str(tmp_path / "missing.json")]) == 2


def test_the_old_kcap_flag_still_works_and_warns(tmp_path, capsys, monkeypatch):
    """``--kcap`` is ``--K-cap`` (ControlProblem(K_cap=) in Python); the old flag warns once and
    plans the same."""
    from fedbound import deprecation

    monkeypatch.setattr(deprecation, "_WARNED", set())
    spec = write(tmp_path, NET)
    assert main(["control", "plan", "--spec", spec, "--K-cap", "7", "--json"]) == 0
    new = capsys.readouterr()
    assert main(["control", "plan", "--spec", spec, "--kcap", "7", "--json"]) == 0
    old = capsys.readouterr()
    new_plan, old_plan = json.loads(new.out), json.loads(old.out)
    assert {k: new_plan[k] for k in ("K", "h", "objective")} == {k: old_plan[k] for k in ("K", "h", "objective")}
    assert old_plan["K"] <= 7
    assert "--kcap is deprecated; use --K-cap" in old.err and not new.err


def test_plan_names_the_caps_it_sits_on(tmp_path, capsys):
    """The README's network: K = K_cap and every device sampled, said in the text and the JSON."""
    path = write(tmp_path, {"subnets": [{"m": 10, "E": 42.0, "E_d2d": 0.4}, {"m": 10, "E": 17.0, "E_d2d": 0.2},
                                        {"m": 10, "E": 80.0, "E_d2d": 1.0}]})
    assert main(["control", "plan", "--spec", path]) == 0
    out = capsys.readouterr().out
    assert "active limits (the optimum sits on them):" in out
    assert "K <= K_cap: K sits on its cap K_cap = 49" in out and "every device sampled" in out
    assert main(["control", "plan", "--spec", path, "--K-cap", "500", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in data["active_constraints"]] == ["K <= K_cap", "every device sampled"]
    assert data["active_constraints"][0]["where"] == "K = K_cap = 500"
