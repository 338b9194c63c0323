"""fedbound.algorithms.optim: client and server optimizers as optax-style transforms."""
from fedbound.algorithms.optim.base import State, Transform, chain, masked, tree_map

__all__ = ["State", "Transform", "chain", "masked", "tree_map"]
