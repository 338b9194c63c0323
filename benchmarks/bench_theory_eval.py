"""Speed of the theory engine: a bound evaluated through the compiled numpy path vs sympy.

For SD-GT Theorem 1 (76), Theorem 2 (89) and Lemma 7 (41) (variant "printed"), in one run:

* compiled: ``Result.bound`` on arrays of N random constant sets (domain checks included; the
  one-off lambdify is timed apart);
* sympy: ``expr.subs(constants).evalf()`` on a sample of M sets, extrapolated per evaluation;
* the largest relative difference of the two on the sample, the rates (evaluations/s) and the ratio.

Targets: compiled >= 1e6 evaluations/s and >= 100x faster than sympy.

Run:  .venv/bin/python benchmarks/bench_theory_eval.py [--quick]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from fedbound.theory import get
from fedbound.theory import symbols as S

TARGET_RATE = 1e6
TARGET_RATIO = 100.0


def constants(rid: str, size: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random constants of the three results in their domains, gamma within Theorem 1/2's caps."""
    c = {"K": rng.integers(1, 20, size).astype(float), "L": 10 ** rng.uniform(-1, 1, size),
         "p": rng.uniform(0.05, 1, size), "q": rng.uniform(0.05, 1, size),
         "T": rng.integers(10, 10 ** 6, size).astype(float), "n": rng.integers(1, 1000, size).astype(float),
         "sigma": rng.uniform(0, 2, size)}
    if rid == "sdgt.thm1":
        c.update(E1=rng.uniform(0.1, 10, size), D=rng.uniform(0.2, 0.25, size), D5=rng.uniform(0.1, 10, size))
        c["gamma"] = get(rid).max_step(**c)[0] * rng.uniform(0.1, 1, size)
    elif rid == "sdgt.thm2":
        c.update(R=rng.uniform(0.1, 10, size))
        c["gamma"] = get(rid).max_step(**c)[0] * rng.uniform(0.1, 1, size)
    else:
        c = {"r0": rng.uniform(0.1, 10, size), "b": rng.uniform(0, 10, size), "e": rng.uniform(0, 10, size),
             "u": rng.uniform(0.1, 10, size), "T": c["T"]}
    return c


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1e5 compiled and 20 sympy evaluations")
    args = parser.parse_args()
    N, M = (10 ** 5, 20) if args.quick else (10 ** 6, 200)
    rng = np.random.default_rng(0)
    print(f"N = {N:.0e} compiled, M = {M} sympy evaluations per result (variant: printed)")
    print(f"{'result':<12} {'compile s':>9} {'compiled /s':>12} {'sympy /s':>10} {'ratio':>9} "
          f"{'max rel diff':>12}")
    ok = True
    for rid in ("sdgt.thm1", "sdgt.thm2", "sdgt.lemma7"):
        result = get(rid)
        c = constants(rid, N, rng)
        start = time.perf_counter()
        result.bound(**{k: v[:1] for k, v in c.items()})  # lambdify once
        compile_s = time.perf_counter() - start
        start = time.perf_counter()
        values = result.bound(**c)
        compiled_rate = N / (time.perf_counter() - start)

        expr = result.variant().bound
        names = sorted(S.short_name(s) for s in expr.free_symbols)
        symbols = {nm: S.constant(nm, result.scope).symbol for nm in names}
        start = time.perf_counter()
        exact = [float(expr.subs({symbols[nm]: float(c[nm][i]) for nm in names}).evalf()) for i in range(M)]
        sympy_rate = M / (time.perf_counter() - start)
        diff = float(np.max(np.abs(values[:M] - exact) / np.abs(exact)))
        ratio = compiled_rate / sympy_rate
        ok &= compiled_rate >= TARGET_RATE and ratio >= TARGET_RATIO
        print(f"{rid:<12} {compile_s:>9.3f} {compiled_rate:>12.3e} {sympy_rate:>10.3e} {ratio:>9.0f} "
              f"{diff:>12.1e}")
    print(f"targets: compiled >= {TARGET_RATE:.0e}/s and >= {TARGET_RATIO:.0f}x sympy: "
          f"{'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
