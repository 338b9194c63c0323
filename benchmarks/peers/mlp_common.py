"""Shared by the peers' scripts of the neural race (run by the peers' Python, never imported by
fedbound; benchmarks/neural_race.py imports it for its plain-torch reference): the job files, the
model and a client's local SGD as a torch user writes them.

Job directory: features.npy (n m, D) float32 (client i's m samples are rows i m .. i m + m - 1),
labels.npy (n m,) int64, x0.npy (d,) float32 (the model flattened layer by layer, weight then bias,
the order of ``nn.Sequential.state_dict``), participants.npy (R, c) int64 (each round's clients),
batches.npy (R, c, K, B) int64 (minibatch runs: the positions, within the participant's m samples,
of each local step's batch; absent for full-batch runs) and job.json {"hidden", "activation",
"classes", "m", "lr", "local_steps", "rounds", "batch_size", "algorithm" ("fedavg" or "fedadam"),
"server_lr", "beta1", "beta2", "tau"}.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch


def load_job(folder: str | Path):
    """(job, features, labels, x0, participants, batches or None) of a job folder."""
    folder = Path(folder)
    job = json.loads((folder / "job.json").read_text())
    features = np.load(folder / "features.npy", mmap_mode="r")
    labels = np.load(folder / "labels.npy", mmap_mode="r")
    batches = np.load(folder / "batches.npy") if (folder / "batches.npy").exists() else None
    return (job, features, labels, np.load(folder / "x0.npy"), np.load(folder / "participants.npy"),
            batches)


def build_model(job: dict, dim: int) -> torch.nn.Sequential:
    """The MLP: Linear layers of widths dim, *hidden, classes with the activation between them."""
    act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[job["activation"]]
    widths = [dim, *job["hidden"], job["classes"]]
    layers: list[torch.nn.Module] = []
    for a, b in zip(widths, widths[1:]):
        layers += [torch.nn.Linear(a, b), act()]
    return torch.nn.Sequential(*layers[:-1])


def set_flat(model: torch.nn.Module, x: np.ndarray) -> None:
    """Load the flat parameters x (d,) into ``model`` (state_dict order)."""
    start = 0
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.as_tensor(np.asarray(x[start:start + p.numel()])).view_as(p))
            start += p.numel()


def get_flat(model: torch.nn.Module) -> np.ndarray:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).numpy().copy()


def client_data(job: dict, features, labels, client: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Client ``client``'s m samples as tensors."""
    m = job["m"]
    rows = slice(client * m, (client + 1) * m)
    return torch.from_numpy(np.array(features[rows])), torch.from_numpy(np.array(labels[rows]))


def local_sgd(model: torch.nn.Module, feats: torch.Tensor, labels: torch.Tensor, lr: float,
              steps: int, batches: np.ndarray | None = None) -> None:
    """``steps`` SGD steps (torch.optim.SGD) on the mean cross-entropy of the client's samples:
    all of them, or step s the rows ``batches[s]``."""
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for s in range(steps):
        f, y = (feats, labels) if batches is None else (feats[batches[s]], labels[batches[s]])
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(f), y).backward()
        opt.step()


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM of /proc/self/status; getrusage's ru_maxrss
    keeps the parent's peak across fork and exec), nan where there is no /proc."""
    try:
        with open("/proc/self/status") as fh:
            return next(int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM")) / 1024
    except (OSError, StopIteration):
        return float("nan")
