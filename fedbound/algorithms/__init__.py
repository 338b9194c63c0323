"""fedbound.algorithms: vectorized torch implementations of SD-GT and its baselines, the federated
round template and the FedOpt family on it.

Clients are rows of (n, d) tensors; D2D mixing is a (batched) matmul with W = blkdiag(W_s); a
federated round computes only its participants' rows.
Each algorithm is an object with ``init(x0=None) -> State`` and ``step(state, **overrides) ->
State``; ``run(alg, rounds)`` records a Trajectory and raises DivergenceError on non-finite state.
"""
from fedbound.algorithms.accounting import CommCounts, EnergyModel, RoundTraffic, count_round
from fedbound.algorithms.base import (
    Algorithm, State, Trajectory, check_finite, generator_from, new_rng, run,
)
from fedbound.algorithms.afga import AFGA, CAFGA, FedAMSGrad
from fedbound.algorithms.aggregation import Normalized, WeightedMean
from fedbound.algorithms.control_variates import ControlVariates
from fedbound.algorithms.federated import Federated, FederatedState
from fedbound.algorithms.fedopt import (FedAdagrad, FedAdam, FedAvg, FedAvgM, FedProx, FedYogi,
                                       ScaffoldFL)
from fedbound.algorithms.fednova import FedAvgVR, FedNova
from fedbound.algorithms.feddyn import DynamicRegularization, FedDyn
from fedbound.algorithms.dsgd import DSGD, DSGDState
from fedbound.algorithms.gossip_baselines import PGA, DAdam, DAdamState
from fedbound.algorithms.gradient_tracking import GradientTracking, GradientTrackingState
from fedbound.algorithms.local_steps import (EpochSteps, FixedSteps, GaussianSteps, RandomEpochSteps,
                                             RandomSteps)
from fedbound.algorithms.scaffnew import Scaffnew, ScaffnewState
from fedbound.algorithms.scaffold import SCAFFOLD, SCAFFOLDState
from fedbound.algorithms.sd_fedavg import SDFedAvg, SDFedAvgState
from fedbound.algorithms.sdgt import SDGT, SDGTRound, SDGTState, sdgt_round
from fedbound.algorithms.semidecentralized import SemiDecentralized
from fedbound.algorithms.stacked import StackedNetwork

__all__ = [
    "Algorithm", "State", "Trajectory", "run", "check_finite", "new_rng", "generator_from",
    "StackedNetwork", "EnergyModel", "RoundTraffic", "CommCounts", "count_round",
    "SDGT", "SDGTState", "SDGTRound", "sdgt_round",
    "SDFedAvg", "SDFedAvgState", "SCAFFOLD", "SCAFFOLDState", "Scaffnew", "ScaffnewState",
    "GradientTracking", "GradientTrackingState", "DSGD", "DSGDState", "PGA", "DAdam", "DAdamState",
    "SemiDecentralized",
    "Federated", "FederatedState", "FedAvg", "FedProx", "FedAvgM", "FedAdagrad", "FedAdam", "FedYogi", "ScaffoldFL",
    "WeightedMean", "Normalized", "ControlVariates", "FixedSteps", "RandomSteps", "EpochSteps",
    "FedNova", "FedAvgVR", "GaussianSteps", "RandomEpochSteps",
    "FedAMSGrad", "AFGA", "CAFGA",
    "FedDyn", "DynamicRegularization",
]
