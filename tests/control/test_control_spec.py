"""NET.json parsing and validation."""
import json

import numpy as np
import pytest

from fedbound.control import NetSpec, load_spec, spec_from_dict
from fedbound.errors import ValidationError


def test_round_trip(tmp_path):
    data = {"subnets": [{"m": 10, "E": 42.0, "E_d2d": 0.4}, {"m": 3, "E": 0, "E_d2d": 1}], "gamma": 0.01}
    path = tmp_path / "net.json"
    path.write_text(json.dumps(data))
    spec = load_spec(path)
    assert spec.S == 2 and spec.m.tolist() == [10, 3] and spec.gamma == 0.01
    assert spec.E.tolist() == [42.0, 0.0] and spec.E_d2d.tolist() == [0.4, 1.0]
    assert spec_from_dict(spec.to_dict()).to_dict() == spec.to_dict()
    with pytest.raises(ValueError):
        spec.m[0] = 5                                     # read-only arrays


@pytest.mark.parametrize("data, message", [
    ({"subnets": [{"m": 0, "E": 1, "E_d2d": 1}]}, r"subnets\[0\].m must be an integer in 1..30000, got 0"),
    ({"subnets": [{"m": 2.5, "E": 1, "E_d2d": 1}]}, r"subnets\[0\].m must be an integer"),
    ({"subnets": [{"m": True, "E": 1, "E_d2d": 1}]}, r"subnets\[0\].m must be an integer"),
    ({"subnets": [{"m": 3, "E": -1, "E_d2d": 1}]}, r"subnets\[0\].E must be finite and >= 0, got -1"),
    ({"subnets": [{"m": 3, "E": 1, "E_d2d": float("nan")}]}, r"subnets\[0\].E_d2d must be finite"),
    ({"subnets": [{"m": 3, "E": 1}]}, r"subnets\[0\] is missing key 'E_d2d'"),
    ({"subnets": [{"m": 3, "E": 1, "E_d2d": 1, "e": 2}]}, r"unknown key 'e' in subnets\[0\]"),
    ({"subnet": []}, r"unknown key 'subnet' in spec"),
    ({}, r"spec is missing key 'subnets'"),
    ({"subnets": []}, r"'subnets' must be a non-empty list"),
    ({"subnets": [{"m": 3, "E": 1, "E_d2d": 1}], "gamma": 0}, r"gamma must be a finite number > 0"),
    ([1, 2], r"spec must be a JSON object"),
])
def test_invalid_specs(data, message):
    with pytest.raises(ValidationError, match=message):
        spec_from_dict(data)


def test_integral_float_size_accepted_and_bad_file(tmp_path):
    assert spec_from_dict({"subnets": [{"m": 4.0, "E": 1, "E_d2d": 1}]}).m.dtype == np.int64
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValidationError, match="is not valid JSON"):
        load_spec(bad)
    with pytest.raises(ValidationError, match="cannot read spec file"):
        load_spec(tmp_path / "missing.json")
    with pytest.raises(ValidationError, match="same length"):
        NetSpec(m=[1, 2], E=[1.0], E_d2d=[1.0, 1.0])
