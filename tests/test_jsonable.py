"""Every JSON the toolkit writes is strict: non-finite values become strings or null."""
import json
import math

import numpy as np
import pytest

from fedbound.cli.main import main
from fedbound.jsonable import jsonable


def strict(text: str):
    """json.loads that refuses NaN / Infinity tokens."""
    def refuse(token):
        raise ValueError(f"non-strict JSON token {token}")
    return json.loads(text, parse_constant=refuse)


class HasDict:
    def to_dict(self):
        return {"x": np.float64(math.inf)}


def test_conversions_and_both_conventions():
    value = {"a": np.array([1.0, np.nan, -np.inf]), 2: (np.int64(3), np.bool_(True)),
             "c": 1 + 2j, "o": HasDict(), "s": "text", "n": None}
    assert jsonable(value) == {"a": [1.0, "nan", "-inf"], "2": [3, True],
                               "c": {"re": 1.0, "im": 2.0}, "o": {"x": "inf"}, "s": "text",
                               "n": None}
    assert jsonable(value, nonfinite="null")["a"] == [1.0, None, None]
    json.dumps(jsonable(value), allow_nan=False)
    with pytest.raises(ValueError, match="nonfinite"):
        jsonable(1.0, nonfinite="drop")


def test_bound_json_is_strict_where_theorem3_has_no_floor(capsys):
    # gamma far above gamma_bar: rho(A) > 1, so ||(I - A)^{-1} b||_1 bounds nothing and is inf
    assert main(["bound", "sdgt.thm3", "--set", "L=1", "mu=0.1", "K=2", "p=0.64", "q=0.5", "n=30",
                 "sigma=1", "gamma=0.5", "T=100", "Lyap1=1", "--json"]) == 0
    data = strict(capsys.readouterr().out)
    assert data["spectral_radius"] > 1
    assert data["floor"] == "inf" and data["bound"] == "inf"
