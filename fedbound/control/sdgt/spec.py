"""The network description the SD-GT controller plans for (the ``NET.json`` spec).

Per subnet s: its size m_s (clients), the device-server cost E_s of pulling and pushing the
variables of the whole subnet, and the cost E_s^{D2D} of one D2D round in the subnet
(SD-GT, seed 003, Sec. IV-D [L406-L408]; the per-round cost is sum_s (1 - beta_s) E_s +
K sum_s E_s^{D2D}). Optionally the step size gamma, which enters the estimate H-hat (30) [L423].

JSON form::

    {"subnets": [{"m": 10, "E": 42.0, "E_d2d": 0.4}, ...], "gamma": 0.01}

Costs may be zero (a free link) but not negative; sizes are integers >= 1.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fedbound.argtypes import NonNegativeArray, Positive
from fedbound.errors import ValidationError, require

#: largest subnet size; keeps the exact integer comparisons of :mod:`fedbound.control.sdgt.integer`
#: (h (2m - h) m0^2 versus h0 (2m0 - h0) m^2) inside int64
MAX_SUBNET_SIZE = 30000

_SUBNET_KEYS = ("m", "E", "E_d2d")
_TOP_KEYS = ("subnets", "gamma")


def _finite_nonnegative(value, name: str) -> float:
    require(isinstance(value, (int, float)) and not isinstance(value, bool),
            f"{name} must be a number, got {value!r}")
    require(math.isfinite(value) and value >= 0, f"{name} must be finite and >= 0, got {value!r}")
    return float(value)


def _subnet_size(value, name: str) -> int:
    integral = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    require(not isinstance(value, bool) and integral,
            f"{name} must be an integer in 1..{MAX_SUBNET_SIZE}, got {value!r}")
    require(1 <= value <= MAX_SUBNET_SIZE,
            f"{name} must be an integer in 1..{MAX_SUBNET_SIZE}, got {value!r}")
    return int(value)


@dataclass(frozen=True, eq=False)
class NetSpec:
    """Subnet sizes ``m`` (int array, shape (S,)), DS costs ``E`` and D2D costs ``E_d2d`` (float
    arrays, shape (S,)), and an optional step size ``gamma``. Arrays are read-only."""

    m: np.ndarray
    E: NonNegativeArray
    E_d2d: NonNegativeArray
    gamma: Positive | None = None

    def __post_init__(self):
        m = [_subnet_size(v, f"subnets[{i}].m") for i, v in enumerate(np.ravel(self.m).tolist())]
        E = [_finite_nonnegative(v, f"subnets[{i}].E") for i, v in enumerate(np.ravel(self.E).tolist())]
        D = [_finite_nonnegative(v, f"subnets[{i}].E_d2d")
             for i, v in enumerate(np.ravel(self.E_d2d).tolist())]
        require(len(m) >= 1, "a spec needs at least 1 subnet, got 0")
        require(len(m) == len(E) == len(D),
                f"m, E and E_d2d must have the same length, got {len(m)}, {len(E)}, {len(D)}")
        if self.gamma is not None:
            g = self.gamma
            require(isinstance(g, (int, float)) and not isinstance(g, bool)
                    and math.isfinite(g) and g > 0, f"gamma must be a finite number > 0, got {g!r}")
            object.__setattr__(self, "gamma", float(g))
        for name, values, dtype in (("m", m, np.int64), ("E", E, float), ("E_d2d", D, float)):
            arr = np.array(values, dtype=dtype)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def S(self) -> int:
        """Number of subnets."""
        return int(self.m.size)

    def to_dict(self) -> dict:
        out = {"subnets": [{"m": int(m), "E": float(e), "E_d2d": float(d)}
                           for m, e, d in zip(self.m, self.E, self.E_d2d)]}
        if self.gamma is not None:
            out["gamma"] = self.gamma
        return out


def spec_from_dict(data: object) -> NetSpec:
    """Validate a decoded NET.json object and build a :class:`NetSpec` (one-line errors)."""
    require(isinstance(data, dict), f"spec must be a JSON object, got {type(data).__name__}")
    for key in sorted(set(data) - set(_TOP_KEYS)):
        raise ValidationError(f"unknown key {key!r} in spec; valid keys: {', '.join(_TOP_KEYS)}")
    require("subnets" in data, "spec is missing key 'subnets'")
    subnets = data["subnets"]
    require(isinstance(subnets, list) and len(subnets) >= 1,
            f"spec 'subnets' must be a non-empty list, got {subnets!r}")
    columns = {key: [] for key in _SUBNET_KEYS}
    for i, entry in enumerate(subnets):
        require(isinstance(entry, dict), f"subnets[{i}] must be an object, got {entry!r}")
        for key in sorted(set(entry) - set(_SUBNET_KEYS)):
            raise ValidationError(f"unknown key {key!r} in subnets[{i}]; "
                                  f"valid keys: {', '.join(_SUBNET_KEYS)}")
        for key in _SUBNET_KEYS:
            require(key in entry, f"subnets[{i}] is missing key {key!r}")
            value = entry[key]
            if key == "m":
                value = _subnet_size(value, f"subnets[{i}].m")
            else:
                value = _finite_nonnegative(value, f"subnets[{i}].{key}")
            columns[key].append(value)
    return NetSpec(m=columns["m"], E=columns["E"], E_d2d=columns["E_d2d"], gamma=data.get("gamma"))


def load_spec(path: str | os.PathLike) -> NetSpec:
    """Read and validate a NET.json file."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ValidationError(f"cannot read spec file {str(path)!r}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"spec file {str(path)!r} is not valid JSON: {exc.msg} at line "
                              f"{exc.lineno} column {exc.colno}") from None
    return spec_from_dict(data)
