"""fedbound.testing: hypothesis strategies and assertions to property-test algorithms against
theory, fit for a user's CI (the project's own tests use them too).

Strategies (:mod:`fedbound.testing.strategies`): :func:`constants` (theory constants inside their
declared domains, open ends excluded), :func:`admissible_constants` (a result's constants inside
its own domains, with every step variable satisfying its conditions), :func:`networks` (subnets
with random topologies), :func:`quadratic_tasks` and :func:`least_squares_tasks` (random
heterogeneous tasks with exact constants).

Assertions (:mod:`fedbound.testing.assertions`), with explicit, documented tolerances and failure
messages that say measured vs predicted: :func:`assert_fixed_point_reached`,
:func:`assert_invariant_held`, :func:`assert_linear_rate`, :func:`assert_power_rate`,
:func:`assert_bound_held`; and :func:`assert_matches_theory` (:mod:`fedbound.testing.matching`):
Monte-Carlo seeds of an algorithm, its constants through the paper's adapter, the bound and the
rate of a result checked with confidence intervals.

Example: property tests of a user's algorithm (here SD-GT itself) -- exactness on any network and
heterogeneous quadratic, the subnet sums of the within-subnet tracker stay zero (seed 003 (39)
[L680]), and Theorem 3's bound and rate hold on a run (runs as is)::

    import torch
    from hypothesis import given, settings
    from fedbound.algorithms import SDGT
    from fedbound.network import Network
    from fedbound.tasks import Quadratic
    from fedbound.testing import (assert_fixed_point_reached, assert_invariant_held,
                                  assert_matches_theory, networks, quadratic_tasks)
    from fedbound.theory import get
    from fedbound.theory.sdgt import adapter

    @settings(max_examples=10, deadline=None)
    @given(networks(S=2, m=3, equal_sizes=True), quadratic_tasks(n=6, d=3, kappa=(1.0, 4.0)))
    def test_sdgt_is_exact(network, task):
        alg = SDGT(task, network, lr=1 / (8 * task.L), local_steps=2, clients_per_subnet=2)  # Lemma 1
        states = [alg.init()]
        for _ in range(400):
            states.append(alg.step(states[-1]))
        assert_invariant_held(lambda s: alg.net.subnet_sum(s.Z), states)
        assert_fixed_point_reached(states[-1].x_g, task.x_star, tol=1e-8)

    def test_sdgt_matches_theorem_3():
        task = Quadratic.generate(6, 3, kappa=2.0, mu=0.5, heterogeneity=1.0, seed=0)
        network = Network.from_topology("complete", 2, 3)
        k = adapter.constants(task, network, "sdgt", {"local_steps": 2})
        gamma = 0.9 * float(get("sdgt.thm3").max_step("appendix", **k)[0])   # gamma <= gamma_bar
        lyap1 = float(torch.sum((task.x0 - task.x_star) ** 2))             # sigma = 0, Cor. 3's init
        assert_matches_theory("sdgt", "sdgt.thm3", task, network, measure="dist2",
                              options={"lr": gamma, "local_steps": 2}, rounds=50, seeds=2,
                              constants={"Lyap1": lyap1})
"""
from fedbound.testing.assertions import (assert_bound_held, assert_fixed_point_reached,
                                         assert_invariant_held, assert_linear_rate, assert_power_rate)
from fedbound.testing.matching import TheoryMatch, assert_matches_theory
from fedbound.testing.strategies import (admissible_constants, constant_strategy, constants,
                                         least_squares_tasks, networks, quadratic_tasks)

__all__ = ["constants", "constant_strategy", "admissible_constants", "networks", "quadratic_tasks",
           "least_squares_tasks", "assert_fixed_point_reached", "assert_invariant_held",
           "assert_linear_rate", "assert_power_rate", "assert_bound_held", "assert_matches_theory",
           "TheoryMatch"]
