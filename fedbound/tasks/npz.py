"""Reading users' .npz data files safely: a zip archive of plain numeric .npy members (never pickles,
``allow_pickle`` stays False), each member's size checked against the memory budget from its header
before it is read; a truncated, corrupt or foreign file is a ValidationError naming the file and the
keys it should hold. Used by :meth:`LeastSquares.from_npz <fedbound.tasks.least_squares.LeastSquares.from_npz>`
(A, y) and :meth:`Quadratic.from_npz <fedbound.tasks.quadratic.Quadratic.from_npz>` (H, b, optional p).
"""
from __future__ import annotations

import os
import zipfile

import numpy as np

from fedbound import resources, validate
from fedbound.errors import FedboundError, ValidationError


def member_bytes(archive: zipfile.ZipFile, key: str) -> int:
    """Bytes the array ``key`` of an open .npz archive will take, read from its .npy header (the
    array itself is not read); a pickled (object) array is refused here."""
    with archive.open(f"{key}.npy") as fh:
        version = np.lib.format.read_magic(fh)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        shape, _, dtype = read(fh)
    if dtype.hasobject:
        raise ValidationError(f"key {key!r} holds Python objects (a pickle); fedbound loads "
                              "numeric arrays only")
    return int(np.prod(shape, dtype=object)) * dtype.itemsize


def load_arrays(path: str | os.PathLike, required: tuple[str, ...], optional: tuple[str, ...],
                layout: str) -> dict[str, np.ndarray]:
    """The arrays ``required`` (each must be present) and ``optional`` (present ones only) of the
    .npz file ``path``; ``layout`` describes the expected keys for error messages, e.g.
    "A (n, m, d) and y (n, m)"."""
    path = validate.existing_file("data file", path)
    if not zipfile.is_zipfile(path):
        with open(path, "rb") as fh:
            single = fh.read(6) == np.lib.format.MAGIC_PREFIX
        raise ValidationError(f"data file {path!r} is not a readable .npz archive ("
                              + (f"a .npy file holds a single array; save {layout} with np.savez)"
                                 if single else "not a zip file)"))
    out = {}
    try:
        with np.load(path, allow_pickle=False) as data:
            for key in required + optional:
                if key not in data.files:
                    if key in optional:
                        continue
                    raise ValidationError(f"data file {path!r} must contain key {key!r}, got keys "
                                          f"{sorted(data.files)}")
                resources.require_memory(f"key {key!r} of data file {path!r}",
                                         member_bytes(data.zip, key), itemsize=1)
                out[key] = data[key]
    except FedboundError:
        raise
    except Exception as err:  # noqa: BLE001 - any decoding failure of a foreign file is bad input
        raise ValidationError(f"data file {path!r} is not a readable .npz archive with keys "
                              f"{layout} ({type(err).__name__}: "
                              f"{' '.join(str(err).split())[:120]})") from None
    return out
