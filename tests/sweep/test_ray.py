"""The Ray path (a local 2-CPU Ray started once for the module): the same database as the embedded
path, and a driver killed with SIGKILL and rerun against the cluster resumes to exactly the
uninterrupted database."""
import os
import random
from pathlib import Path

import pytest

from fedbound.sweep import load, run_sweep
from fedbound.sweep.store import DB_NAME, Store

ray = pytest.importorskip("ray", reason="the Ray path needs the optional dependency ray "
                                        "(pip install 'fedbound[ray]')")


@pytest.fixture(scope="module")
def address():
    root = str(Path(__file__).resolve().parents[2])
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([root, before or ""])   # the workers import fedbound
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        if before is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = before


def content(folder):
    store = Store(folder)
    try:
        return store.content()
    finally:
        store.close()


def test_ray_and_embedded_give_the_same_database(tmp_path, spec_file, reference, address):
    spec = load(spec_file)
    summary = run_sweep(spec, tmp_path / "ray", ray=True)
    assert summary.computed == len(spec.cells)
    assert content(tmp_path / "ray") == reference


def test_sigkill_of_the_ray_driver_and_resume(tmp_path, spec_file, reference, address, kill, run_cli):
    spec = load(spec_file)
    out = tmp_path / "killed"
    args = (spec_file, "--out", out, "--ray-address", address)
    seen = kill(args, out / DB_NAME, len(spec.cells), random.Random(41))
    assert 0 < seen < len(spec.cells)
    run_cli(*args)
    assert content(out) == reference
