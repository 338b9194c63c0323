"""FedAvg on least squares with Apple's pfl-research (``pfl``), as a pfl user runs it: a PyTorch
model, ``FederatedDataset`` of user datasets, ``SimulatedBackend`` and ``FederatedAveraging``'s
``run`` loop; K local full-batch SGD steps (``local_num_steps=K``, ``local_batch_size=None``,
``torch.optim.SGD``), the server's ``torch.optim.SGD`` with lr 1 on the averaged model difference
(plain FedAvg: the mean of the participants' models; every user weighs 1).

The participants of each round are the benchmark's (the user sampler returns them in order), so
the run is comparable to the hand-written FedAvg to rounding. pfl keeps model differences in float32
("for numerical stability", ``PyTorchModel.get_model_difference``); the timed run keeps them in
the model's float64 (one overridden method, same operations), so that the final model can be
checked against float64 FedAvg to 1e-8; ``--stock`` runs pfl unchanged.

Usage (by benchmarks/bench_peers.py, with the peers' Python):
    python pfl_fedavg.py JOB_DIR [PARENT_WALL_CLOCK] [--stock]
prints one line "RESULT {json}" (benchmarks/peers/common.py).
"""
from __future__ import annotations

import sys
import time

T_IMPORT = time.time()

import os  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_job, process_start, report  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import pfl  # noqa: E402
from pfl.aggregate.simulate import SimulatedBackend  # noqa: E402
from pfl.algorithm import FederatedAveraging, NNAlgorithmParams  # noqa: E402
from pfl.callback.base import TrainingProcessCallback  # noqa: E402
from pfl.data.dataset import Dataset  # noqa: E402
from pfl.data.federated_dataset import FederatedDataset  # noqa: E402
from pfl.hyperparam import NNEvalHyperParams, NNTrainHyperParams  # noqa: E402
from pfl.metrics import Metrics, Weighted  # noqa: E402
from pfl.model.pytorch import PyTorchModel  # noqa: E402
from pfl.stats import MappedVectorStatistics  # noqa: E402


class LinearLeastSquares(torch.nn.Module):
    """x in R^d; loss ||A x - y||^2 / (2m) on a user's full batch (fedbound's f_i)."""

    def __init__(self, d: int):
        super().__init__()
        self.x = torch.nn.Parameter(torch.zeros(d, dtype=torch.float64))

    def forward(self, A):
        return A @ self.x

    def loss(self, A, y, eval=False):  # noqa: A002 - pfl's signature
        r = self(A) - y
        return torch.sum(r * r) / (2 * A.shape[0])

    @torch.no_grad()
    def metrics(self, A, y, eval=False):  # noqa: A002
        r = self(A) - y
        return {"loss": Weighted(float(torch.sum(r * r)) / 2, A.shape[0])}


class Float64DifferenceModel(PyTorchModel):
    """PyTorchModel whose model difference keeps the parameters' dtype (stock pfl: float32)."""

    @torch.no_grad()
    def get_model_difference(self, other_parameters, clone=False):
        diff = MappedVectorStatistics()
        for name, variable in self.variable_map.items():
            diff[name] = variable.detach().clone().sub_(other_parameters[name])
        return diff


class Clock(TrainingProcessCallback):
    def __init__(self):
        self.starts, self.ends = [], []

    def on_train_begin(self, *, model):
        self.starts.append(time.time())
        return Metrics()

    def after_central_iteration(self, aggregate_metrics, model, *, central_iteration):
        now = time.time()
        self.ends.append(now)
        self.starts.append(now)
        return False, Metrics()


def main():
    t0 = process_start()
    stock = "--stock" in sys.argv
    job, A_np, y_np, participants = load_job(sys.argv[1])
    rounds, c = participants.shape
    n, m, d = A_np.shape
    A = torch.from_numpy(np.array(A_np))      # the users' data in memory, as torch tensors
    y = torch.from_numpy(np.array(y_np))
    order = iter(participants.reshape(-1).tolist())

    def make_dataset(user_id):
        return Dataset(raw_data=[A[user_id], y[user_id]], user_id=str(user_id))

    training = FederatedDataset(make_dataset, user_sampler=lambda: next(order))
    backend = SimulatedBackend(training_data=training, val_data=None)
    module = LinearLeastSquares(d)
    cls = PyTorchModel if stock else Float64DifferenceModel
    model = cls(model=module, local_optimizer_create=torch.optim.SGD,
                central_optimizer=torch.optim.SGD(module.parameters(), lr=1.0))
    params = NNAlgorithmParams(central_num_iterations=rounds,
                               evaluation_frequency=rounds + 1,   # only iteration 0 evaluates
                               train_cohort_size=c, val_cohort_size=0)
    train = NNTrainHyperParams(local_num_epochs=job["local_steps"], local_num_steps=None,
                               local_learning_rate=job["lr"], local_batch_size=None)
    clock = Clock()
    FederatedAveraging().run(algorithm_params=params, backend=backend, model=model,
                             model_train_params=train,
                             model_eval_params=NNEvalHyperParams(local_batch_size=None),
                             callbacks=[clock])
    report("pfl", pfl.__version__ if hasattr(pfl, "__version__") else "?", t0,
           clock.starts[:rounds], clock.ends[:rounds], module.x.detach().numpy(),
           t_import=T_IMPORT, torch_threads=torch.get_num_threads(),
           float64_differences=not stock)


if __name__ == "__main__":
    main()
