"""Every reproduction notebook executes at small scale (CI); see notebooks/build.py."""
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("notebook_build", ROOT / "notebooks" / "build.py")
build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build)


@pytest.mark.slow
@pytest.mark.parametrize("source", build.sources(), ids=lambda p: p.stem)
def test_notebook_executes_at_small_scale(source, tmp_path):
    nb = build.execute(source, "small", timeout=600, cwd=tmp_path)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
