"""FedAvg and FedAdam on the MLP of the neural race with Apple's pfl-research (``pfl``), as a pfl
user runs it: a PyTorch MLP (``PyTorchModel``), ``FederatedDataset`` of user datasets,
``SimulatedBackend`` and ``FederatedAveraging``'s ``run`` loop; K local SGD steps
(``torch.optim.SGD``): full batch (``local_num_epochs=K``, ``local_batch_size=None``) or the job's
minibatches (each user's dataset of a round is its K batches in order, one epoch of batch size B);
the server's ``torch.optim.SGD`` with lr 1 on the averaged model difference (FedAvg: the mean of the
participants' models; every user weighs 1) or ``torch.optim.Adam`` (FedAdam; pfl applies the
negated mean difference as the gradient: Adam with Kingma and Ba's bias correction).

The participants of each round are the benchmark's (the user sampler returns them in order).
Torch threads: $FEDBOUND_BENCH_TORCH_THREADS if set, else torch's default.

Usage (by benchmarks/neural_race.py, with the peers' Python):
    python pfl_mlp.py JOB_DIR [PARENT_WALL_CLOCK]
prints one line "RESULT {json}" (benchmarks/peers/common.py) with the model after round 1 (x1).
"""
from __future__ import annotations

import sys
import time

T_IMPORT = time.time()

import os  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import process_start, report  # noqa: E402
from mlp_common import build_model, client_data, get_flat, load_job, peak_rss_mb, set_flat  # noqa: E402

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


class Classifier(torch.nn.Module):
    """The MLP with pfl's loss and metrics: the mean cross-entropy of a batch."""

    def __init__(self, mlp: torch.nn.Module):
        super().__init__()
        self.mlp = mlp

    def forward(self, x):
        return self.mlp(x)

    def loss(self, x, y, eval=False):  # noqa: A002 - pfl's signature
        return torch.nn.functional.cross_entropy(self(x), y)

    @torch.no_grad()
    def metrics(self, x, y, eval=False):  # noqa: A002
        return {"loss": Weighted(float(self.loss(x, y)) * len(y), len(y))}


class Clock(TrainingProcessCallback):
    def __init__(self, module):
        self.module, self.starts, self.ends, self.first = module, [], [], None

    def on_train_begin(self, *, model):
        self.starts.append(time.time())
        return Metrics()

    def after_central_iteration(self, aggregate_metrics, model, *, central_iteration):
        now = time.time()
        if central_iteration == 0:
            self.first = get_flat(self.module)
        self.ends.append(now)
        self.starts.append(now)
        return False, Metrics()


def main():
    t0 = process_start()
    if os.environ.get("FEDBOUND_BENCH_TORCH_THREADS"):   # the benchmark's choice, else torch's default
        torch.set_num_threads(int(os.environ["FEDBOUND_BENCH_TORCH_THREADS"]))
    spec, features, labels, x0, participants, batches = load_job(sys.argv[1])
    rounds, c = participants.shape
    users = {}
    order = iter([(r, int(p)) for r in range(rounds) for p in participants[r]])
    current = {}

    def sampler():
        r, p = next(order)
        current[p] = r
        return p

    def make_dataset(user_id):
        if user_id not in users:
            users[user_id] = client_data(spec, features, labels, user_id)
        f, y = users[user_id]
        if batches is not None:   # this round's K batches, in order
            r = current[user_id]
            rows = batches[r, int((participants[r] == user_id).nonzero()[0][0])].reshape(-1)
            f, y = f[rows], y[rows]
        return Dataset(raw_data=[f, y], user_id=str(user_id))

    training = FederatedDataset(make_dataset, user_sampler=sampler)
    backend = SimulatedBackend(training_data=training, val_data=None)
    mlp = build_model(spec, features.shape[1])
    set_flat(mlp, x0)
    module = Classifier(mlp)
    if spec["algorithm"] == "fedadam":
        central = torch.optim.Adam(module.parameters(), lr=spec["server_lr"],
                                   betas=(spec["beta1"], spec["beta2"]), eps=spec["tau"])
    else:
        central = torch.optim.SGD(module.parameters(), lr=1.0)
    model = PyTorchModel(model=module, local_optimizer_create=torch.optim.SGD,
                         central_optimizer=central)
    params = NNAlgorithmParams(central_num_iterations=rounds,
                               evaluation_frequency=rounds + 1,   # only iteration 0 evaluates
                               train_cohort_size=c, val_cohort_size=0)
    if batches is None:
        train = NNTrainHyperParams(local_num_epochs=spec["local_steps"], local_num_steps=None,
                                   local_learning_rate=spec["lr"], local_batch_size=None)
    else:
        train = NNTrainHyperParams(local_num_epochs=1, local_num_steps=None,
                                   local_learning_rate=spec["lr"],
                                   local_batch_size=spec["batch_size"])
    clock = Clock(module)
    FederatedAveraging().run(algorithm_params=params, backend=backend, model=model,
                             model_train_params=train,
                             model_eval_params=NNEvalHyperParams(local_batch_size=None),
                             callbacks=[clock])
    report("pfl", pfl.__version__ if hasattr(pfl, "__version__") else "?", t0,
           clock.starts[:rounds], clock.ends[:rounds], get_flat(module), x1=clock.first.tolist(),
           t_import=T_IMPORT, torch_threads=torch.get_num_threads(),
           max_rss_mb=peak_rss_mb())


if __name__ == "__main__":
    main()
