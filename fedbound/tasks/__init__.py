"""fedbound.tasks: problems held for all n clients at once, with exactly known constants.

Every task is a :class:`Task` (stacked (n, d) points, float64 by default): ``grad``, ``stochastic_grad``,
``local_losses``, ``loss``, ``global_grad``; constants ``L, mu, L_global, mu_global, sigma2, x_star, f_star,
x0, G, G_inf`` (``bounds`` names those that are upper bounds); heterogeneity ``kappa2, beta2_min`` (FedNova),
``sigma_g2, intra_cluster, inter_cluster`` (AFGA); ``with_noise(sigma, kind)``.

Tasks: :class:`Quadratic`, :class:`LeastSquares` (SD-GT AR(1)), :class:`LogisticRegression`
(Synthetic(alpha, beta)), :class:`RobustRegression` (AFGA Q2), :class:`HeavyTailedQuadratic` (FedAda2 sec. 3),
:class:`MLPClassifier` (Gaussian mixture / digits, or a user's data). Partitions: :func:`dirichlet_partition`,
:func:`one_class_partition`. Minibatch orders a run can replay elsewhere: :class:`SeededBatches`,
:class:`GivenBatches`. By name: :func:`make_task`.
"""
from fedbound.tasks.base import Task
from fedbound.tasks.batches import GivenBatches, SeededBatches
from fedbound.tasks.classifier import MLPClassifier
from fedbound.tasks.clientdata import ClientData
from fedbound.tasks.datasets import digits, gaussian_mixture, train_test_split
from fedbound.tasks.heavy_tailed import HeavyTailedQuadratic
from fedbound.tasks.heterogeneity import (
    fednova_matrix, inter_cluster_matrix, intra_cluster_matrices, measure_at, quadratic_sup, sigma_g_matrix,
)
from fedbound.tasks.least_squares import LeastSquares
from fedbound.tasks.logistic import LogisticRegression
from fedbound.tasks.noise import NOISE_KINDS, gradient_noise, law_variance
from fedbound.tasks.partition import dirichlet_partition, one_class_partition
from fedbound.tasks.quadratic import Quadratic, QuadraticTask
from fedbound.tasks.registry import TASKS, make_task
from fedbound.tasks.robust_regression import RobustRegression

__all__ = [
    "Task", "QuadraticTask", "Quadratic", "LeastSquares", "LogisticRegression", "RobustRegression",
    "HeavyTailedQuadratic", "MLPClassifier", "ClientData", "make_task", "TASKS",
    "dirichlet_partition", "one_class_partition", "gaussian_mixture", "digits", "train_test_split",
    "fednova_matrix", "sigma_g_matrix", "intra_cluster_matrices", "inter_cluster_matrix", "measure_at",
    "quadratic_sup", "gradient_noise", "law_variance", "NOISE_KINDS", "SeededBatches", "GivenBatches",
]
