"""The on-disk cache (fedbound.cache, issue 24 item 2): a look-up by name imports only the module
that registers the entry, a command's --help is printed from the cache, lambdify's code is rebuilt
from it; every answer equals the uncached one, and a stale, damaged, foreign or unwritable cache
changes nothing but the time."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import fedbound
import fedbound.version
from fedbound import cache
from fedbound.theory import compiled

BOUND = ["bound", "sdgt.thm3", "--set", "L=1", "mu=0.1", "K=5", "p=0.5", "q=0.5", "n=10",
         "sigma=0", "gamma=0.001", "T=100", "Lyap1=1", "--json"]


def _fedbound(argv, cache_dir, probe="afga"):
    """Run ``fedbound argv`` in a fresh process with the cache at ``cache_dir``: (exit status,
    stdout, whether any module whose name contains ``probe`` was imported)."""
    code = ("import contextlib, io, sys\nfrom fedbound.cli.main import main\nout = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n    try:\n"
            f"        code = main({argv!r})\n    except SystemExit as exc:\n        code = exc.code\n"
            f"print(code, any({probe!r} in m for m in sys.modules), '\\n' + out.getvalue())")
    env = {**os.environ, cache.CACHE_ENV: str(cache_dir)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    head, _, printed = done.stdout.partition("\n")
    status, loaded = head.split()
    return int(status), printed, loaded == "True"


def _files(root, kind):
    return sorted(p for p in root.rglob(f"{kind}-*"))


def test_a_bound_imports_only_its_module_once_the_index_is_written(tmp_path):
    status, first, loaded_first = _fedbound(BOUND, tmp_path)
    assert status == 0 and loaded_first          # no index yet: every theory module was imported
    assert _files(tmp_path, "registry") and _files(tmp_path, "lambdify")
    status, second, loaded_second = _fedbound(BOUND, tmp_path)
    assert status == 0 and not loaded_second     # the index names sdgt.thm3's module
    assert json.loads(second) == json.loads(first)


def test_damaged_cache_files_are_recomputed(tmp_path):
    _, reference, _ = _fedbound(BOUND, tmp_path)
    for path in _files(tmp_path, "registry") + _files(tmp_path, "lambdify"):
        path.write_text("{not json" if path.name.startswith("registry") else
                        json.dumps({"source": "def f(:", "function": "f", "names": {}}))
    status, printed, _ = _fedbound(BOUND, tmp_path)
    assert status == 0 and json.loads(printed) == json.loads(reference)


def test_an_index_naming_the_wrong_module_falls_back_to_the_full_registry(tmp_path):
    _fedbound(BOUND, tmp_path)
    (index,) = [p for p in _files(tmp_path, "registry")
                if "sdgt.thm3" in json.loads(p.read_text())]
    entries = json.loads(index.read_text())
    entries["sdgt.thm3"] = "fedbound.theory.fednova"          # imports, registers no sdgt.thm3
    index.write_text(json.dumps(entries))
    status, printed, loaded = _fedbound(BOUND, tmp_path)
    assert status == 0 and loaded and json.loads(printed)["result"] == "sdgt.thm3"


def test_a_new_version_or_an_edit_uses_a_fresh_folder(monkeypatch):
    before = cache.fingerprint()
    monkeypatch.setattr(fedbound.version, "__version__", fedbound.__version__ + ".post1")   # where it is defined
    cache.fingerprint.cache_clear()
    try:
        assert cache.fingerprint() != before
    finally:
        cache.fingerprint.cache_clear()


def test_help_is_printed_from_the_cache_without_importing_torch(tmp_path):
    argv = ["run", "--help"]
    status, first, torch_first = _fedbound(argv, tmp_path, probe="torch")
    assert status == 0 and torch_first and "--local-steps" in first
    status, second, torch_second = _fedbound(argv, tmp_path, probe="torch")
    assert status == 0 and not torch_second and second == first


def test_no_cache_when_off_or_unwritable(tmp_path):
    status, printed, _ = _fedbound(BOUND, "off")
    assert status == 0 and json.loads(printed)["result"] == "sdgt.thm3"
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder should be")
    status, again, _ = _fedbound(BOUND, blocked)
    assert status == 0 and json.loads(again) == json.loads(printed)


def test_keys_cannot_leave_the_cache_folder():
    with pytest.raises(fedbound.ValidationError, match="letters, digits"):
        cache.read_text("help", "../escape")


_x, _y, _z = sp.symbols("x y z", positive=True)
_EXPRESSIONS = [sp.sqrt(_x) * sp.log(_y) + sp.Max(_x, _y),
                sp.Piecewise((_x, _x < _y), (_y, True)) + sp.Rational(1, 3) * _z ** 2,
                sp.Matrix([[_x, 1 - _y], [sp.exp(-_z), sp.pi * _x]]).tolist(),
                [_x / (1 + _y), sp.Min(_x, _z) ** sp.Rational(3, 2)]]


@settings(max_examples=25)
@given(st.sampled_from(range(len(_EXPRESSIONS))), st.booleans(),
       st.lists(st.floats(0.01, 100), min_size=3, max_size=3))
def test_a_rebuilt_function_equals_lambdify(tmp_path_factory, which, cse, point):
    os.environ[cache.CACHE_ENV] = str(tmp_path_factory.mktemp("lambdify"))
    try:
        expr = _EXPRESSIONS[which]
        fresh = sp.lambdify([_x, _y, _z], expr, modules="numpy", cse=cse)
        first = compiled.lambdify([_x, _y, _z], expr, cse=cse)      # computed and stored
        rebuilt = compiled.lambdify([_x, _y, _z], expr, cse=cse)    # read back
        assert rebuilt is not first
        for fn in (first, rebuilt):
            np.testing.assert_allclose(np.asarray(fn(*point), dtype=float),
                                       np.asarray(fresh(*point), dtype=float), rtol=1e-12)
    finally:
        os.environ[cache.CACHE_ENV] = _SUITE_CACHE


_SUITE_CACHE = os.environ[cache.CACHE_ENV]


def test_lambdify_refuses_what_is_not_sympy():
    with pytest.raises(fedbound.ValidationError, match="sympy"):
        compiled.lambdify([_x], object())
