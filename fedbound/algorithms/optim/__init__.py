"""fedbound.algorithms.optim: client and server optimizers as optax-style transforms.

``client`` (rows = participating clients, state re-initialized every round): sgd (with learning-rate
decay), prox, momentum, adagrad, adam, sm3 (I/II, delayed), drop_small_steps. ``server`` (the global
model, fed the pseudo-gradient x - aggregate): sgd, momentum, adagrad, adam, yogi, amsgrad.
"""
from fedbound.algorithms.optim import client, server
from fedbound.algorithms.optim.base import State, Transform, chain, masked, tree_map

__all__ = ["State", "Transform", "chain", "masked", "tree_map", "client", "server"]
