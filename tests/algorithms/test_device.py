"""Runs on a torch device (issue 24 item 4: ``--device cpu|cuda``): ``Task.to`` moves a task's
tensors, algorithms built on it and their runs compute there, randomness stays on the CPU (a seed
gives the same participants and noise on every device). On a machine without CUDA, "cuda" is
refused with one line; where CUDA is present, every registered algorithm's run on the GPU equals
its CPU run (float64, to 1e-9 relative)."""
import numpy as np
import pytest
import torch

from fedbound.algorithms import registry, run
from fedbound.cli.main import main
from fedbound.errors import FedboundError, ValidationError
from fedbound.network import Network
from fedbound.tasks import LeastSquares, Quadratic

CUDA = torch.cuda.is_available()
N, D, SIZES = 6, 3, (2, 4)
TASK = Quadratic.generate(N, D, kappa=4.0, mu=0.5, seed=0).with_noise(0.2)
RINGS = Network.from_topology("ring", 2, list(SIZES))
ONE_RING = Network.from_topology("ring", 1, N)
EQUAL_RINGS = Network.from_topology("ring", 2, N // 2)
CLUSTERED = ("cafga", "cafga-a")


def _build(name, task):
    """``name`` on ``task`` with its options' first registered examples (the required ones) on the
    network it takes."""
    spec = registry.get(name)
    options = {o.name: o.examples[0] for o in spec.options if o.required}
    if name in CLUSTERED:
        options["clients_per_round"] = 2
    network = {"required": ONE_RING if spec.default_subnets == 1 else RINGS,
               "optional": EQUAL_RINGS if name in CLUSTERED else RINGS, "none": None}[spec.network]
    return registry.build(name, task, network, seed=3, **options)


def test_a_task_moved_to_the_cpu_is_a_copy_with_the_same_runs():
    task = LeastSquares.generate(n=12, m=6, d=4, seed=1).with_noise(0.1)
    moved = task.to("cpu")
    assert moved is not task and moved.device == torch.device("cpu")
    a = run(registry.build("fedavg", task, seed=0, lr=0.05, local_steps=2, clients_per_round=4), 5)
    b = run(registry.build("fedavg", moved, seed=0, lr=0.05, local_steps=2, clients_per_round=4), 5)
    assert torch.equal(a.x_g, b.x_g) and np.array_equal(a.loss, b.loss)


@pytest.mark.parametrize("device", ["tpu", "cuda:x", 3])
def test_unknown_devices_are_refused(device):
    with pytest.raises(FedboundError, match="device"):
        TASK.to(device)


@pytest.mark.skipif(CUDA, reason="this machine has a CUDA GPU")
def test_cuda_without_a_gpu_is_one_line(tmp_path, capsys):
    with pytest.raises(ValidationError, match="no CUDA GPU"):
        TASK.to("cuda")
    argv = ["run", "fedavg", "--task", "lsq", "--lr", "0.01", "--rounds", "2", "--device", "cuda",
            "--out", str(tmp_path / "r")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "CUDA" in err


@pytest.mark.skipif(not CUDA, reason="no CUDA GPU on this machine")
@pytest.mark.parametrize("name", registry.names())
def test_every_algorithm_runs_on_the_gpu_as_on_the_cpu(name):
    cpu = run(_build(name, TASK), 4)
    gpu = run(_build(name, TASK.to("cuda")), 4)
    assert gpu.x_g.device.type == "cuda"
    np.testing.assert_allclose(gpu.x_g.cpu().numpy(), cpu.x_g.numpy(), rtol=1e-9, atol=1e-12)
    for column in ("loss", "dist2", "grad_norm2"):
        np.testing.assert_allclose(getattr(gpu, column), getattr(cpu, column), rtol=1e-9, atol=1e-12)
    assert {k: list(v) for k, v in gpu.comm.items()} == {k: list(v) for k, v in cpu.comm.items()}


@pytest.mark.skipif(not CUDA, reason="no CUDA GPU on this machine")
def test_the_command_line_runs_on_the_gpu(tmp_path):
    argv = ["run", "fedavg", "--task", "lsq", "--lr", "0.01", "--rounds", "3", "--float64",
            "--clients-per-round", "5", "--seed", "2"]
    assert main(argv + ["--device", "cuda", "--out", str(tmp_path / "g")]) == 0
    assert main(argv + ["--out", str(tmp_path / "c")]) == 0
    np.testing.assert_allclose(np.load(tmp_path / "g" / "x_final.npy"),
                               np.load(tmp_path / "c" / "x_final.npy"), rtol=1e-9, atol=1e-12)


@pytest.mark.skipif(not CUDA, reason="no CUDA GPU on this machine")
def test_constants_computed_after_the_move_live_on_the_gpu():
    """A moved task computes its constants from its numpy data (on the CPU) and keeps them on its
    device, so a run's metrics compare tensors of one device."""
    task = LeastSquares.generate(n=20, m=8, d=5, seed=4).to("cuda")
    assert task.x_star.device.type == "cuda"
    losses, grads = task.global_metrics(task.x0.unsqueeze(0))
    assert losses.device.type == grads.device.type == "cuda"
    cpu = LeastSquares.generate(n=20, m=8, d=5, seed=4)
    np.testing.assert_allclose(task.x_star.cpu().numpy(), cpu.x_star.numpy(), rtol=1e-10)
