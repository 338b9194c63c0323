"""Speed of SD-GT's controller (31), and its answers against the released code's grid search.

For S in {3, 10, 100} subnets (m_s = 10 for S = 3 as in the paper's layout, else m_s ~ U{5..30}, E_s ~ U[1, 100], E_s^D2D = 0.01 E_s, the paper's
lambdas 1, 0.1, 1e-5; H-hat changes between solves, as in the closed loop), in one run:

* the first GP solve (compiles the DPP problem) and the median re-solve time of
  fedbound.control.solve_gp (cvxpy + Clarabel) and of the nested 1-D route solve_reduced, with
  their largest disagreement in objective value;
* the median time of the certified integer search and of whole plans (relaxation + integer);
* on the same networks with K_cap = 49 and H-hat in COMPARE_H: the objective of our certified integer plan and of the grid of
  the paper's released code (K in 1..49 times one sample count shared by all subnets, anchors.md
  1.1, evaluated on the same objective J), and the time ratio ours/grid.

Run:  .venv/bin/python benchmarks/bench_controller.py [--quick]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from fedbound.control import ControlProblem, NetSpec, integer_optimum, plan, solve_gp, solve_reduced
from fedbound.control.baseline import official_grid

TARGET_MS = 5.0
#: H-hat values of the comparison: early (1e-1) to late (1e-4) training, where sampling starts to pay
COMPARE_H = (1e-1, 1e-2, 1e-3, 1e-4)


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, (time.perf_counter() - start) * 1e3


def median_timed(n, fn, *args):
    """Result of fn(*args) and the median wall time (ms) of n calls."""
    runs = [timed(fn, *args) for _ in range(n)]
    return runs[0][0], statistics.median(ms for _, ms in runs)


def network(S: int, rng) -> NetSpec:
    E = rng.uniform(1, 100, S)
    return NetSpec(m=rng.integers(5, 31, S), E=E, E_d2d=0.01 * E)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    reps = 8 if args.quick else 40
    rng = np.random.default_rng(0)
    print(f"{'S':>4} {'GP first':>9} {'GP re-solve':>11} {'reduced':>8} {'integer':>8} "
          f"{'plan gp':>8} {'plan red':>8} {'max |GP-red|/J':>14}   (median ms)")
    speed = {}
    comparisons = []
    retried = 0
    for S in (3, 10, 100):
        spec = network(S, rng)
        if S == 3:  # the paper's default layout (n = 30, S = 3) has equal subnets, as the grid assumes
            spec = NetSpec(m=[10, 10, 10], E=spec.E, E_d2d=spec.E_d2d)
        Hs = 1.0 / np.arange(1, reps + 2) + 0.01 * rng.uniform(size=reps + 1)   # H-hat ~ 1/t + noise
        problems = [ControlProblem(spec, H=float(h), K_cap=1000) for h in Hs]
        _, first = timed(solve_gp, problems[0])
        t_gp, t_red, t_int, t_pgp, t_pred, disagreement = [], [], [], [], [], 0.0
        for pb in problems[1:]:
            gp, ms = timed(solve_gp, pb); t_gp.append(ms)
            retried += gp.settings != "CLARABEL: default"
            red, ms = timed(solve_reduced, pb); t_red.append(ms)
            disagreement = max(disagreement, abs(gp.value - red.value) / gp.value)
            _, ms = timed(integer_optimum, pb); t_int.append(ms)
            _, ms = timed(plan, pb, "gp"); t_pgp.append(ms)
            _, ms = timed(plan, pb, "reduced"); t_pred.append(ms)
        med = {k: statistics.median(v) for k, v in
               dict(gp=t_gp, red=t_red, int=t_int, pgp=t_pgp, pred=t_pred).items()}
        speed[S] = med
        print(f"{S:>4} {first:>9.1f} {med['gp']:>11.2f} {med['red']:>8.2f} {med['int']:>8.2f} "
              f"{med['pgp']:>8.2f} {med['pred']:>8.2f} {disagreement:>14.2e}")
        for H in COMPARE_H:
            capped = ControlProblem(spec, H=H, K_cap=49)
            ours, ms_ours = median_timed(reps // 2, plan, capped, "gp")
            _, ms_red = median_timed(reps // 2, plan, capped, "reduced")
            grid, ms_grid = median_timed(reps // 2, official_grid, capped)
            comparisons.append((S, capped.H, ours, grid, ms_ours, ms_red, ms_grid))

    print(f"GP re-solves that needed a retry with other Clarabel settings: {retried}")
    s100 = speed[100]
    print(f"\nre-solve at S = 100: GP {s100['gp']:.2f} ms, reduced {s100['red']:.2f} ms "
          f"(target <= {TARGET_MS:g} ms: GP {'met' if s100['gp'] <= TARGET_MS else 'NOT met'}, "
          f"reduced {'met' if s100['red'] <= TARGET_MS else 'NOT met'})")

    print("\nours (GP relaxation + certified integer search) vs the released code's grid "
          "(K 1..49 x one shared sample count), K_cap = 49, same objective J")
    print(f"{'S':>4} {'H':>7} {'ours J':>12} {'grid J':>12} {'ours-grid':>10} {'K':>4} {'gridK':>5} "
          f"{'h (first 5)':>18} {'grid j':>6} {'ms ours':>8} {'ms grid':>8} {'ratio':>6} {'ratio(red)':>10}")
    worse = 0
    for S, H, ours, grid, ms_ours, ms_red, ms_grid in comparisons:
        diff = ours.objective - grid.value
        worse += diff > 1e-12 * abs(grid.value)
        print(f"{S:>4} {H:>7.0e} {ours.objective:>12.8f} {grid.value:>12.8f} {diff:>10.2e} {ours.K:>4d} "
              f"{grid.K:>5d} {str(list(ours.h[:5])):>18} {grid.j:>6d} {ms_ours:>8.2f} {ms_grid:>8.3f} "
              f"{ms_ours / ms_grid:>6.1f} {ms_red / ms_grid:>10.1f}")
    print(f"ours worse than the grid in {worse} of {len(comparisons)} cases "
          f"(must be 0: the grid is a subset of our search space)")


if __name__ == "__main__":
    main()
