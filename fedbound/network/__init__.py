"""fedbound.network: topologies, gossip matrices, fog networks of subnets, mixing measures, sampling.

Feeds theory/, control/ and algorithms/ with W (block diagonal over subnets), SD-GT's rho_s and
q = min rho_s, AFGA's ||W - J||_2, and SD-GT's per-subnet sampling (h_s -> beta_s -> p).
"""
from fedbound.network.mixing import (averaging_matrix, is_connected, is_doubly_stochastic,
                                     is_symmetric, mixing_summary, rho_tight, spectral_gap,
                                     spectral_norm, validate_mixing_matrix)
from fedbound.network.rgg import DEFAULT_RADIUS_RANGE, REGION_SIDE, sample_geometric_network
from fedbound.network.sampling import beta_from_h, p_from_h, participation, sample_mask
from fedbound.network.subnets import Network
from fedbound.network.topology import (TOPOLOGIES, metropolis_weights, ring_weights,
                                       topology_options, topology_weights)

__all__ = [
    "Network", "TOPOLOGIES", "DEFAULT_RADIUS_RANGE", "REGION_SIDE",
    "metropolis_weights", "ring_weights", "topology_weights", "topology_options",
    "validate_mixing_matrix", "is_connected", "is_doubly_stochastic", "is_symmetric",
    "averaging_matrix", "mixing_summary", "rho_tight", "spectral_norm", "spectral_gap",
    "sample_geometric_network", "beta_from_h", "p_from_h", "participation", "sample_mask",
]
