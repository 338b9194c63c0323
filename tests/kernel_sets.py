"""Run the numeric tests with other CPUs' arithmetic forced (issue 31): ``make test-kernels``.

A user's CPU gives other last bits than the one a golden number was recorded on: other SIMD widths
(torch's ATen kernels, numpy's dispatched loops), other BLAS kernels (MKL inside torch, OpenBLAS
inside numpy and scipy) and so other summation orders and FMA use. The libraries choose their
kernels at run time from the CPU, and each has a switch to choose an older CPU's:

* ``ATEN_CPU_CAPABILITY`` (torch: default, avx2, avx512),
* ``MKL_ENABLE_INSTRUCTIONS`` (torch's MKL: SSE4_2, AVX2, AVX512),
* ``OPENBLAS_CORETYPE`` (numpy's and scipy's OpenBLAS: Nehalem, Haswell, SkylakeX, Zen, ARMV8),
* ``NPY_DISABLE_CPU_FEATURES`` (numpy's dispatched loops: the dispatch targets above a level,
  read from numpy itself, since their names differ between numpy versions),
* ``FEDBOUND_KERNEL_ISA`` (fedbound's compiled MLP steps: avx512, avx2, base;
  ``fedbound.tasks.mlp.kernel_isa``).

:data:`SETS` are three x86-64 CPUs (no AVX, AVX2, AVX-512) and a generic ARM one; a set runs only
where the CPU has what it asks for (forcing AVX-512 kernels on a CPU without them would crash, not
test). For each set this runs :data:`NUMERIC` -- the golden results, the reference trajectories,
the controller, the exact analysis and PEP -- with ``python -m pytest``, prints the kernels torch
and numpy report in that environment (so a switch that had no effect is seen), and fails if any
run fails.

    python tests/kernel_sets.py                 # every set this CPU can run
    python tests/kernel_sets.py avx2 -- -x -q   # one set, extra pytest arguments after --
"""
from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: the numeric tests: numbers compared with recorded ones or with exact arithmetic
NUMERIC = [
    "tests/golden",
    "tests/algorithms/test_reference_trajectories.py",
    "tests/control",
    "tests/verify/test_exact.py",
    "tests/verify/test_operator.py",
    "tests/verify/test_quadratic_rounds.py",
    "tests/verify/test_linear_rate.py",
    "tests/pep",
]

#: name -> (what the CPU must have, environment, numpy dispatch targets to disable: a predicate)
SETS = {
    "no-avx": ("x86", {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
                       "OPENBLAS_CORETYPE": "Nehalem", "FEDBOUND_KERNEL_ISA": "base"},
               lambda f: any(k in f for k in ("AVX", "FMA", "F16C", "X86_V3", "X86_V4"))),
    "avx2": ("avx2", {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
                      "OPENBLAS_CORETYPE": "Haswell", "FEDBOUND_KERNEL_ISA": "avx2"},
             lambda f: "AVX512" in f or "X86_V4" in f),
    "avx512": ("avx512f", {"ATEN_CPU_CAPABILITY": "avx512", "MKL_ENABLE_INSTRUCTIONS": "AVX512",
                           "OPENBLAS_CORETYPE": "SkylakeX", "FEDBOUND_KERNEL_ISA": "avx512"},
               lambda f: False),
    "arm-generic": ("aarch64", {"ATEN_CPU_CAPABILITY": "default", "OPENBLAS_CORETYPE": "ARMV8"},
                    lambda f: f.startswith(("ASIMD", "SVE"))),
}


def cpu_has(requirement: str) -> bool:
    """Whether this CPU can run a set that needs ``requirement`` (x86, avx2, avx512f, aarch64)."""
    machine = platform.machine().lower()
    if requirement == "aarch64":
        return machine in ("aarch64", "arm64")
    if machine not in ("x86_64", "amd64"):
        return False
    if requirement == "x86":
        return True
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("flags")).split()
    except (OSError, StopIteration):
        return False
    return requirement in flags


def environment(name: str) -> dict[str, str]:
    """The process environment of set ``name``: its switches and numpy's disabled targets."""
    _, switches, disable = SETS[name]
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__ as dispatch
    except ImportError:   # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_dispatch__ as dispatch

    env = {**os.environ, **switches}
    targets = [f for f in dispatch if disable(f)]
    if targets:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(targets)
    else:
        env.pop("NPY_DISABLE_CPU_FEATURES", None)
    return env


REPORT = """
import torch
try:
    from numpy._core._multiarray_umath import __cpu_dispatch__ as d, __cpu_features__ as f
except ImportError:
    from numpy.core._multiarray_umath import __cpu_dispatch__ as d, __cpu_features__ as f
on = [t for t in d if f.get(t)]   # the compiled dispatch targets this environment leaves enabled
from fedbound.tasks import mlp
compiled = mlp.kernel_isa() if mlp._kernels is not None else "not built"
print("torch kernels:", torch.backends.cpu.get_cpu_capability(), "| numpy dispatch on:", " ".join(on) or "baseline",
      "| fedbound's compiled MLP steps:", compiled)
"""


def main(argv: list[str]) -> int:
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    chosen = [a for a in (argv[:argv.index("--")] if "--" in argv else argv)] or list(SETS)
    unknown = [c for c in chosen if c not in SETS]
    if unknown:
        print(f"unknown kernel set(s) {', '.join(unknown)}; known: {', '.join(SETS)}", file=sys.stderr)
        return 2
    failed = []
    for name in chosen:
        requirement = SETS[name][0]
        if not cpu_has(requirement):
            print(f"== kernels {name}: skipped (this CPU has no {requirement})", flush=True)
            continue
        env = environment(name)
        shown = {k: env[k] for k in (*SETS[name][1], "NPY_DISABLE_CPU_FEATURES") if k in env}
        print(f"== kernels {name}: {' '.join(f'{k}={v!r}' for k, v in shown.items())}", flush=True)
        subprocess.run([sys.executable, "-c", REPORT], env=env, cwd=ROOT, check=False)
        code = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra,
                               *NUMERIC], env=env, cwd=ROOT).returncode
        if code != 0:
            failed.append(name)
    if failed:
        print(f"numeric tests failed with the kernels of: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
