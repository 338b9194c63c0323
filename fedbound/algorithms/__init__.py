"""fedbound.algorithms: vectorized torch implementations of the algorithms, by family:

* :mod:`fedbound.algorithms.federated`: a server and its clients on the one federated round
  (:mod:`~fedbound.algorithms.federated.round`): FedAvg, FedProx, FedAvgM, FedAdagrad, FedAdam,
  FedYogi, SCAFFOLD, FedNova, FedAvg-VR, FedDyn, AFGA/CAFGA, FedAMSGrad, FedAda2 and its baselines;
* :mod:`fedbound.algorithms.decentralized`: one connected subnet, no server: DSGD, gradient
  tracking, PGA, DAdam;
* :mod:`fedbound.algorithms.semidecentralized`: subnets with D2D mixing and per-subnet sampling by a
  server: SD-GT, SD-FedAvg, Scaffnew;

with their client and server optimizers (:mod:`fedbound.algorithms.optim`), the one registry of
algorithms (:mod:`fedbound.algorithms.registry`) and the run loop (:mod:`fedbound.algorithms.run`).

Clients are rows of (n, d) tensors; D2D mixing is a (batched) matmul with W = blkdiag(W_s); a
federated round computes only its participants' rows.
Each algorithm is an object with ``init(x0=None) -> State`` and ``step(state, **overrides) ->
State``; ``run(alg, rounds)`` records a Trajectory and raises DivergenceError on non-finite state.
"""
from fedbound.algorithms.accounting import CommCounts, EnergyModel, RoundTraffic, count_round
from fedbound.algorithms.base import Algorithm, State, check_finite, generator_from, new_rng
from fedbound.algorithms.decentralized.base import Decentralized, DecentralizedState
from fedbound.algorithms.decentralized.dadam import DAdam, DAdamState
from fedbound.algorithms.decentralized.dsgd import DSGD
from fedbound.algorithms.decentralized.gradient_tracking import GradientTracking, GradientTrackingState
from fedbound.algorithms.decentralized.pga import PGA
from fedbound.algorithms.federated.afga import AFGA, CAFGA, FedAMSGrad
from fedbound.algorithms.federated.aggregation import Normalized, WeightedMean
from fedbound.algorithms.federated.control_variates import ControlVariates
from fedbound.algorithms.federated.feddyn import DynamicRegularization, FedDyn
from fedbound.algorithms.federated.fednova import FedAvgVR, FedNova
from fedbound.algorithms.federated.fedopt import FedAdagrad, FedAdam, FedAvg, FedAvgM, FedProx, FedYogi
from fedbound.algorithms.federated.local_steps import (EpochSteps, FixedSteps, GaussianSteps,
                                                       RandomEpochSteps, RandomSteps)
from fedbound.algorithms.federated.round import Federated, FederatedState
from fedbound.algorithms.federated.scaffold import SCAFFOLD
from fedbound.algorithms.run import Trajectory, run
from fedbound.algorithms.semidecentralized.base import SemiDecentralized
from fedbound.algorithms.semidecentralized.scaffnew import Scaffnew, ScaffnewState
from fedbound.algorithms.semidecentralized.sd_fedavg import SDFedAvg, SDFedAvgState
from fedbound.algorithms.semidecentralized.sdgt import SDGT, SDGTRound, SDGTState, sdgt_round
from fedbound.algorithms.stacked import StackedNetwork
from fedbound.deprecation import renamed_attributes

__getattr__ = renamed_attributes(__name__, {
    "ScaffoldFL": "fedbound.algorithms.federated.scaffold:SCAFFOLD",
    "SCAFFOLDState": "fedbound.algorithms.federated.round:FederatedState",
    "DSGDState": "fedbound.algorithms.decentralized.base:DecentralizedState",
})

__all__ = [
    "Algorithm", "State", "Trajectory", "run", "check_finite", "new_rng", "generator_from",
    "StackedNetwork", "EnergyModel", "RoundTraffic", "CommCounts", "count_round",
    "Federated", "FederatedState", "FedAvg", "FedProx", "FedAvgM", "FedAdagrad", "FedAdam",
    "FedYogi", "SCAFFOLD", "WeightedMean", "Normalized", "ControlVariates", "FixedSteps",
    "RandomSteps", "EpochSteps", "GaussianSteps", "RandomEpochSteps", "FedNova", "FedAvgVR",
    "FedAMSGrad", "AFGA", "CAFGA", "FedDyn", "DynamicRegularization",
    "Decentralized", "DecentralizedState", "DSGD", "GradientTracking", "GradientTrackingState",
    "PGA", "DAdam", "DAdamState",
    "SemiDecentralized", "SDGT", "SDGTState", "SDGTRound", "sdgt_round", "SDFedAvg",
    "SDFedAvgState", "Scaffnew", "ScaffnewState",
]
