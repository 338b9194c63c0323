"""The Flower apps of benchmarks/peers/flower_mlp.py (a module of its own, so that Ray's workers
import it by name): a ``ClientApp`` whose train handler loads the server's model into a PyTorch
MLP, runs K local SGD steps (torch.optim.SGD, full batch or the job's minibatches) on its
partition and replies with the model and its example count, and a ``ServerApp`` running Flower's
message-API ``FedAvg`` or ``FedAdam`` strategy (flwr.serverapp.strategy) with ``configure_train``
selecting the benchmark's participants of each round instead of ``random.sample``; the model after
round 1 is kept for the equality check.

The job folder is named by the environment variable FEDBOUND_BENCH_JOB (benchmarks/peers/mlp_common.py).
"""
from __future__ import annotations

import os
import time

import numpy as np
import torch
from flwr.app import ArrayRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid, ServerApp
from flwr.serverapp.strategy import FedAdam, FedAvg

from flower_app import node_map
from mlp_common import build_model, client_data, load_job, local_sgd, set_flat

torch.set_num_threads(1)   # one CPU per ClientApp (client_resources): as Flower's examples do
_JOB: dict = {}


def job():
    """(job, features, labels, x0, participants, batches) of FEDBOUND_BENCH_JOB, loaded once per
    process (memory-mapped)."""
    if not _JOB:
        _JOB["value"] = load_job(os.environ["FEDBOUND_BENCH_JOB"])
    return _JOB["value"]


client_app = ClientApp()


@client_app.train()
def train(msg: Message, context: Context) -> Message:
    spec, features, labels, _, participants, batches = job()
    pid = int(context.node_config["partition-id"])
    model = build_model(spec, features.shape[1])
    model.load_state_dict(msg.content["arrays"].to_torch_state_dict())
    mine = None
    if batches is not None:
        r = int(msg.content["config"]["server-round"]) - 1
        mine = batches[r, int(np.flatnonzero(participants[r] == pid)[0])]
    feats, ys = client_data(spec, features, labels, pid)
    local_sgd(model, feats, ys, spec["lr"], spec["local_steps"], mine)
    content = RecordDict({"arrays": ArrayRecord(model.state_dict()),
                          "metrics": MetricRecord({"num-examples": int(spec["m"]),
                                                   "partition-id": pid})})
    return Message(content=content, reply_to=msg)


@client_app.query()
def query(msg: Message, context: Context) -> Message:
    """Which partition this node holds (used only when the node order cannot be read)."""
    return Message(content=RecordDict({"metrics": MetricRecord(
        {"partition-id": int(context.node_config["partition-id"])})}), reply_to=msg)


def given(base: type) -> type:
    """``base`` (FedAvg or FedAdam) training exactly the partitions ``participants[r - 1]`` in
    round r, timing the rounds and keeping the model after round 1."""

    class GivenParticipants(base):
        def __init__(self, participants: np.ndarray, node_of: dict[int, int], **kwargs):
            super().__init__(**kwargs)
            self.participants, self.node_of = participants, node_of
            self.round_starts: list[float] = []
            self.round_ends: list[float] = []
            self.first: ArrayRecord | None = None
            self.verified = True

        def configure_train(self, server_round, arrays, config, grid):
            self.round_starts.append(time.time())
            if hasattr(self, "current_arrays"):   # FedOpt keeps the model it sends
                self.current_arrays = {k: a.numpy() for k, a in arrays.items()}
            config["server-round"] = server_round
            record = RecordDict({self.arrayrecord_key: arrays, self.configrecord_key: config})
            nodes = [self.node_of[int(p)] for p in self.participants[server_round - 1]]
            return self._construct_messages(record, nodes, "train")

        def aggregate_train(self, server_round, replies):
            replies = list(replies)
            got = sorted(int(next(iter(r.content.metric_records.values()))["partition-id"])
                         for r in replies if not r.has_error())
            self.verified &= got == sorted(int(p) for p in self.participants[server_round - 1])
            out = super().aggregate_train(server_round, replies)
            if server_round == 1:
                self.first = out[0]
            self.round_ends.append(time.time())
            return out

    return GivenParticipants


server_app = ServerApp()
RESULT: dict = {}


def flat(record: ArrayRecord) -> np.ndarray:
    return np.concatenate([a.numpy().reshape(-1) for a in record.values()])


@server_app.main()
def main(grid: Grid, context: Context) -> None:
    spec, features, _, x0, participants, _ = job()
    n = features.shape[0] // spec["m"]
    c = participants.shape[1]
    model = build_model(spec, features.shape[1])
    set_flat(model, x0)
    common = dict(fraction_train=c / n, fraction_evaluate=0.0, min_train_nodes=c,
                  min_available_nodes=n)
    if spec["algorithm"] == "fedadam":
        strategy = given(FedAdam)(participants, node_map(grid, n), eta=spec["server_lr"],
                                  eta_l=spec["lr"], beta_1=spec["beta1"], beta_2=spec["beta2"],
                                  tau=spec["tau"], **common)
    else:
        strategy = given(FedAvg)(participants, node_map(grid, n), **common)
    result = strategy.start(grid=grid, initial_arrays=ArrayRecord(model.state_dict()),
                            num_rounds=participants.shape[0])
    RESULT.update(x=flat(result.arrays), x1=flat(strategy.first), starts=strategy.round_starts,
                  ends=strategy.round_ends, verified=strategy.verified)
