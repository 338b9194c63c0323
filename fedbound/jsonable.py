"""JSON-ready values for every ``--json`` output and JSON file: strict JSON, no NaN/Infinity tokens.

:func:`jsonable` turns numpy arrays and scalars into lists and numbers, recurses into dicts, lists
and tuples, uses an object's ``to_dict()`` where it has one (Estimate, SlopeFit, ...), and writes a
complex number as ``{"re": ..., "im": ...}``. A non-finite float becomes the string ``"inf"``,
``"-inf"`` or ``"nan"`` (``nonfinite="string"``: an infinite floor or ratio is information), or
``null`` (``nonfinite="null"``: for values that are unknown, such as f - f* without f*), or ``null``
named (``nonfinite="named"``: the object holding it gains ``"nonfinite": {field: "nan" | "inf" |
"-inf"}``, ``field[i]`` for an entry of a list field, so that strict JSON still says what the value was).
"""
from __future__ import annotations

import math

import numpy as np

from fedbound import validate
from fedbound.errors import require

NONFINITE = ("string", "null", "named")


def jsonable(value: object, nonfinite: str = "string"):
    """``value`` as nested Python lists, dicts, numbers, strings, bools and None (module doc)."""
    validate.one_of("nonfinite", nonfinite, NONFINITE)
    if isinstance(value, dict):
        if nonfinite == "named":
            return _named(value)
        return {str(k): jsonable(v, nonfinite) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, nonfinite) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist(), nonfinite)
    if hasattr(value, "to_dict"):
        return jsonable(value.to_dict(), nonfinite)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (complex, np.complexfloating)):
        return {"re": jsonable(float(value.real), nonfinite),
                "im": jsonable(float(value.imag), nonfinite)}
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isfinite(v):
            return v
        return str(v) if nonfinite == "string" else None
    return value



def _named(value: dict) -> dict:
    """An object for ``nonfinite="named"`` (module doc): its non-finite numbers, in its fields or in
    lists inside them, become null and are named in its ``nonfinite`` field; nested objects name
    their own."""
    names: dict[str, str] = {}
    out = {str(k): _named_value(v, names, str(k)) for k, v in value.items()}
    if names:
        require("nonfinite" not in out, "an object with a field named 'nonfinite' cannot name its "
                                        "non-finite values")
        out["nonfinite"] = names
    return out


def _named_value(value, names: dict, path: str):
    if isinstance(value, dict):
        return _named(value)
    if hasattr(value, "to_dict") and not isinstance(value, np.ndarray):
        return _named(value.to_dict())
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_named_value(v, names, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (float, np.floating)) and not math.isfinite(float(value)):
        names[path] = str(float(value))
        return None
    return jsonable(value)
