"""The Ray path (a local 2-CPU Ray started once for the module): the same database as the embedded
path; a driver killed with SIGKILL and rerun against the cluster resumes to exactly the
uninterrupted database; a worker killed while it computes is retried by Ray."""
import os
import random
from pathlib import Path

import pytest

from fedbound.sweep import load, run_sweep
from fedbound.sweep.store import DB_NAME

ray = pytest.importorskip("ray", reason="the Ray path needs the optional dependency ray "
                                        "(pip install 'fedbound[ray]')")


@pytest.fixture(scope="module")
def address():
    root = str(Path(__file__).resolve().parents[2])
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([root, before or ""])   # the workers import fedbound
    # a new 2-CPU instance of this process ("local": never one another test worker started)
    ray.init(address="local", num_cpus=2, object_store_memory=100 * 1024 ** 2,
             include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        if before is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = before



def test_ray_and_embedded_give_the_same_database(tmp_path, spec_file, reference, address, content):
    spec = load(spec_file)
    summary = run_sweep(spec, tmp_path / "ray", ray=True)
    assert summary.computed == len(spec.cells)
    assert content(tmp_path / "ray") == reference


@pytest.mark.slow
def test_sigkill_of_the_ray_driver_and_resume(tmp_path, spec_file, reference, address, kill,
                                              run_cli, content):
    spec = load(spec_file)
    out = tmp_path / "killed"
    args = (spec_file, "--out", out, "--ray-address", address)
    seen = kill(args, out / DB_NAME, len(spec.cells), random.Random(41))
    assert 0 < seen < len(spec.cells)
    run_cli(*args)
    assert content(out) == reference


@pytest.mark.slow
def test_a_lost_ray_worker_is_retried(tmp_path, address, content):
    """A Ray worker killed (SIGKILL) while it computes a batch, held there by a plugin until the kill
    (held_worker_plugin.py, driven by lost_worker_driver.py in a subprocess), never raced: Ray
    reruns the task and the database equals the embedded one."""
    import json
    import subprocess
    import sys

    spec = {"algorithm": "sdgt", "task": {"name": "lsq", "n": 8, "d": 4, "rows": 6},
            "network": {"subnets": 2, "topology": "ring"}, "rounds": 60,
            "grid": {"lr": 0.02, "local_steps": 2, "sigma": 0.2, "seed": [0, 1, 2, 3]}}
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec))
    run_sweep(load(spec_file), tmp_path / "embedded")
    driver = Path(__file__).with_name("lost_worker_driver.py")
    proc = subprocess.run([sys.executable, str(driver), str(spec_file), str(tmp_path / "ray"), address],
                          capture_output=True, text=True, timeout=900, env=os.environ)
    assert proc.returncode == 0, proc.stderr[-1500:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["computed"] == 4 and summary["pending"] == 0
    assert content(tmp_path / "ray") == content(tmp_path / "embedded")


def _noisy_mean(seed, a):
    import torch

    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(50, 50, generator=gen, dtype=torch.float64) @ torch.full((50,), a,
            dtype=torch.float64)).numpy()


def test_evaluate_on_ray_equals_embedded(address):
    """A Python Monte-Carlo grid (fedbound.sweep.evaluate) gives the same outputs, bitwise, on Ray."""
    import numpy as np

    from fedbound.sweep import Executor, evaluate, using

    grid = {"a": [0.5, 1.0, 2.0]}
    embedded = evaluate(_noisy_mean, grid, seeds=12)
    with using(Executor(ray=True)):
        on_ray = evaluate(_noisy_mean, grid, seeds=12)
    for c in embedded.configurations:
        assert np.array_equal(on_ray.stack(**c), embedded.stack(**c))


@pytest.mark.slow
def test_verify_on_a_ray_cluster_prints_the_embedded_numbers(address):
    """`fedbound verify lemmas --ray-address ADDR` (a separate driver joining the cluster) prints
    exactly the JSON of the in-process run."""
    import subprocess
    import sys

    argv = [sys.executable, "-m", "fedbound", "verify", "sdgt", "lemmas", "--seeds", "6", "--rounds", "5", "--json"]
    embedded = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    on_ray = subprocess.run(argv + ["--ray-address", address], capture_output=True, text=True, timeout=300)
    assert embedded.returncode in (0, 1) and on_ray.returncode == embedded.returncode, on_ray.stderr[-800:]
    assert on_ray.stdout == embedded.stdout
