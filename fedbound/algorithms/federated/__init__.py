"""The federated family: every algorithm of a server and its clients on the one federated round
(:mod:`fedbound.algorithms.federated.round`): the FedOpt family, SCAFFOLD, FedNova, FedDyn,
AFGA/CAFGA and FedAda2 with its baselines. Each module registers its algorithms."""
from fedbound.deprecation import renamed_attributes

#: the names of the module fedbound.algorithms.federated before it became this package
__getattr__ = renamed_attributes(__name__, {
    name: f"fedbound.algorithms.federated.round:{name}"
    for name in ("Federated", "FederatedState", "participation_scheme")})
