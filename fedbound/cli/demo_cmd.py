"""``fedbound demo``: an end-to-end tour on one SD-GT fog network.

network (RGG, 3 subnets of 10) -> task (AR(1) least squares, exact constants) -> theory (Theorem 3's
step-size cap and floor, Theorem 2's caps, Table I, the audit) -> algorithms (SD-GT against SD-FedAvg
and SCAFFOLD at 40% sampling) -> control (the GP plan of K and h_s for given energy costs).
Everything printed is computed; the files go under ``--out`` (summary.json, network.json,
metrics.csv, convergence.png, audit.json).
"""
from __future__ import annotations

from fedbound.cli.commands import SUMMARIES

import csv

import numpy as np

from fedbound import resources, validate
from fedbound.outputs import atomic_open, atomic_path, output_folder, write_json

SECTION = "\n== {} " + "=" * 60


def register(subparsers) -> None:
    parser = subparsers.add_parser("demo", help=SUMMARIES["demo"],
                                   description=__doc__)
    parser.add_argument("--out", default="demo_out", help="output folder (default: demo_out)")
    parser.add_argument("--rounds", type=int, default=400, help="global rounds of each run")
    parser.add_argument("--seed", type=int, default=0)
    parser.set_defaults(func=demo)


def _show(title: str) -> None:
    print(SECTION.format(title)[:72])


def demo(args) -> int:
    from fedbound.errors import require

    require(args.rounds >= 1, f"--rounds must be >= 1, got {args.rounds}")
    validate.seed(args.seed, "--seed")
    resources.require_run_memory("the demo's runs", args.rounds, 30, 40, seeds=3)
    out = output_folder(args).create()
    summary: dict = {}
    net = _network(args, out, summary)
    task = _task(args, summary)
    _theory(task, net, out, summary)
    _runs(task, net, args, out, summary)
    _control(net, args, summary)
    write_json(out / "summary.json", summary, indent=2)
    print(f"\nfiles written under {out}/: " + ", ".join(sorted(p.name for p in out.iterdir())))
    return 0


def _network(args, out, summary):
    from fedbound.network import Network, p_from_h

    _show("network: SD-GT random geometric fog network (sdgt.md 6.1)")
    net = Network.random_geometric(S=3, m=10, seed=args.seed)
    h = np.full(net.S, 4)
    p = p_from_h(h, net.m)
    for s in range(net.S):
        print(f"subnet {s}: m_s = {net.m[s]}, rho_s = 1 - ||W_s - J||^2 = {net.rho[s]:.4f}, "
              f"||W_s - J|| = {net.spectral_norms[s]:.4f}, gap = {net.spectral_gaps[s]:.4f}")
    print(f"q = min_s rho_s = {net.q:.4f}; sampling h_s = 4 of 10 gives p = {p:.4f}")
    write_json(out / "network.json", net.to_json())
    summary["network"] = {"S": net.S, "m": net.m.tolist(), "rho": net.rho.tolist(), "q": net.q, "p": p}
    return net


def _task(args, summary):
    from fedbound.tasks import LeastSquares

    _show("task: AR(1) least squares with exact constants (sdgt.md 6.2)")
    task = LeastSquares.generate(n=30, m=30, d=40, condition_number=20.0, seed=args.seed)
    print(f"n = {task.n}, d = {task.d}; L = {task.L:.4f} (max_i lambda_max of f_i), "
          f"mu_global = {task.mu_global:.4g}, per-client mu = {task.mu:.3g} (flag F34)")
    print(f"||grad f(x*)|| = {float(task.global_grad(task.x_star).norm()):.2e}")
    summary["task"] = {"n": task.n, "d": task.d, "L": task.L, "mu_global": task.mu_global,
                       "mu_client": task.mu}
    return task


def _theory(task, net, out, summary):
    from fedbound.network import p_from_h
    from fedbound.theory import get
    from fedbound.theory.audit import run_audit
    from fedbound.theory.sdgt.table1 import table1_rounds

    _show("theory: SD-GT step-size caps, Theorem 3, Table I, audit")
    p = p_from_h(np.full(net.S, 4), net.m)
    consts = dict(L=task.L, mu=task.mu_global, K=5, p=p, q=net.q, n=task.n, sigma=0.0)
    thm3 = get("sdgt.thm3")
    rows = {}
    for variant in thm3.variants:
        gamma, binding = thm3.max_step(variant, **consts)
        ev = thm3.evaluate(variant, **consts, gamma=float(gamma), T=100, Lyap1=1.0)
        rows[variant] = {"gamma_bar": float(gamma), "binding": str(binding),
                         "A_l1": float(ev.extras["A_l1"]),
                         "contraction": float(1 - task.mu_global * 5 * gamma / 4)}
        print(f"Thm 3 [{variant}]: gamma_bar = {float(gamma):.3e} (binding: {binding}); "
              f"||A||_1 = {rows[variant]['A_l1']:.12f} vs 1 - mu K gamma/4 = "
              f"{rows[variant]['contraction']:.12f}")
    thm2 = get("sdgt.thm2")
    for variant in thm2.variants:
        gamma, binding = thm2.max_step(variant, **consts)
        print(f"Thm 2 [{variant}]: largest admissible gamma = {float(gamma):.3e} ({binding})")
    rounds = table1_rounds(1e-3, sigma=1.0, n=task.n, K=5, p=p, q=net.q, rho=net.q, eta=1.0,
                           eta_s=1.0)
    print("Table I, rounds to eps = 1e-3 (constants set to 1 as in the paper):")
    for method, value in rounds.items():
        print(f"  {method:10s} {float(value):.3e}")
    reports = run_audit("sdgt", samples=2000, seed=0)
    failed = [r for r in reports if r.verdict == "fails"]
    print(f"audit: {len(reports)} printed claims checked, {len(failed)} fail:")
    for r in failed:
        print(f"  FAILS {r.claim} [{r.variant}] ({r.flag}): violation ratio {r.violation_ratio:.3g}")
    write_json(out / "audit.json", reports)
    summary["theory"] = {"thm3": rows, "table1": {k: float(v) for k, v in rounds.items()},
                         "audit_failures": [f"{r.claim} [{r.variant}]" for r in failed]}


def _runs(task, net, args, out, summary):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fedbound.algorithms import registry, run

    _show(f"algorithms: {args.rounds} rounds, K = 5, 40% sampling, gamma = 0.5/(K L)")
    gamma = 0.5 / (5 * task.L)
    runs = {}
    for name in ("sdgt", "sd-fedavg", "scaffold"):
        alg = registry.build(name, task, net, seed=args.seed, lr=gamma, local_steps=5,
                             clients_per_subnet=4)
        traj = run(alg, args.rounds)
        runs[traj.algorithm] = traj
        print(f"{traj.algorithm:10s} ||x_g - x*||^2: {traj.dist2[0]:.3e} -> {traj.dist2[-1]:.3e}; "
              f"D2D messages {int(traj.comm['d2d_messages'][-1])}, "
              f"uploads {int(traj.comm['uploads'][-1])}")
    with atomic_open(out / "metrics.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["round"] + [f"dist2_{name}" for name in runs])
        for r in range(args.rounds + 1):
            writer.writerow([r] + [f"{t.dist2[r]:.6e}" for t in runs.values()])
    fig, ax = plt.subplots(figsize=(6, 4))
    for (name, traj), style in zip(runs.items(), ["-", "-", "--"]):
        ax.semilogy(traj.rounds, traj.dist2, style, label=name)
    ax.set_xlabel("global round t")
    ax.set_ylabel(r"$\|x_g^t - x^\star\|^2$")
    ax.set_title("AR(1) least squares, 3 subnets of 10, 40% sampling")
    ax.legend()
    fig.tight_layout()
    with atomic_path(out / "convergence.png") as tmp:
        fig.savefig(tmp, dpi=120)
    plt.close(fig)
    summary["runs"] = {name: {"dist2_initial": float(t.dist2[0]), "dist2_final": float(t.dist2[-1])}
                       for name, t in runs.items()}


def _control(net, args, summary):
    from fedbound.control import ControlProblem, NetSpec, plan

    _show("control: D2D rounds K and samples h_s from the geometric program (31)")
    rng = validate.rng(args.seed, "--seed")
    E = rng.uniform(1, 100, net.S)
    for delta in (0.01, 1.0):
        spec = NetSpec(m=net.m.tolist(), E=E.tolist(), E_d2d=(delta * E).tolist())
        result = plan(ControlProblem(spec, H=1.0, lambdas=(1.0, 0.1, 1e-5), K_cap=49))
        print(f"E_d2d/E = {delta:g}: K = {result.K}, h = {list(result.h)}, p = {result.p:.4f}, "
              f"objective = {result.objective:.5f} (continuous lower bound {result.lower_bound:.5f})")
        summary.setdefault("control", {})[str(delta)] = result.to_dict()
