"""How fast the CLI answers (issue 24, item 2), measured in one run: wall time of fresh
``fedbound`` processes, median of several, next to the floor every Python tool pays (``python -c
pass``) and the imports a bound needs (``import numpy, sympy``).

* ``fedbound --help`` and every command's ``--help``: target < 0.3 s;
* ``fedbound bound`` / ``fedbound stepsize`` on the README's examples: target < 0.5 s;

each cold (an empty cache: the first run after installing or editing fedbound, which writes the
registry index, the help texts and the compiled expressions, :mod:`fedbound.cache`) and warm (every
later run). The targets are for a quiet machine: the load average is printed, and the ratio to
``import numpy, sympy`` says how much of a slow figure is the machine.

Plugins (issue 33, item 6): the package ``fedbound new plugin`` writes, installed with pip into a
folder on PYTHONPATH (found by its entry point, as an installed plugin is), and the same commands
with and without it, interleaved, warm: an installed plugin adds < 0.05 s to a command that does not
use it (``bound sdgt.thm3``, ``stepsize sdgt.thm2``, ``run fedavg``), ``import fedbound.extend``
takes < 0.5 s and ``fedbound list`` < 0.5 s.

Run:  .venv/bin/python benchmarks/bench_cli_startup.py [--quick] [--plugin-only]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HELP_TARGET, BOUND_TARGET = 0.3, 0.5
BOUNDS = {
    "bound sdgt.thm3": ["bound", "sdgt.thm3", "--set", "L=1", "mu=0.1", "K=2", "p=0.64", "q=0.5",
                        "n=30", "sigma=0", "gamma=1e-6", "T=100", "Lyap1=1", "--json"],
    "stepsize sdgt.thm2": ["stepsize", "sdgt.thm2", "--set", "L=1", "K=4", "p=0.64", "q=0.5"],
    "bound fednova.thm1": ["bound", "fednova.thm1", "--set", "p_i=0.5,0.5", "tau_i=1,3", "L=1",
                           "sigma=1", "kappa2=1", "Delta=1", "T=100", "eta=0.01"],
}


def wall(argv: list[str], env: dict) -> float:
    """Seconds of one fresh process running ``argv``; it must succeed."""
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
    return elapsed


def median(argv: list[str], env: dict, repeats: int) -> float:
    return statistics.median(wall(argv, env) for _ in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats, fewer commands")
    parser.add_argument("--plugin-only", action="store_true", help="only the figures with and without a plugin")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    if args.plugin_only:
        return plugin_figures(repeats)
    from fedbound.cli.commands import COMMANDS

    commands = ["run", "bound", "sweep"] if args.quick else list(COMMANDS)
    fedbound = [sys.executable, "-m", "fedbound"]
    print(f"CLI start-up, median of {repeats} fresh processes; {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "FEDBOUND_CACHE_DIR": folder}
        floor = median([sys.executable, "-c", "pass"], env, repeats)
        imports = median([sys.executable, "-c", "import numpy, sympy"], env, repeats)
        print(f"{'python -c pass':34s} {floor:7.3f} s")
        print(f"{'python -c import numpy, sympy':34s} {imports:7.3f} s")
        print(f"\n{'command':34s} {'cold':>7s} {'warm':>7s} {'target':>7s}  warm/imports")
        misses = []
        rows = [("--help", ["--help"], HELP_TARGET)]
        rows += [(f"{c} --help", [c, "--help"], HELP_TARGET) for c in commands]
        rows += [(name, argv, BOUND_TARGET) for name, argv in BOUNDS.items()]
        for name, argv, target in rows:
            cold = wall(fedbound + argv, env)
            warm = median(fedbound + argv, env, repeats)
            verdict = "ok" if warm < target else "MISS"
            if warm >= target:
                misses.append(name)
            print(f"{'fedbound ' + name:34s} {cold:7.3f} {warm:7.3f} {target:7.2f}  "
                  f"{warm / imports:5.2f}  {verdict}")
    print(f"\n{len(rows) - len(misses)} of {len(rows)} within target"
          + (f"; MISS: {', '.join(misses)} (see the load average above)" if misses else ""))
    plugin_figures(repeats)


#: the plugin's cost: extra seconds a command that does not use it may take; import and list limits
ADDED_TARGET, EXTEND_TARGET, LIST_TARGET = 0.05, 0.5, 0.5


def install_plugin(folder: str) -> str:
    """The package of ``fedbound new plugin`` installed into ``folder``/site (pip --target: on
    PYTHONPATH it is an installed package, found by its entry point); returns that folder."""
    source, site = os.path.join(folder, "source"), os.path.join(folder, "site")
    for argv in ([sys.executable, "-m", "fedbound", "new", "plugin", source, "--name", "benchplug"],
                 [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                  "--quiet", "--target", site, source]):
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{' '.join(argv[:4])} failed: {done.stderr[-800:]}")
    return site


def plugin_figures(repeats: int) -> None:
    """The commands of the module doc with and without the plugin installed, interleaved (each
    pair back to back), medians of ``repeats`` warm runs."""
    fedbound = [sys.executable, "-m", "fedbound"]
    with tempfile.TemporaryDirectory() as folder:
        site = install_plugin(folder)
        out = os.path.join(folder, "run")
        base = {k: v for k, v in os.environ.items() if k != "FEDBOUND_PLUGINS"}
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        path = os.pathsep.join(filter(None, [root, base.get("PYTHONPATH", "")]))
        without = {**base, "PYTHONPATH": path, "FEDBOUND_CACHE_DIR": os.path.join(folder, "cache")}
        with_plugin = {**without, "PYTHONPATH": os.pathsep.join([site, path])}
        rows = [(name, fedbound + argv, ADDED_TARGET, "added") for name, argv in BOUNDS.items()
                if name != "bound fednova.thm1"]
        rows += [("run fedavg (2 rounds)", fedbound + ["run", "fedavg", "--lr", "0.1", "--rounds", "2", "--out", out,
                                                       "--overwrite"], ADDED_TARGET, "added"),
                 ("import fedbound.extend", [sys.executable, "-c", "import fedbound.extend"], EXTEND_TARGET,
                  "with"),
                 ("list", fedbound + ["list"], LIST_TARGET, "with")]
        print(f"\nwith the plugin `fedbound new plugin` writes installed (entry point), median of "
              f"{repeats} warm runs each, interleaved; load average {os.getloadavg()[0]:.2f}")
        print(f"{'command':34s} {'without':>8s} {'with':>8s} {'added':>8s} {'target':>12s}")
        misses = []
        for name, argv, target, kind in rows:
            for env in (without, with_plugin):
                wall(argv, env)             # the caches of this source and this plugin written
            pairs = [(wall(argv, without), wall(argv, with_plugin)) for _ in range(repeats)]
            a, b = statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)
            value = b - a if kind == "added" else b
            ok = value < target
            misses += [] if ok else [name]
            print(f"{'fedbound ' + name if argv[0] != sys.executable or argv[1] == '-m' else name:34s} "
                  f"{a:8.3f} {b:8.3f} {b - a:+8.3f} {kind + ' < ' + format(target, 'g'):>12s}  "
                  f"{'ok' if ok else 'MISS'}")
        print(f"{len(rows) - len(misses)} of {len(rows)} within target"
              + (f"; MISS: {', '.join(misses)} (see the load average above)" if misses else ""))


if __name__ == "__main__":
    main()
