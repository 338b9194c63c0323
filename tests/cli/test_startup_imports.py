"""``fedbound run`` starts in under 3 s (issue 9; benchmarks/bench_fedavg_round.py measures it):
the modules a run imports must not pull scipy, sympy, cvxpy, PEPit or ray at start-up (each costs
0.2-2 s); they are imported where used. Checked by module names, not by timing."""
import os
import subprocess
import sys

HEAVY = ("scipy", "sympy", "cvxpy", "PEPit", "ray", "sklearn")


def test_a_run_imports_no_heavy_module(tmp_path):
    import numpy as np
    rng = np.random.default_rng(0)
    data = tmp_path / "d.npz"
    np.savez(data, A=rng.standard_normal((6, 4, 3)), y=rng.standard_normal((6, 4)))
    code = (
        "import sys\n"
        "from fedbound.cli.main import main\n"
        f"rc = main(['run', 'fedavg', '--task', 'lsq', '--data', {str(data)!r}, '--lr', '0.05',"
        f" '--rounds', '2', '--out', {str(tmp_path / 'out')!r}])\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == "[]"


#: the certifier's solvers. python-flint counts only where sympy did not load it as its ground
#: types (it does whenever sympy is imported and flint is installed, e.g. ``audit --help`` on a
#: cold cache); the certifier's own modules (smt, interval) import their solvers inside functions,
#: and a full registry load imports those modules, so module names are no sign either
SOLVERS = ("z3", "flint")
_REPORT = ("\nimport sys\n"
           "ground = sys.modules.get('sympy.external.gmpy')\n"
           "sympys = ground is not None and getattr(ground, 'GROUND_TYPES', '') == 'flint'\n"
           f"print(sorted(s for s in {SOLVERS!r} if s in sys.modules and not (s == 'flint' and sympys)))\n")


def _imported(code: str, env: dict | None = None) -> list[str]:
    code += _REPORT
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stderr
    return eval(res.stdout.strip().splitlines()[-1])


def test_the_solvers_are_imported_only_where_the_audit_proves(tmp_path):
    cold = {**os.environ, "FEDBOUND_CACHE_DIR": str(tmp_path / "cache")}   # help built, not cached
    assert _imported("import fedbound") == []
    for env in (cold, None):
        assert _imported("import contextlib, io\nfrom fedbound.cli.main import main\n"
                         "with contextlib.redirect_stdout(io.StringIO()):\n"
                         "    for argv in (['--help'], ['audit', '--help']):\n"
                         "        try:\n            main(argv)\n        except SystemExit:\n            pass",
                         env) == []
    # level 0 re-checks points exactly and runs no solver
    assert _imported("import contextlib, io\nfrom fedbound.cli.main import main\n"
                     "with contextlib.redirect_stdout(io.StringIO()):\n"
                     "    main(['audit', 'sdgt', '--only', 'lemma3.alpha_K', '--samples', '50',"
                     " '--iterations', '0', '--prove', '0'])") == []
    assert "z3" in _imported("from fedbound.theory.audit import run_audit\n"
                             "run_audit('sdgt', samples=50, iterations=0, only=['lemma2'])")


def test_version_prints_the_version_without_a_command_module():
    """``fedbound --version`` (issue 33) prints the package's version, exit 0, importing no command
    module and nothing heavy."""
    import fedbound

    code = ("import sys\n"
            "from fedbound.cli.main import main\n"
            "try:\n    main(['--version'])\nexcept SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
            "bad = sorted(m for m in sys.modules if m.startswith('fedbound.cli.') and m.endswith('_cmd'))\n"
            f"bad += sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}) | {{'torch'}} & set(sys.modules))\n"
            "print(bad)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert lines[0] == f"fedbound {fedbound.__version__}" and lines[-1] == "[]"
