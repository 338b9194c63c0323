"""Speed of SD-GT's controller (31), and its answers against the released code's grid search.

For S in {3, 10, 100} subnets (m_s = 10 for S = 3 as in the paper's layout, else m_s ~ U{5..30}, E_s ~ U[1, 100], E_s^D2D = 0.01 E_s, the paper's
lambdas 1, 0.1, 1e-5; H-hat changes between solves, as in the closed loop), and S = 100 with all
sizes distinct (m_s a permutation of 5..104: the worst case of the grouped GP, one term per
subnet), in one run:

* the first GP solve (compiles the DPP problem) and the median re-solve time of
  fedbound.control.solve_gp (cvxpy + Clarabel) in both forms side by side, "grouped" (the default:
  one energy term per distinct subnet size) and "per_subnet" (variables u_1..u_S), their ratio,
  and the verdict on the target (default form <= TARGET_MS at S = 100 after the first solve);
* the median time of the nested 1-D route solve_reduced, and the largest disagreements in
  objective value between the two GP forms and between the default GP and solve_reduced;
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
from fedbound.control.sdgt.baseline import official_grid
from fedbound.control.sdgt.gp import FORMS

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


def network(S: int, rng, distinct: bool = False) -> NetSpec:
    E = rng.uniform(1, 100, S)
    m = 5 + rng.permutation(S) if distinct else rng.integers(5, 31, S)
    return NetSpec(m=m, E=E, E_d2d=0.01 * E)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    reps = 8 if args.quick else 40
    rng = np.random.default_rng(0)
    print(f"{'S':>4} {'sizes':>9} {'GP first':>9} {'grouped':>8} {'per_subnet':>10} {'ratio':>6} "
          f"{'reduced':>8} {'integer':>8} {'plan gp':>8} {'plan red':>8} {'|grp-per|/J':>11} "
          f"{'|GP-red|/J':>10}   (median ms; GP first and plan gp use the default grouped form)")
    speed = {}
    comparisons = []
    retried = dict.fromkeys(FORMS, 0)
    inaccurate = dict.fromkeys(FORMS, 0)
    for S, distinct in ((3, False), (10, False), (100, False), (100, True)):
        spec = network(S, rng, distinct)
        if S == 3:  # the paper's default layout (n = 30, S = 3) has equal subnets, as the grid assumes
            spec = NetSpec(m=[10, 10, 10], E=spec.E, E_d2d=spec.E_d2d)
        Hs = 1.0 / np.arange(1, reps + 2) + 0.01 * rng.uniform(size=reps + 1)   # H-hat ~ 1/t + noise
        problems = [ControlProblem(spec, H=float(h), K_cap=1000) for h in Hs]
        _, first = timed(solve_gp, problems[0])
        solve_gp(problems[0], form="per_subnet")                   # compile the other form too
        times = {k: [] for k in ("grouped", "per_subnet", "red", "int", "pgp", "pred")}
        forms_apart = gp_red_apart = 0.0
        for pb in problems[1:]:
            gp = {}
            for form in FORMS:
                gp[form], ms = timed(solve_gp, pb, form=form); times[form].append(ms)
                retried[form] += gp[form].settings != f"CLARABEL {form}: default"
                inaccurate[form] += gp[form].status != "optimal"
            red, ms = timed(solve_reduced, pb); times["red"].append(ms)
            forms_apart = max(forms_apart, abs(gp["grouped"].value - gp["per_subnet"].value) / red.value)
            gp_red_apart = max(gp_red_apart, abs(gp["grouped"].value - red.value) / red.value)
            _, ms = timed(integer_optimum, pb); times["int"].append(ms)
            _, ms = timed(plan, pb, "gp"); times["pgp"].append(ms)
            _, ms = timed(plan, pb, "reduced"); times["pred"].append(ms)
        med = {k: statistics.median(v) for k, v in times.items()}
        speed[S, distinct] = med
        sizes = f"{np.unique(spec.m).size} dist."
        print(f"{S:>4} {sizes:>9} {first:>9.1f} {med['grouped']:>8.2f} {med['per_subnet']:>10.2f} "
              f"{med['per_subnet'] / med['grouped']:>6.1f} {med['red']:>8.2f} {med['int']:>8.2f} "
              f"{med['pgp']:>8.2f} {med['pred']:>8.2f} {forms_apart:>11.2e} {gp_red_apart:>10.2e}")
        if distinct:   # the worst case of grouping only enters the timing table
            continue
        for H in COMPARE_H:
            capped = ControlProblem(spec, H=H, K_cap=49)
            ours, ms_ours = median_timed(reps // 2, plan, capped, "gp")
            _, ms_red = median_timed(reps // 2, plan, capped, "reduced")
            grid, ms_grid = median_timed(reps // 2, official_grid, capped)
            comparisons.append((S, capped.H, ours, grid, ms_ours, ms_red, ms_grid))

    print("GP re-solves that needed a retry with other Clarabel settings: "
          + ", ".join(f"{form} {retried[form]}" for form in FORMS)
          + "; accepted as optimal_inaccurate: " + ", ".join(f"{form} {inaccurate[form]}" for form in FORMS))
    print(f"\nre-solve at S = 100, target <= {TARGET_MS:g} ms for the default (grouped) form:")
    for distinct, label in ((False, "sizes in 5..30"), (True, "all sizes distinct")):
        med = speed[100, distinct]
        print(f"  {label:<18}: grouped {med['grouped']:.2f} ms "
              f"({'met' if med['grouped'] <= TARGET_MS else 'NOT met'}), per_subnet "
              f"{med['per_subnet']:.2f} ms ({'met' if med['per_subnet'] <= TARGET_MS else 'NOT met'}), "
              f"reduced {med['red']:.2f} ms ({'met' if med['red'] <= TARGET_MS else 'NOT met'})")

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
