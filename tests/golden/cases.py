"""Golden outputs of fedbound, recorded before the architecture refactor (issue 20) and compared
after it to 1e-9 relative: runs of every registered algorithm (and the Python-only variants),
seeds batched by the sweep machinery, bounds / step caps / rounds-to-eps of every result variant at
stored constants, the exact fixed points of ``fedbound fixed-point``, PEP certificates, the audits
at a small scale, the controller's plan and closed-loop run, and the SD-GT verify checks.

Every case stores its inputs with its outputs, so that the comparison re-evaluates at the stored
inputs (it does not depend on how the inputs were drawn). ``record.py`` writes golden.json.gz from
these functions; ``test_golden.py`` recomputes and compares. When an API changes, the functions
below change with it and the stored numbers must still come out.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import os
import tempfile

import numpy as np
import torch

from fedbound.cli.commands import EXIT_VIOLATED

N, D = 6, 3
ROUNDS = 12
SIGMA = 0.2


# ---- encoding ------------------------------------------------------------------------------------
def encode(value):
    """JSON-ready: arrays as nested lists, non-finite floats as strings."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        if value.dtype == bool:
            return value.tolist()
        if value.dtype.kind in "iu":
            return value.tolist()
        if value.dtype.kind == "U" or value.dtype == object:
            return [encode(v) for v in value.tolist()]
        return encode(value.tolist())
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (np.floating, float)):
        x = float(value)
        return x if math.isfinite(x) else repr(x)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


# ---- problems --------------------------------------------------------------------------------------
def task(kind: str = "quadratic", sigma: float = SIGMA):
    from fedbound.tasks import LeastSquares, MLPClassifier, Quadratic

    if kind == "quadratic":
        t = Quadratic.generate(N, D, kappa=4.0, mu=0.5, seed=0)
    elif kind == "lsq":
        t = LeastSquares.generate(N, 8, 4, omega=0.5, seed=1)
    elif kind == "mlp":
        t = MLPClassifier.generate(N, dataset="gaussian_mixture", dim=4, num_samples=60, seed=2)
    else:
        raise ValueError(kind)
    return t.with_noise(sigma) if sigma > 0 else t


def network(kind: str):
    from fedbound.network import Network

    if kind == "rings":
        return Network.from_topology("ring", 2, [2, 4])
    if kind == "ring":
        return Network.from_topology("ring", 1, N)
    if kind == "equal":
        return Network.from_topology("ring", 2, N // 2)
    return None


#: (algorithm, network kind, options): each registered algorithm with partial participation where it
#: has any, and a second setting with full participation / other switches
RUNS = [
    ("sdgt", "rings", {"gamma": 0.05, "K": 3, "h": 2}),
    ("sdgt", "rings", {"gamma": 0.05, "K": 2}),
    ("sd-fedavg", "rings", {"gamma": 0.05, "K": 3, "h": 1}),
    ("scaffold", "rings", {"gamma": 0.05, "K": 3, "h": 2}),
    ("scaffold", None, {"gamma": 0.05, "K": 3, "h": 4}),
    ("scaffold", None, {"gamma": 0.05, "K": 2}),
    ("gt", "ring", {"gamma": 0.05}),
    ("dsgd", "ring", {"gamma": 0.05}),
    ("pga", "ring", {"gamma": 0.05, "period": 3}),
    ("dadam", "ring", {"gamma": 0.05, "beta1": 0.8, "beta2": 0.95, "tau": 1e-3}),
    ("scaffnew", None, {"gamma": 0.05, "K": 3}),
    ("fedavg", None, {"lr": 0.05, "local_steps": 3, "clients_per_round": 4}),
    ("fedavg", None, {"lr": 0.05, "local_steps": [1, 2, 3, 1, 2, 3], "participation": "full",
                      "server_lr": 0.7}),
    ("fedavg", None, {"lr": 0.05, "local_steps": 2, "clients_per_round": 3,
                      "participation": "with-replacement"}),
    ("fedavg", None, {"lr": 0.05, "local_steps": 2, "clients_per_round": 3,
                      "participation": "unbiased"}),
    ("fedprox", None, {"lr": 0.05, "mu": 0.3, "local_steps": 3, "clients_per_round": 4}),
    ("fedavgm", None, {"lr": 0.05, "local_steps": 2, "clients_per_round": 4, "server_momentum": 0.6}),
    ("fedadagrad", None, {"lr": 0.05, "local_steps": 2, "clients_per_round": 4, "server_lr": 0.1,
                          "tau": 1e-2, "beta1": 0.3}),
    ("fedadam", None, {"lr": 0.05, "local_steps": 2, "clients_per_round": 4, "server_lr": 0.1}),
    ("fedyogi", None, {"lr": 0.05, "local_steps": 2, "clients_per_round": 4, "server_lr": 0.05}),
    ("scaffold-fl", None, {"lr": 0.05, "local_steps": [1, 2, 3, 1, 2, 3], "clients_per_round": 4}),
    ("fednova", None, {"lr": 0.05, "local_steps": [1, 2, 3, 1, 2, 3], "clients_per_round": 4}),
    ("fednova", None, {"lr": 0.05, "local_steps": [1, 2, 3, 1, 2, 3], "momentum": 0.5,
                       "server_momentum": 0.3, "tau_eff": "steps"}),
    ("fednova", None, {"lr": 0.05, "local_steps": [1, 2, 3, 1, 2, 3], "mu": 0.2, "vr": "corrected"}),
    ("fednova", None, {"lr": 0.05, "local_steps": [1, 2, 3, 1, 2, 3], "lr_decay": 0.8, "vr": "literal",
                       "tau_eff": "2.5"}),
    ("fedavg-vr", None, {"lr": 0.05, "local_steps": [1, 2, 3, 1, 2, 3], "clients_per_round": 4}),
    ("fedamsgrad", None, {"lr": 0.05, "local_steps": 2, "clients_per_round": 4, "server_lr": 0.05}),
    ("afga", "rings", {"lr": 0.05, "local_steps": 2, "clients_per_round": 3, "server_lr": 0.05}),
    ("afga", None, {"lr": 0.05, "local_steps": 2, "clients_per_round": 4, "server_lr": 0.05,
                    "server": "adam"}),
    ("cafga", "equal", {"lr": 0.05, "local_steps": 2, "clients_per_round": 4, "server_lr": 0.05}),
    ("afga-a", None, {"lr": 0.05, "local_steps": 2, "clients_per_round": 4, "server_lr": 0.05,
                      "adapted_compute": 2}),
    ("cafga-a", "equal", {"lr": 0.05, "local_steps": 2, "clients_per_round": 4, "server_lr": 0.05,
                          "server": "sgd"}),
    ("fedada2", None, {"lr": 0.05, "local_steps": 3, "clients_per_round": 4, "server_lr": 0.1,
                       "delay": 2}),
    ("fedada2", None, {"lr": 0.05, "local_steps": 3, "clients_per_round": 4, "server_lr": 0.1,
                       "server_optimizer": "adam", "client_optimizer": "sm3_adam", "eps_s": 1e-6}),
    ("fedada2", None, {"lr": 0.05, "local_steps": 3, "server_lr": 0.1, "sm3_variant": "I"}),
    ("jointzero", None, {"lr": 0.05, "local_steps": 3, "clients_per_round": 4, "server_lr": 0.1,
                         "client_optimizer": "adam"}),
    ("dja", None, {"lr": 0.05, "local_steps": 3, "clients_per_round": 4, "server_lr": 0.1}),
    ("feddyn", None, {"lr": 0.05, "alpha": 0.5, "local_steps": 3, "clients_per_round": 4}),
]


def run_columns(traj) -> dict:
    out = {k: getattr(traj, k) for k in ("loss", "loss_gap", "dist2", "grad_norm2", "K")}
    out["x_g"] = traj.x_g
    out["comm"] = dict(traj.comm)
    if traj.metrics:
        out["metrics"] = dict(traj.metrics)
    return out


def registry_run(name: str, net_kind, options: dict, task_kind: str = "quadratic", seed: int = 3,
                 rounds: int = ROUNDS) -> dict:
    from fedbound.algorithms import registry, run

    if isinstance(options.get("tau_eff"), str) and options["tau_eff"][0].isdigit():
        # recorded as the text "2.5", which the Python API took for the number before issue 20
        options = {**options, "tau_eff": float(options["tau_eff"])}
    alg = registry.build(name, task(task_kind), network(net_kind), seed=seed, **options)
    return run_columns(run(alg, rounds))


def python_runs() -> dict:
    """Algorithms and switches reached only from Python."""
    from fedbound.algorithms import SDGT, SDFedAvg, run
    from fedbound.algorithms import fedada2 as fa
    from fedbound.algorithms.optim import client

    q = task()
    out = {}
    out["sdgt-printed-paper"] = run(SDGT(q, network("rings"), gamma=0.05, K=2, h=[1, 3], init="printed",
                                         aggregator="paper", seed=1), ROUNDS)
    out["sd-fedavg-absolute-all"] = run(SDFedAvg(q, network("rings"), gamma=0.05, K=2, h=1,
                                                 aggregation="absolute", reset="all", seed=1), ROUNDS)
    out["dja-moments-adam"] = run(fa.DJA(q, lr=0.05, local_steps=2, client_optimizer="adam",
                                         mapping="moments", server_optimizer="adam", seed=1), ROUNDS)
    out["fedada2-dp"] = run(fa.FedAda2(q, lr=0.05, local_steps=2, clients_per_round=3,
                                       dp=fa.DP(clip=0.5, noise_multiplier=0.3), seed=1), ROUNDS)
    strategies = [fa.Strategy(client.sgd(0.05), 2, 1.0),
                  fa.Strategy(fa.make_client("adam", 0.02), 3, 0.5)]
    out["blended"] = run(fa.Blended(q, strategies=strategies, assignment=[0, 1, 0, 1, 1, 0],
                                    clients_per_round=4, seed=1), ROUNDS)
    lsq = task("lsq")
    out["fedavg-lsq-examples"] = run(registry_alg("fedavg", lsq, lr=0.05, local_steps=3), ROUNDS)
    mlp = task("mlp", sigma=0.0)
    out["fedada2-mlp"] = run(registry_alg("fedada2", mlp, lr=0.05, local_steps=2, clients_per_round=3,
                                          server_lr=0.05), 6)
    out["fedavg-mlp"] = run(registry_alg("fedavg", mlp, lr=0.1, local_steps=2, clients_per_round=3), 6)
    return {k: run_columns(v) for k, v in out.items()}


def registry_alg(name, t, network=None, seed=1, **options):
    from fedbound.algorithms import registry

    return registry.build(name, t, network, seed=seed, **options)


def batched_runs() -> dict:
    """Seeds run together by the sweep machinery (sweep.runs) and a small SPEC collected."""
    from fedbound import sweep
    from fedbound.sweep import runner, spec

    q = task()
    ev = sweep.runs(lambda seed, lr: registry_alg("fedadam", q, seed=seed, lr=lr, local_steps=2,
                                                  clients_per_round=3, server_lr=0.05),
                    ROUNDS, grid={"lr": [0.02, 0.05]}, seeds=4)
    out = {}
    for lr in (0.02, 0.05):
        values = ev.values(lr=lr)
        out[f"runs-fedadam-{lr}"] = [{k: v for k, v in run_cols.items()} for run_cols in values]
    s = spec.loads(json.dumps({
        "algorithm": ["fedavg", "fedprox", "scaffold-fl"], "task": {"name": "lsq", "n": 8, "d": 5},
        "rounds": 6, "grid": {"lr": [0.02, 0.05], "mu": 0.1, "seed": [0, 1, 2], "sigma": 0.1,
                              "local_steps": 2, "clients_per_round": 4}}))
    out["spec"] = [{"cell": recorded_key(cell.key), "status": result.status, "columns": result.columns}
                   for cell, result in runner.collect(s)]
    return out


#: options renamed after the golden was recorded: new name -> the name its cell keys hold (issue 33:
#: the proximal coefficient mu is proximal_mu, mu being strong convexity everywhere else)
RECORDED_NAMES = {"proximal_mu": "mu"}


def recorded_key(key: str) -> str:
    """A cell's key (canonical JSON) with its options under the names they were recorded with
    (:data:`RECORDED_NAMES`): the same cell, the same numbers."""
    cell = json.loads(key)
    cell["options"] = {RECORDED_NAMES.get(k, k): v for k, v in cell["options"].items()}
    return json.dumps(cell, sort_keys=True)


# ---- theory ----------------------------------------------------------------------------------------
def _draw_constants(result, variant, rng) -> dict:
    """A point inside the domains of the constants ``variant`` uses (deterministic given rng)."""
    from fedbound.theory import symbols as S
    from fedbound.testing.strategies import _domain_range

    names = result.constants(variant)
    out = {}
    seen = S.visible(result.scope)
    for name in names:
        c = seen[name]
        domain = result.domain(name)[0]
        low, high = _domain_range(name, domain)
        if c.ndim:
            continue
        if domain.integer:
            out[name] = int(rng.integers(int(math.ceil(low)), int(math.floor(high)) + 1))
        elif low > 0:
            out[name] = float(10 ** rng.uniform(math.log10(low), math.log10(high)))
        else:
            out[name] = float(rng.uniform(low, high))
    for small, large in S.ORDER_RELATIONS:
        ks, kl = small.split(".")[-1], large.split(".")[-1]
        if ks in out and kl in out and out[ks] > out[kl]:
            out[ks], out[kl] = out[kl], out[ks]
    if result.preparation is not None:
        for name in result.preparation.outputs:
            out.pop(name, None)
        m = 3
        for name in result.preparation.inputs:
            domain = seen[name].domain
            if domain.integer:
                out[name] = [int(v) for v in rng.integers(1, 6, size=m)]
            else:
                vals = rng.uniform(0.2, 1.0, size=m)
                out[name] = (vals / vals.sum()).tolist()
    return out


def theory_points(attempts: int = 40, per_variant: int = 2) -> list:
    """Inputs for every result variant: constants (with the step variable set inside its
    condition where the variant has one)."""
    from fedbound.theory import results

    points = []
    for result in results():
        for vname, v in result.variants.items():
            rng = np.random.default_rng(_stable_seed(result.id, vname))
            found = 0
            for _ in range(attempts):
                c = _draw_constants(result, vname, rng)
                variables = v.variables()
                try:
                    if len(variables) == 1:
                        cap, _ = result.max_step(vname, variable=variables[0], **c)
                        if not (np.isfinite(cap) and cap > 0):
                            continue
                        c[variables[0]] = float(0.3 * float(cap))
                    ev = result.evaluate(vname, **c)
                except Exception:   # noqa: BLE001 - an inadmissible draw: try another
                    continue
                if ev.bound is not None and not np.all(np.isfinite(ev.bound)):
                    continue
                points.append({"result": result.id, "variant": vname, "constants": c})
                found += 1
                if found >= per_variant:
                    break
    return points


def _stable_seed(*parts) -> int:
    import zlib

    return zlib.crc32("/".join(parts).encode())


def theory_values(point: dict) -> dict:
    """Everything the theory computes at one point: the evaluation, max_step per variable,
    rounds_to_eps where the bound depends on the rounds."""
    from fedbound.theory import get

    result = get(point["result"])
    vname, c = point["variant"], point["constants"]
    ev = result.evaluate(vname, **c)
    out = {"bound": ev.bound, "caps": ev.caps, "conditions_hold": ev.conditions_hold,
           "predicates": ev.predicates,
           "extras": {k: v for k, v in ev.extras.items() if np.asarray(v).dtype.kind in "fiub"},
           "terms": ev.terms}
    v = result.variant(vname)
    steps = {}
    for var in v.variables():
        try:
            cap, binding = result.max_step(vname, variable=var, **c)
            steps[var] = {"cap": cap, "binding": str(binding)}
        except Exception as exc:   # noqa: BLE001 - recorded as the error class
            steps[var] = {"error": type(exc).__name__}
    out["max_step"] = steps
    if v.bound is not None and result.rounds in v.constants() and ev.bound is not None:
        given = {k: val for k, val in c.items() if k != result.rounds}
        target = float(np.asarray(ev.bound)) * 1.5
        try:
            out["rounds_to_eps"] = result.rounds_to_eps(target, vname, **given)
        except Exception as exc:   # noqa: BLE001
            out["rounds_to_eps"] = {"error": type(exc).__name__}
    return out


# ---- commands ----------------------------------------------------------------------------------------
def cli_json(argv: list[str]) -> dict:
    """The JSON a ``fedbound`` command prints (in-process)."""
    from fedbound.cli.main import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    assert code in (0, EXIT_VIOLATED), (argv, code)   # verify: 3 when a check is violated
    return json.loads(buf.getvalue())


def quad_npz(folder: str) -> str:
    rng = np.random.default_rng(5)
    n, d = 5, 3
    H = np.stack([np.diag(rng.uniform(0.5, 2.0, size=d)) for _ in range(n)])
    b = rng.normal(size=(n, d))
    path = os.path.join(folder, "quad.npz")
    np.savez(path, H=H, b=b)
    return path


FIXED_POINTS = [
    ["fedavg", "--local-steps", "1,3,5,8,2", "--lr", "0.05"],
    ["fedprox", "--local-steps", "1,3,5,8,2", "--lr", "0.05", "--mu", "0.3"],
    ["fednova", "--local-steps", "1,3,5,8,2", "--lr", "0.05"],
    ["fednova", "--local-steps", "1,3,5,8,2", "--lr", "0.05", "--momentum", "0.5", "--tau-eff", "steps"],
    ["fednova", "--local-steps", "4", "--lr", "0.1", "--lr-decay", "0.9", "--tau-eff", "3.5"],
]


def fixed_points() -> dict:
    out = {}
    with tempfile.TemporaryDirectory() as folder:
        path = quad_npz(folder)
        for argv in FIXED_POINTS:
            full = ["fixed-point", *argv, "--task", "quadratic", "--data", path, "--json"]
            out[" ".join(argv)] = cli_json(full)
    return out


PEP = [("gd", {}), ("fedavg", {}), ("fedprox", {}), ("fednova", {}), ("scaffold", {}),
       ("scaffnew", {}), ("dgd", {}), ("gt", {}), ("sdgt", {}),
       ("fedavg", {"K": 2, "R": 1, "zeta": 0.0}), ("gt", {"W": "[[0.5,0.5],[0.5,0.5]]"})]


def pep_certificates() -> dict:
    from fedbound.pep import certify

    out = {}
    for name, options in PEP:
        cert = certify(name, **options)
        d = cert.to_dict()
        out[f"{name} {json.dumps(options, sort_keys=True)}"] = {
            k: d[k] for k in ("worst_case", "lower_bound", "theory", "verdict", "status", "duality_gap",
                              "replay_value", "lower_bound_instance", "lower_bound_worst_condition")
            if k in d}
    return out


def audits() -> dict:
    from fedbound.theory.audit import run_audit

    out = {}
    for paper in ("sdgt", "fednova", "fedada2", "afga", "pep"):
        for r in run_audit(paper, samples=400, iterations=2):
            out[f"{paper}/{r.claim}/{r.variant}"] = {
                "verdict": r.verdict, "violation_ratio": r.violation_ratio,
                "random_violation_fraction": r.random_violation_fraction, "worst": r.worst,
                "worst_unit": r.worst_unit}
    return out


NET_SPEC = {"subnets": [{"m": 4, "E": 42.0, "E_d2d": 0.4}, {"m": 4, "E": 17.0, "E_d2d": 0.2},
                        {"m": 4, "E": 80.0, "E_d2d": 1.0}]}


def control() -> dict:
    out = {}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "net.json")
        with open(path, "w") as fh:
            json.dump(NET_SPEC, fh)
        out["plan"] = cli_json(["control", "plan", "--spec", path, "--json"])
        run_dir = os.path.join(folder, "run")
        cli_json(["run", "sdgt", "--controller", path, "--task", "quadratic", "--n", "12",
                  "--subnets", "3", "--rounds", "6", "--float64", "--out", run_dir, "--json"])
        with open(os.path.join(run_dir, "controller.json")) as fh:
            out["closed_loop"] = json.load(fh)
    return out


VERIFY = [
    ["fixed-point", "--rounds", "200"],
    ["server-recursion", "--seeds", "8", "--rounds", "5"],
    ["linear-rate", "--rounds", "200"],
    ["thm3-bound", "--seeds", "8", "--rounds", "20"],
    ["lemmas", "--seeds", "8", "--rounds", "5"],
    ["noise-floor", "--seeds", "6"],
    ["thm1-bound", "--seeds", "6", "--rounds", "20"],
    ["thm2-bound", "--seeds", "6", "--rounds", "20"],
]


def verify_checks() -> dict:
    out = {}
    for argv in VERIFY:
        out[" ".join(argv)] = _nonfinite_restored(cli_json(["verify", *argv, "--json"]))
    return out


def _nonfinite_restored(value):
    """``verify --json`` writes a non-finite number as null named in its object's ``nonfinite``
    (strict JSON, issue 31); the golden recorded it as the string "nan" / "inf": put it back."""
    if isinstance(value, list):
        return [_nonfinite_restored(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: _nonfinite_restored(v) for k, v in value.items() if k != "nonfinite"}
    for path, text in value.get("nonfinite", {}).items():
        field, *index = path.replace("]", "").split("[")
        if index:
            out[field][int(index[0])] = text
        else:
            out[field] = text
    return out


def cli_runs() -> dict:
    """``fedbound run`` as users call it (float32 default, the CLI's task generators)."""
    out = {}
    with tempfile.TemporaryDirectory() as folder:
        for i, argv in enumerate([
                ["sdgt", "--task", "lsq", "--subnets", "3", "--topology", "ring", "--K", "3",
                 "--sample", "2", "--gamma", "0.01", "--rounds", "8", "--sigma", "0.1"],
                ["fedavg", "--task", "logistic", "--clients-per-round", "4", "--local-steps", "3",
                 "--lr", "0.1", "--rounds", "8", "--weights", "examples", "--float64"],
                ["afga", "--task", "robust", "--n", "10", "--clients-per-round", "4",
                 "--local-steps", "2", "--lr", "0.05", "--server-lr", "0.05", "--amsgrad-eps", "1e-6",
                 "--rounds", "5"],
                ["pga", "--task", "mlp-gmm", "--n", "8", "--subnets", "1", "--topology", "complete",
                 "--gamma", "0.05", "--period", "2", "--rounds", "4"]]):
            folder_i = os.path.join(folder, str(i))
            cli_json(["run", *argv, "--out", folder_i, "--json"])
            with open(os.path.join(folder_i, "metrics.json")) as fh:
                out[" ".join(argv)] = json.load(fh)["metrics"]
    return out


SECTIONS = {
    "runs": lambda: {f"{name} {net} {json.dumps(opts, sort_keys=True)}": registry_run(name, net, opts)
                     for name, net, opts in RUNS},
    "python_runs": python_runs,
    "batched": batched_runs,
    "fixed_points": fixed_points,
    "pep": pep_certificates,
    "audits": audits,
    "control": control,
    "verify": verify_checks,
    "cli_runs": cli_runs,
}
