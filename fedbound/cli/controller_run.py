"""``fedbound run sdgt --controller SPEC.json``: SD-GT steered by its controller (Algorithm 2).

Example (the paper's setting: 3 subnets of 10 clients, weights (1, 0.1, 1e-5))::

    fedbound run sdgt --controller net.json --task mlp-digits --rgg --lr 0.05 --rounds 50 \\
        --lambdas 1,0.1,1e-5 --K-cap 49 --control-every 1 --out DIR

SPEC.json is the controller's network spec (``fedbound control plan --spec``): subnet sizes m_s,
device-server costs E_s and D2D costs E_s^D2D (optional "gamma", which must equal --lr). The
run starts from K_1 = 1 and 20% sampling (seed 003 [L552]); after every r-th round
(--control-every r) Algorithm 2 estimates H-hat (28)-(30) and sets K and h_s for the next rounds by
the certified integer plan of (31) (:class:`fedbound.control.ClosedLoop`). --local-steps and
--clients-per-subnet are not used: the controller chooses them. Without a network option the network has one subnet per
spec entry (equal sizes needed; use --network FILE.json otherwise) and n defaults to sum_s m_s.

Writes DIR/controller.csv and DIR/controller.json (per round: K_t, h_t, p_t, Y-hat, Gamma-hat,
H-hat, objective, energy, loss, accuracy, the unconstrained root K* of (118) and Theorem 5's
printed and corrected bounds with their verdicts) and DIR/controller.png (K_t with the bounds,
and accuracy or loss against cumulative energy).
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
from pathlib import Path

import numpy as np

from fedbound import resources
from fedbound.errors import require
from fedbound.jsonable import jsonable
from fedbound.outputs import atomic_open, atomic_path, output_folder, write_json

#: per-round fields written as one column each (h and h_next are expanded per subnet)
SCALAR_FIELDS = ("t", "K", "p", "energy_round", "energy", "loss", "accuracy", "controlled", "Y_hat",
                 "Gamma_hat", "H_hat", "objective", "lower_bound", "K_continuous", "p_continuous",
                 "K_root", "thm5_printed_lower", "thm5_printed_upper", "thm5_corrected_lower",
                 "thm5_corrected_upper", "printed_contains_root", "corrected_contains_root",
                 "K_next", "p_next")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The controller options of ``fedbound run``."""
    from fedbound.cli.control_cmd import add_controller_options

    group = parser.add_argument_group("controller (SD-GT Algorithm 2, with --controller)")
    group.add_argument("--controller", default=None, metavar="SPEC.json",
                       help='run SD-GT in closed loop with its controller for the network spec '
                            '{"subnets": [{"m": 10, "E": 42.0, "E_d2d": 0.4}, ...]}')
    group.add_argument("--control-every", type=int, default=1, metavar="r",
                       help="run Algorithm 2 after every r-th round (default 1)")
    add_controller_options(group, method_default="reduced")


def _csv_rows(traj, S: int):
    header = list(SCALAR_FIELDS) + [f"h_{s}" for s in range(S)] + [f"h_next_{s}" for s in range(S)]
    rows = []
    for log in traj.logs:
        values = [getattr(log, name) for name in SCALAR_FIELDS] + list(log.h) + list(log.h_next)
        rows.append([int(v) if isinstance(v, (bool, np.bool_)) else
                     repr(float(v)) if isinstance(v, (float, np.floating)) else v for v in values])
    return header, rows


def theorem5_summary(traj) -> dict:
    """How often each Theorem 5 interval contained the unconstrained K* over the control steps,
    with the first round where the printed one did not (its numbers)."""
    steps = [log for log in traj.logs if log.controlled]
    failing = [log for log in steps if not log.printed_contains_root]
    first = None
    if failing:
        log = failing[0]
        first = {"t": log.t, "H_hat": log.H_hat, "K_root": log.K_root,
                 "printed": [log.thm5_printed_lower, log.thm5_printed_upper],
                 "corrected": [log.thm5_corrected_lower, log.thm5_corrected_upper]}
    return {"control_steps": len(steps),
            "printed_contains_K_root": sum(log.printed_contains_root for log in steps),
            "corrected_contains_K_root": sum(log.corrected_contains_root for log in steps),
            "first_printed_failure": first}


def plot_controller(traj, K_cap: int, path: Path) -> None:
    """K_t with the unconstrained root and Theorem 5's bounds; accuracy (or loss) vs energy."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = traj.column("t")[1:]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    ax.step(t, traj.column("K")[1:], where="mid", color="k", label="K_t (integer plan)")
    ax.plot(t, traj.column("K_root")[1:], ".", color="C0", label="K* root of (118), no cap")
    for name, style in (("corrected", "-"), ("printed", "--")):
        for side in ("lower", "upper"):
            ax.plot(t, traj.column(f"thm5_{name}_{side}")[1:], style, alpha=0.7,
                    color="C2" if name == "corrected" else "C3",
                    label=f"Thm 5 {name} bounds" if side == "lower" else None)
    ax.axhline(K_cap, color="grey", lw=0.8, ls=":", label="K_cap")
    ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("D2D rounds")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    accuracy = traj.column("accuracy")
    energy = traj.column("energy")
    if np.all(np.isfinite(accuracy)):
        ax2.plot(energy, accuracy, "-o", ms=3)
        ax2.set_ylabel("test accuracy")
    else:
        ax2.semilogy(energy, traj.column("loss"), "-o", ms=3)
        ax2.set_ylabel("f(x_g)")
    ax2.set_xlabel("cumulative energy")
    ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100)
    plt.close(fig)


def write_outputs(out: Path, traj, config: dict, S: int) -> dict[str, str]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {"csv": out / "controller.csv", "json": out / "controller.json",
             "plot": out / "controller.png"}
    header, rows = _csv_rows(traj, S)
    with atomic_open(paths["csv"], "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    payload = {"config": config, **traj.to_dict(), "theorem5": theorem5_summary(traj)}
    write_json(paths["json"], payload)
    plot_controller(traj, config["controller"]["K_cap"], paths["plot"])
    return {k: str(v) for k, v in paths.items()}


def run_controlled(args, options: dict) -> int:
    """``fedbound run sdgt --controller SPEC.json ...`` (module docstring); ``options`` are SD-GT's
    checked options (its step size ``lr``; the controller chooses the local steps and the
    clients per subnet)."""
    import torch

    from fedbound.algorithms import SDGT, EnergyModel
    from fedbound.cli.control_cmd import kcap_from, lambdas_from, load_spec_file
    from fedbound.cli.problem import problem_from
    from fedbound.control import ClosedLoop
    from fedbound.network.build import build_network

    require(args.algorithm == "sdgt", f"--controller steers SD-GT only, got {args.algorithm}")
    require(options.get("clients_per_subnet") is None,
            "--clients-per-subnet is chosen by the controller; drop it")
    require(args.rounds >= 0, f"--rounds must be an integer >= 0, got {args.rounds}")
    gamma = options["lr"]
    require(args.sigma >= 0 and np.isfinite(args.sigma), f"--sigma must be >= 0, got {args.sigma}")
    require(args.control_every >= 1, f"--control-every must be an integer >= 1, got {args.control_every}")
    spec = load_spec_file(args.controller)
    require(spec.gamma is None or spec.gamma == gamma,
            f"the spec's gamma {spec.gamma!r} differs from --lr {gamma!r}; pass --lr {spec.gamma!r}")
    lambdas = lambdas_from(args)
    problem = problem_from(args, n=int(spec.m.sum()))
    task = problem.task
    network = build_network(task.n, seed=problem.task_options["seed"], default_subnets=spec.S,
                            **problem.network_options)
    resources.require_run_memory("the closed-loop run", args.rounds, task.n, task.d)
    require(np.array_equal(network.m, spec.m),
            f"the network's subnet sizes {network.m.tolist()} differ from the spec's {spec.m.tolist()}")
    noisy = task.with_noise(args.sigma) if args.sigma > 0 else task
    alg = SDGT(noisy, network, lr=gamma, local_steps=1, seed=problem.task_options["seed"],
               energy=EnergyModel(spec.E, spec.E_d2d))
    loop = ClosedLoop(alg, spec, lambdas, kcap_from(args), every=args.control_every,
                      variant=args.variant, method=args.method)
    out = output_folder(args).create()   # marked incomplete until the command succeeds
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    traj = loop.run(args.rounds, progress=True)
    config = {"algorithm": "sdgt", "task": problem.task_options.get("data") or args.task, "n": task.n, "d": task.d,
              "S": network.S, "m": network.m.tolist(), "q": network.q, "sigma": args.sigma,
              "rounds": args.rounds, "controller": {**loop.settings, "K_cap": loop.problem.K_cap}}
    files = write_outputs(out, traj, config, network.S)
    last = traj.logs[-1]
    K = traj.column("K")[1:]
    final = {"loss": last.loss, "accuracy": last.accuracy, "energy": last.energy,
             "K_min": int(K.min()) if K.size else None, "K_max": int(K.max()) if K.size else None,
             "K_next": last.K_next, "h_next": list(last.h_next)}
    thm5 = theorem5_summary(traj)
    if args.json:
        print(json.dumps(jsonable({"config": config, "final": final, "theorem5": thm5, "files": files}),
                         indent=2, allow_nan=False))
        return 0
    acc = "" if math.isnan(last.accuracy) else f", accuracy {last.accuracy:.4f}"
    print(f"SD-GT + Algorithm 2: {args.rounds} rounds on {config['task']} (n = {task.n}, d = {task.d}); "
          f"final loss {last.loss:.6g}{acc}, energy {last.energy:.6g}")
    if K.size:
        print(f"K_t in [{final['K_min']}, {final['K_max']}], next K = {last.K_next}, "
              f"h = {list(last.h_next)}")
    print(f"Theorem 5 over {thm5['control_steps']} control steps: the corrected interval contains "
          f"the unconstrained K* {thm5['corrected_contains_K_root']} times, the printed one "
          f"{thm5['printed_contains_K_root']} times")
    print(f"wrote {', '.join(files.values())}")
    return 0
