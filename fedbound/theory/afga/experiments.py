r"""The paper's experiment settings and their gossip matrices, with rho computed from the matrices.

Seed 000, experiments [L443-476, L598-603, L999-1000], Table 5 settings [L644-657]; notes afga.md
6.1 and 4.1. Rings have self weight 1/3 (:func:`fedbound.network.ring_weights`; the notes
reproduce the paper's 0.995 and 0.873 with it); "complete" is the balanced fully connected graph
(W = J, Metropolis weights of the complete graph). CAFGA uses K = 5 equal clusters with the same
topology in every cluster (block diagonal W); rho_max = max_k ||W_k - J||_2 is computed on the
blocks of a :class:`fedbound.network.Network`. Local steps: I = 24 (CIFAR), 100 (Shakespeare),
{12, 24, 48} in Fig. 6.

The "random" (rho 0.455, 0.766) and "unbalanced fully connected" (0.335) topologies of Fig. 1 are
unspecified [L598-603, L642]; :data:`REPORTED_RHO` keeps their printed rho, labelled as reported.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from fedbound.argtypes import Count
from fedbound.network import Network, spectral_norm, topology_weights


@dataclass(frozen=True)
class Setting:
    """One experiment: N clients in K clusters of n, m sampled per cluster (M = K m), topology."""

    name: str
    N: Count
    M: Count
    K: Count
    topology: str
    source: str

    @property
    def n(self) -> int:
        return self.N // self.K

    @property
    def m(self) -> int:
        return self.M // self.K


#: the settings of Tables 1-5 and Fig. 1 whose gossip matrix is specified (ring or complete)
SETTINGS = (
    Setting("AFGA S1 ring N=100 M=5", 100, 5, 1, "ring", "Tables 1-3, Setting 1 [L470-476]"),
    Setting("AFGA S2 ring N=50 M=5", 50, 5, 1, "ring", "Tables 1-4, Setting 2 [L470-476]"),
    Setting("CAFGA S1 ring K=5 n=20 m=1", 100, 5, 5, "ring", "Tables 1-3, Setting 1 [L474-475, L999]"),
    Setting("CAFGA S2 ring K=5 n=10 m=1", 50, 5, 5, "ring", "Tables 1-4, Setting 2 [L474-475, L999]"),
    Setting("CAFGA S3 ring K=5 n=20 m=2", 100, 10, 5, "ring", "Table 5, Setting 3 [L644-657]"),
    Setting("CAFGA S4 ring K=5 n=10 m=2", 50, 10, 5, "ring", "Table 5, Setting 4 [L644-657]"),
    Setting("AFGA S2 complete N=50 M=5", 50, 5, 1, "complete", "Fig. 1(a), rho = 0 [L598]"),
    Setting("CAFGA S2 complete K=5 n=10 m=1", 50, 5, 5, "complete", "Fig. 1(b), rho_max = 0 [L601]"),
)

#: rho printed for the unspecified topologies of Fig. 1 [L598-603] (setting name -> rho)
REPORTED_RHO = (
    (Setting("AFGA S2 random (reported)", 50, 5, 1, "random", "Fig. 1(a) [L598]"), 0.455),
    (Setting("CAFGA S2 unbalanced complete (reported)", 50, 5, 5, "unbalanced", "Fig. 1(b) [L601, L642]"), 0.335),
    (Setting("CAFGA S2 random (reported)", 50, 5, 5, "random", "Fig. 1(b) [L601]"), 0.766),
)

#: local-iteration counts the experiments use [L458-460, L980-991]
LOCAL_STEPS = (12, 24, 48, 100)


@functools.lru_cache(maxsize=None)
def rho_max(setting: Setting) -> float:
    """max_k ||W_k - J||_2 over the K cluster blocks of the setting's gossip matrix."""
    blocks = tuple(topology_weights(setting.topology, setting.n) for _ in range(setting.K))
    if setting.K == 1:
        return spectral_norm(blocks[0])
    return float(max(Network(blocks).spectral_norms))


__all__ = ["Setting", "SETTINGS", "REPORTED_RHO", "LOCAL_STEPS", "rho_max"]
