"""The network of a run from options, as ``fedbound run``, sweep SPECs (``"network": {...}``) and
``fedbound verify`` give it: an SD-GT random geometric network (``rgg``), S subnets of one topology
(``subnets``, ``topology``; the n clients split evenly) or a JSON file (``network``; the SPEC's
``file``), each declared once as an option.
"""
from __future__ import annotations

import os

from fedbound.argtypes import Count, Seed
from fedbound.errors import ValidationError, require
from fedbound.network.subnets import Network
from fedbound.network.topology import TOPOLOGIES
from fedbound.registry import Option, OptionSet, choice_option, integer_option
from fedbound.validate import boolean


def _path(label, value) -> str:
    if not isinstance(value, (str, os.PathLike)):
        raise ValidationError(f"{label} must be a file path, got {value!r:.60}")
    return os.fspath(value)


SUBNETS = integer_option("subnets", "number of subnets; the n clients are split evenly", low=1,
                         examples=(1, 2))
TOPOLOGY = choice_option("topology", f"topology of every subnet: {', '.join(TOPOLOGIES)} (default ring)",
                         TOPOLOGIES, examples=("ring", "complete"))
RGG = Option("rgg", "SD-GT random geometric network with --subnets S (default 3) subnets", boolean, bool,
             examples=(True,))
FILE = Option("network", 'network spec file {"subnets": [{"m": 4, "topology": "ring"} or {"W": ...}]}',
              _path)
NETWORK_OPTIONS = (RGG, SUBNETS, TOPOLOGY, FILE)
#: the network options as one set, for their one validation (unknown names, values)
NETWORK = OptionSet("network", "the network of a run", NETWORK_OPTIONS)


def network_file_size(path: str | os.PathLike) -> int:
    """The number of clients of the network JSON ``path``."""
    return Network.from_json(path).n


def build_network(n: Count, *, rgg: bool = False, subnets: int | None = None,
                  topology: str | None = None, network: str | os.PathLike | None = None,
                  seed: Seed = 0, default_subnets: int | None = None) -> Network | None:
    """The network for n clients from the options (module doc), or None when none is given and
    ``default_subnets`` is None (the algorithm's registry default otherwise)."""
    require(not (rgg and topology is not None), "--rgg and --topology exclude each other")
    if network is not None:
        require(not rgg and subnets is None and topology is None,
                "--network gives the subnets; drop --rgg, --subnets and --topology")
        net = Network.from_json(network)
        require(net.n == n, f"the network of {network} has {net.n} clients but the task has n = {n}")
        return net
    S = subnets if subnets is not None else default_subnets
    if S is None and topology is None and not rgg:
        return None
    S = 1 if S is None else S
    require(S >= 1, f"--subnets must be >= 1, got {S}")
    require(n % S == 0, f"n = {n} clients cannot be split evenly into S = {S} subnets")
    if rgg:
        return Network.random_geometric(S, n // S, seed=seed)
    return Network.from_topology(topology or "ring", S, n // S, seed=seed)


__all__ = ["NETWORK", "NETWORK_OPTIONS", "build_network", "network_file_size"]
