"""JSON-ready values for every ``--json`` output and JSON file: strict JSON, no NaN/Infinity tokens.

:func:`jsonable` turns numpy arrays and scalars into lists and numbers, recurses into dicts, lists
and tuples, uses an object's ``to_dict()`` where it has one (Estimate, SlopeFit, ...), and writes a
complex number as ``{"re": ..., "im": ...}``. A non-finite float becomes the string ``"inf"``,
``"-inf"`` or ``"nan"`` (``nonfinite="string"``: an infinite floor or ratio is information), or
``null`` (``nonfinite="null"``: for values that are unknown, such as f - f* without f*).
"""
from __future__ import annotations

import math

import numpy as np

from fedbound import validate

NONFINITE = ("string", "null")


def jsonable(value: object, nonfinite: str = "string"):
    """``value`` as nested Python lists, dicts, numbers, strings, bools and None (module doc)."""
    validate.one_of("nonfinite", nonfinite, NONFINITE)
    if isinstance(value, dict):
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
