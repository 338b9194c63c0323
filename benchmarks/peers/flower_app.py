"""The Flower apps of benchmarks/peers/flower_fedavg.py (a module of its own, so that Ray's
workers import it by name instead of unpickling it with its globals): a ``ClientApp`` whose train
handler runs K local full-gradient steps on its partition's least squares (numpy, float64) and
replies with its model and example count, and a ``ServerApp`` running Flower's message-API
``FedAvg`` strategy (``flwr.serverapp.strategy.FedAvg``: example-weighted mean of the replies, no
federated evaluation) with ``configure_train`` selecting the benchmark's participants of each round
instead of ``random.sample``.

The job folder is named by the environment variable FEDBOUND_BENCH_JOB (benchmarks/peers/common.py).
"""
from __future__ import annotations

import os
import time

import numpy as np
from flwr.app import Array, ArrayRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid, ServerApp
from flwr.serverapp.strategy import FedAvg

from common import load_job, local_sgd

_JOB: dict = {}


def job():
    """(job, A, y, participants) of FEDBOUND_BENCH_JOB, loaded once per process (memory-mapped)."""
    if not _JOB:
        _JOB["value"] = load_job(os.environ["FEDBOUND_BENCH_JOB"])
    return _JOB["value"]


client_app = ClientApp()


@client_app.train()
def train(msg: Message, context: Context) -> Message:
    spec, A, y, _ = job()
    pid = int(context.node_config["partition-id"])
    x = msg.content["arrays"]["x"].numpy()
    x = local_sgd(x, np.asarray(A[pid]), np.asarray(y[pid]), spec["lr"], spec["local_steps"])
    content = RecordDict({"arrays": ArrayRecord({"x": Array(x)}),
                          "metrics": MetricRecord({"num-examples": int(A.shape[1]),
                                                   "partition-id": pid})})
    return Message(content=content, reply_to=msg)


@client_app.query()
def query(msg: Message, context: Context) -> Message:
    """Which partition this node holds (used only when the node order cannot be read)."""
    return Message(content=RecordDict({"metrics": MetricRecord(
        {"partition-id": int(context.node_config["partition-id"])})}), reply_to=msg)


class GivenParticipants(FedAvg):
    """FedAvg whose round r trains exactly the partitions ``participants[r - 1]``."""

    def __init__(self, participants: np.ndarray, node_of: dict[int, int], **kwargs):
        super().__init__(**kwargs)
        self.participants, self.node_of = participants, node_of
        self.round_starts: list[float] = []
        self.round_ends: list[float] = []
        self.verified = True

    def configure_train(self, server_round, arrays, config, grid):
        self.round_starts.append(time.time())
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
        self.round_ends.append(time.time())
        return out


def node_map(grid: Grid, n: int) -> dict[int, int]:
    """partition id -> node id. The simulation registers node i as partition i, in order
    (``vce_api._register_nodes``, concurrently with the ServerApp: wait for all n); read that order
    from the in-memory link state, else ask every node (a query round). Either way each train
    reply's partition id is checked (``GivenParticipants.verified``)."""
    while len(list(grid.get_node_ids())) < n:   # as the strategies wait for their nodes
        time.sleep(0.05)
    state = getattr(grid, "state", None)
    try:
        nodes = [info.node_id for info in state.get_node_info()]
        if len(nodes) == n:
            return dict(enumerate(nodes))
    except Exception:  # noqa: BLE001 - internal API changed: fall back to asking the nodes
        pass
    messages = [Message(content=RecordDict(), message_type="query", dst_node_id=node)
                for node in grid.get_node_ids()]
    replies = grid.send_and_receive(messages)
    return {int(r.content.metric_records["metrics"]["partition-id"]): r.metadata.src_node_id
            for r in replies}


server_app = ServerApp()
RESULT: dict = {}


@server_app.main()
def main(grid: Grid, context: Context) -> None:
    spec, A, _, participants = job()
    n, c = A.shape[0], participants.shape[1]
    strategy = GivenParticipants(participants, node_map(grid, n), fraction_train=c / n,
                                 fraction_evaluate=0.0, min_train_nodes=c,
                                 min_available_nodes=n)
    result = strategy.start(grid=grid, initial_arrays=ArrayRecord({"x": Array(np.zeros(A.shape[2]))}),
                            num_rounds=participants.shape[0])
    RESULT.update(x=result.arrays["x"].numpy(), starts=strategy.round_starts,
                  ends=strategy.round_ends, verified=strategy.verified)
