"""``fedbound demo``: a tour of the whole toolkit, written to one page (``--out``/index.html).

For each of the four papers (SD-GT, FedNova, AFGA, FedAda2): its main bound evaluated at the
constants of the demo's runs, its audit headline (claims that hold and fail, by severity) and one of
its algorithms run against the paper's prediction; then the SD-GT controller's plan, one PEP
worst-case certificate and a small sweep with 95% intervals. Every number is computed in the run.
Files under ``--out``: index.html (every table and plot; no Python needed to read it), its PNG
plots, summary.json (every section's numbers), audit.json, network.json, metrics.csv,
sweep-spec.json and the sweep's results store (sweep/).
"""
from __future__ import annotations

from fedbound.cli.commands import SUMMARIES

import csv
import json
import time
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from fedbound import resources, validate
from fedbound.cli import demo_page as page
from fedbound.outputs import atomic_open, atomic_path, output_folder, write_json, write_text

SECTION = "\n== {} " + "=" * 60
#: SD-GT's runs: D2D rounds K, clients sampled per subnet h_s (of 10), step gamma = STEP / (K L)
K, H, STEP = 5, 4, 0.5
#: FedNova's heterogeneous local steps (cycled over the clients) and step size
FEDNOVA_STEPS, FEDNOVA_LR = (1, 3, 5, 8), 0.05
#: the controller's weights (lambda1, lambda2, lambda3), D2D-to-server cost ratios, cap on K
LAMBDAS, COST_RATIOS, K_CAP = (1.0, 0.1, 1e-4), (0.01, 0.1, 1.0), 49
#: the PEP certificate: ``fedbound pep sdgt --rounds 2 --local-steps 2``
PEP_METHOD, PEP_OPTIONS = "sdgt", {"rounds": 2, "local_steps": 2}


@dataclass(frozen=True)
class Scale:
    """How much the tour computes: random samples per audited claim (no adversarial search), the
    horizon and seeds of the Monte-Carlo theorem checks, the rounds and seeds of the sweep."""

    name: str
    audit_samples: int
    check_rounds: int
    check_seeds: int
    sweep_rounds: int
    sweep_seeds: int


SCALES = {"full": Scale("full", 1000, 50, 8, 60, 5), "quick": Scale("quick", 200, 20, 3, 20, 3)}


@dataclass
class Tour:
    """What the sections share: the output folder, the options, the numbers (``summary``, written
    to summary.json), the audit reports (audit.json) and the verify problem (a quadratic)."""

    out: Path
    rounds: int
    seed: int
    scale: Scale
    summary: dict = field(default_factory=dict)
    audits: dict = field(default_factory=dict)

    @cached_property
    def quadratic(self):
        """The problem of ``fedbound verify`` (heterogeneous quadratics, the preset's clients,
        d = 5, float64), the same for FedNova, AFGA and FedAda2."""
        from fedbound.algorithms.problem import Problem

        return Problem("quadratic", {"float64": True, "d": 5, "seed": self.seed}, {})

    def save(self, fig, name: str) -> str:
        """Write the matplotlib figure ``fig`` to ``out/name`` (PNG, atomically); returns ``name``."""
        fig.tight_layout()
        with atomic_path(self.out / name) as tmp:
            fig.savefig(tmp, dpi=100, format="png")
        return name


def register(subparsers) -> None:
    parser = subparsers.add_parser("demo", help=SUMMARIES["demo"],
                                   description=__doc__.replace("``", ""))
    parser.add_argument("--out", default="demo_out", help="output folder (default: demo_out)")
    parser.add_argument("--rounds", type=int, default=200,
                        help="global rounds of the SD-GT and FedNova runs, at least 10 (default 200)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the networks, tasks, runs and audit samples (default 0)")
    parser.add_argument("--quick", action="store_true",
                        help="small scale (fewer audit samples, Monte-Carlo seeds and sweep runs; "
                             "the same sections), for tests")
    parser.set_defaults(func=demo)


def _show(title: str) -> None:
    print(SECTION.format(title)[:72])


def demo(args) -> int:
    import torch
    from threadpoolctl import threadpool_limits

    rounds = validate.integer("--rounds", args.rounds, low=10, high=100_000)
    seed = validate.seed(args.seed, "--seed")
    resources.require_run_memory("the demo's runs", rounds, 30, 40, seeds=3)
    start = time.perf_counter()
    tour = Tour(output_folder(args).create(), rounds, seed, SCALES["quick" if args.quick else "full"])
    print(f"fedbound demo ({tour.scale.name} scale): the page will be {tour.out / 'index.html'}")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)        # small dense problems: threads only add contention
    sections, timings = [], {}
    try:
        with threadpool_limits(1):
            net = _network(tour)
            for build, *shared in ((_sdgt, net), (_fednova,), (_afga,), (_fedada2,),
                                   (_controller, net), (_pep,), (_sweep,)):
                begin = time.perf_counter()
                sections.append(build(tour, *shared))
                timings[sections[-1][0]] = time.perf_counter() - begin
    finally:
        torch.set_num_threads(threads)
    seconds = time.perf_counter() - start
    tour.summary["settings"] = {"rounds": rounds, "seed": seed, "scale": asdict(tour.scale),
                                "seconds": seconds, "seconds_per_section": timings}
    write_json(tour.out / "summary.json", tour.summary, indent=2)
    write_json(tour.out / "audit.json", tour.audits)
    index = tour.out / "index.html"
    write_text(index, page.page("fedbound demo: a tour of the toolkit", _intro(tour, seconds),
                                sections))
    files = ", ".join(sorted(p.name for p in tour.out.iterdir()))
    print(f"\nfiles written under {tour.out}/: {files}")
    print(f"open {index}")
    return 0


def _intro(tour: Tour, seconds: float) -> list[str]:
    s = tour.scale
    return [page.paragraph(
        "Convergence theory of four federated-learning papers as executable objects: each paper's "
        "main bound at the constants of the runs below, its audit (every checkable claim evaluated "
        "on admissible constants; verdicts computed), and one of its algorithms run against the "
        "paper's prediction; then the SD-GT controller, a worst-case certificate and a sweep."),
        page.table(["setting", "value"], [
            ("seed", tour.seed), ("rounds of the SD-GT and FedNova runs", tour.rounds),
            ("scale", s.name), ("audit: random samples per claim", s.audit_samples),
            ("theorem checks: rounds, Monte-Carlo seeds", f"{s.check_rounds}, {s.check_seeds}"),
            ("sweep: rounds, seeds per configuration", f"{s.sweep_rounds}, {s.sweep_seeds}"),
            ("computed in (s)", round(seconds, 1))])]


# ---- the audit and the theorem checks, shared by the paper sections ------------------------------

def _audit(tour: Tour, paper: str) -> list[str]:
    """The audit of ``paper`` (:func:`fedbound.theory.audit.run_audit`) at the tour's samples per
    claim and no adversarial search: the headline (holds / fails by severity) and the failures."""
    from fedbound.theory.audit import run_audit
    from fedbound.theory.audit_report import SEVERITIES, format_ratio

    samples = tour.scale.audit_samples
    reports = run_audit(paper, samples=samples, seed=tour.seed, iterations=0)
    tour.audits[paper] = reports
    failed = [r for r in reports if r.verdict == "fails"]
    severity = {s: sum(r.severity == s for r in failed) for s in reversed(SEVERITIES) if s != "holds"}
    counts = ", ".join(f"{n} {s}" for s, n in severity.items() if n)
    headline = (f"audit: {len(reports)} claims, {len(reports) - len(failed)} hold, {len(failed)} fail"
                + (f" ({counts})" if counts else ""))
    print(f"{headline}; {samples} random samples per claim")
    for r in failed:
        print(f"  FAILS {r.claim} [{r.variant}] ({r.flag}): {r.severity}, ratio {format_ratio(r)}")
    tour.summary[paper]["audit"] = {
        "claims": len(reports), "holds": len(reports) - len(failed), "fails": len(failed),
        "by_severity": severity, "samples": samples,
        "failures": [f"{r.claim} [{r.variant}]" for r in failed]}
    return [page.paragraph(
        f"{headline}. Each claim evaluated at {samples} random samples of its domain and at the "
        f"domain's extremes, without the adversarial search of `fedbound audit {paper}` (which may "
        f"find more or grade a failure differently)."),
        page.table(["claim", "variant", "flag", "kind", "severity", "violation ratio lhs/rhs"],
                   [(r.claim, r.variant, r.flag, r.kind, r.severity, format_ratio(r)) for r in failed],
                   caption=f"{paper}: failing claims")]


def _theorem_check(tour: Tour, name: str) -> list:
    """The checks of the registered verify check ``name`` (``fedbound verify PAPER CHECK``) on the
    tour's quadratic at the tour's rounds and seeds, printed."""
    from fedbound.verify.registry import CHECKS

    check = CHECKS.get(name)
    options = check.check({"rounds": tour.scale.check_rounds, "seeds": tour.scale.check_seeds})
    _, checks = check.run(tour.quadratic, **options)
    for c in checks:
        print("  " + c.summary())
    return checks


def _bound_rows(checks: list) -> list[dict]:
    """Per check: the bound of its result and variant evaluated at the run's constants (the paper's
    adapter) at the check's last horizon T (``Result.evaluate``), its largest step
    (``Result.max_step``), the measurement at T (Monte-Carlo mean, 95% interval) and the check's
    verdict over every horizon; for a check outside the theorem, the conditions that fail."""
    from fedbound.theory import get

    rows = []
    for c in checks:
        result = get(c.details["result"])
        row = {"result": result.id, "algorithm": c.details["algorithm"], "variant": c.variant,
               "status": c.status, "T": None, "step": None, "bound": None, "measured": None,
               "low": None, "high": None, "worst_ratio": None}
        if c.status == "not applicable":
            row["status"] = f"not applicable: {'; '.join(map(str, c.details['conditions']))}"
        else:
            T, est = c.details["horizons"][-1], c.details["measured"]
            constants = {**c.details["constants"], result.rounds: float(T)}
            row.update(T=T, bound=float(result.evaluate(c.variant, **constants).bound),
                       step=_largest_step(result, c.variant, constants), measured=float(est.mean[-1]),
                       low=float(est.low[-1]), high=float(est.high[-1]), worst_ratio=c.ratio)
        rows.append(row)
    return rows


def _largest_step(result, variant: str, constants: dict) -> str | None:
    """``variable <= cap (binding condition)`` of the variant's step conditions, at the constants
    other than the step itself; None unless the conditions constrain exactly one step variable."""
    variables = {c.variable_name for c in result.variant(variant).conditions}
    if len(variables) != 1:
        return None
    (variable,) = variables
    cap, binding = result.max_step(variant, variable,
                                   **{k: v for k, v in constants.items() if k != variable})
    return f"{variable} = {constants[variable]:.4g} <= {float(cap):.4g} ({binding})"


def _bound_table(rows: list[dict], caption: str) -> str:
    return page.table(
        ["result", "algorithm", "variant", "step condition at the run", "horizon T", "bound at T",
         "measured at T", "95% low", "95% high", "largest measured/bound over the horizons",
         "verdict over the horizons"],
        [(r["result"], r["algorithm"], r["variant"], r["step"], r["T"], r["bound"], r["measured"],
          r["low"], r["high"], r["worst_ratio"], r["status"]) for r in rows], caption=caption)


def _check_plot(tour: Tour, checks: list, name: str, title: str) -> str:
    """Measured (Monte-Carlo mean and 95% band, per algorithm and measure) and every applicable
    variant's bound against the horizon T (bounds equal to 6 digits drawn once), log scales; the
    PNG's name."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.2))
    ax = fig.add_subplot()
    applicable = [c for c in checks if c.status != "not applicable"]
    measured = {(c.details["algorithm"], c.details["measure"]): c for c in applicable}
    for (algorithm, measure), c in measured.items():
        T, est = c.details["horizons"], c.details["measured"]
        line, = ax.plot(T, est.mean, "o-", label=f"{algorithm}: measured {measure}")
        ax.fill_between(T, est.low, est.high, color=line.get_color(), alpha=0.25)
    bounds: dict[tuple, list[str]] = {}
    for c in applicable:
        key = (c.details["result"], c.details["algorithm"], tuple(c.details["horizons"]),
               tuple(float(f"{v:.6g}") for v in np.asarray(c.details["predicted"], dtype=float)))
        bounds.setdefault(key, []).append(c.variant)
    for (result, algorithm, T, values), variants in bounds.items():
        more = f" and {len(variants) - 1} more" if len(variants) > 1 else ""
        ax.plot(T, values, "--", label=f"{result} [{variants[0]}{more}] ({algorithm})")
    ax.set_yscale("log")
    ax.set_xscale("log")
    ax.set_xlabel("horizon T (rounds)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=6)
    return tour.save(fig, name)


def _verify_command(tour: Tour, paper: str, check: str) -> str:
    s = tour.scale
    return (f"fedbound verify {paper} {check} --rounds {s.check_rounds} --seeds {s.check_seeds} "
            f"--seed {tour.seed}")


def _bound_and_audit(tour: Tour, paper: str, check: str, title: str) -> list[str]:
    """A paper section's bound table and plot from its theorem check ``paper.check``, then its
    audit."""
    checks = _theorem_check(tour, f"{paper}.{check}")
    rows = _bound_rows(checks)
    tour.summary[paper] = {"bound": rows}
    plot = _check_plot(tour, checks, f"{paper}-bound.png", title)
    return [page.code(_verify_command(tour, paper, check)),
            _bound_table(rows, f"{title}: bound and measurement"),
            page.figure(plot, f"{title}: measured (mean, 95% band) against the bound, per horizon T"),
            *_audit(tour, paper)]


# ---- SD-GT ---------------------------------------------------------------------------------------

def _network(tour: Tour):
    """SD-GT's random geometric fog network (sdgt.md 6.1): 3 subnets of 10, rho_s and q."""
    from fedbound.network import Network, p_from_h

    net = Network.random_geometric(S=3, m=10, seed=tour.seed)
    p = p_from_h(np.full(net.S, H), net.m)
    write_json(tour.out / "network.json", net.to_json())
    tour.summary["sdgt"] = {"network": {"S": net.S, "m": net.m.tolist(), "rho": net.rho.tolist(),
                                        "q": net.q, "p": p}}
    return net


def _sdgt(tour: Tour, net) -> tuple:
    """SD-GT (seed 003), the central paper: the fog network, the task with exact constants,
    Theorem 3's step-size caps (sdgt.thm3), Theorem 2's (sdgt.thm2), Table I (sdgt.table1), the
    audit, and SD-GT run against SD-FedAvg and SCAFFOLD with its measured contraction set against
    Theorem 3's rate 1 - mu K gamma/4."""
    from fedbound.tasks import LeastSquares

    _show("SD-GT: network, task, Theorems 2-3, Table I, audit, runs")
    numbers = tour.summary["sdgt"]["network"]
    for s in range(net.S):
        print(f"subnet {s}: m_s = {net.m[s]}, rho_s = {net.rho[s]:.4f}, ||W_s - J|| = "
              f"{net.spectral_norms[s]:.4f}, gap = {net.spectral_gaps[s]:.4f}")
    print(f"q = min_s rho_s = {net.q:.4f}; sampling h_s = {H} of 10 gives p = {numbers['p']:.4f}")
    task = LeastSquares.generate(n=30, m=30, d=40, condition_number=20.0, seed=tour.seed)
    print(f"task: AR(1) least squares, n = {task.n}, d = {task.d}; L = {task.L:.4f}, mu_global = "
          f"{task.mu_global:.4g}, per-client mu = {task.mu:.3g} (flag F34)")
    tour.summary["sdgt"]["task"] = {"n": task.n, "d": task.d, "L": task.L, "mu_global": task.mu_global,
                                    "mu_client": task.mu}
    parts = [page.paragraph(
        f"Fog network: {net.S} subnets of {net.m[0]} devices (random geometric graphs, sdgt.md 6.1), "
        f"q = min_s rho_s = {net.q:.4g}; {H} of 10 devices sampled per subnet: p = {numbers['p']:.4g}. "
        f"Task: AR(1) least squares, n = {task.n}, d = {task.d}, L = {task.L:.4g}, "
        f"mu (global) = {task.mu_global:.4g}, mu (per client) = {task.mu:.3g}."),
        page.table(["subnet", "m_s", "rho_s", "||W_s - J||", "spectral gap"],
                   [(s, int(net.m[s]), net.rho[s], net.spectral_norms[s], net.spectral_gaps[s])
                    for s in range(net.S)], caption="the subnets")]
    parts += _sdgt_theory(tour, task, net)
    parts += _audit(tour, "sdgt")
    parts += _sdgt_runs(tour, task, net)
    return "sdgt", "SD-GT: semi-decentralized gradient tracking", parts


def _sdgt_theory(tour: Tour, task, net) -> list[str]:
    """Theorem 3 (sdgt.thm3) per variant at the demo's constants: gamma_bar, its binding condition,
    ||A||_1 against 1 - mu K gamma/4 (flag F18); Theorem 2's caps (sdgt.thm2); Table I's rounds to
    eps = 1e-3 (sdgt.table1, constants set to 1 as in the paper)."""
    from fedbound.theory import get
    from fedbound.theory.sdgt.table1 import table1_rounds

    p = tour.summary["sdgt"]["network"]["p"]
    consts = dict(L=task.L, mu=task.mu_global, K=K, p=p, q=net.q, n=task.n, sigma=0.0)
    thm3, rows = get("sdgt.thm3"), {}
    for variant in thm3.variants:
        gamma, binding = thm3.max_step(variant, **consts)
        ev = thm3.evaluate(variant, **consts, gamma=float(gamma), T=100, Lyap1=1.0)
        rows[variant] = {"gamma_bar": float(gamma), "binding": str(binding),
                         "A_l1": float(ev.extras["A_l1"]),
                         "contraction": float(1 - task.mu_global * K * gamma / 4)}
        print(f"Thm 3 [{variant}]: gamma_bar = {float(gamma):.3e} ({binding}); ||A||_1 = "
              f"{rows[variant]['A_l1']:.12f} vs 1 - mu K gamma/4 = {rows[variant]['contraction']:.12f}")
    thm2, caps = get("sdgt.thm2"), {}
    for variant in thm2.variants:
        gamma, binding = thm2.max_step(variant, **consts)
        caps[variant] = {"gamma": float(gamma), "binding": str(binding)}
        print(f"Thm 2 [{variant}]: largest admissible gamma = {float(gamma):.3e} ({binding})")
    table1 = {k: float(v) for k, v in table1_rounds(1e-3, sigma=1.0, n=task.n, K=K, p=p, q=net.q,
                                                    rho=net.q, eta=1.0, eta_s=1.0).items()}
    print("Table I, rounds to eps = 1e-3: " + ", ".join(f"{k} {v:.3e}" for k, v in table1.items()))
    tour.summary["sdgt"]["theory"] = {"thm3": rows, "thm2": caps, "table1": table1}
    return [
        page.table(["variant", "gamma_bar", "binding condition", "||A||_1", "1 - mu K gamma_bar/4",
                    "||A||_1 <= 1 - mu K gamma/4 (95)"],
                   [(v, r["gamma_bar"], r["binding"], f"{r['A_l1']:.12f}", f"{r['contraction']:.12f}",
                     "holds" if r["A_l1"] <= r["contraction"] else "fails")
                    for v, r in rows.items()],
                   caption=f"sdgt.thm3 (strongly convex) at the demo's L, mu (global), K = {K}, "
                           f"p, q, n"),
        page.table(["variant", "largest gamma", "binding condition"],
                   [(v, c["gamma"], c["binding"]) for v, c in caps.items()],
                   caption="sdgt.thm2 (weakly convex)"),
        page.table(["method", "rounds to eps = 1e-3"], list(table1.items()),
                   caption="sdgt.table1: Table I (non-convex), sigma = 1 and the paper's constants 1")]


def _sdgt_runs(tour: Tour, task, net) -> list[str]:
    """SD-GT, SD-FedAvg and SCAFFOLD at gamma = STEP/(K L), K D2D rounds, h_s of 10 sampled: the
    squared distance to x* per round (metrics.csv, convergence.png), SD-GT's contraction per round
    fitted (95% interval) against Theorem 3's 1 - mu K gamma/4 at the same gamma (outside its step
    condition gamma <= gamma_bar: the theorem does not cover the run)."""
    from matplotlib.figure import Figure

    from fedbound.algorithms import registry, run
    from fedbound.verify.rates import fit_log_linear

    gamma = STEP / (K * task.L)
    rate = 1 - task.mu_global * K * gamma / 4
    gamma_bar = min(r["gamma_bar"] for r in tour.summary["sdgt"]["theory"]["thm3"].values())
    print(f"runs: {tour.rounds} rounds, K = {K}, h_s = {H} of 10, gamma = {STEP}/(K L) = {gamma:.4g}")
    runs = {}
    for name in ("sdgt", "sd-fedavg", "scaffold"):
        alg = registry.build(name, task, net, seed=tour.seed, lr=gamma, local_steps=K,
                             clients_per_subnet=H)
        runs[name] = traj = run(alg, tour.rounds)
        print(f"{traj.algorithm:10s} ||x_g - x*||^2: {traj.dist2[0]:.3e} -> {traj.dist2[-1]:.3e}; "
              f"D2D messages {int(traj.comm['d2d_messages'][-1])}, "
              f"uploads {int(traj.comm['uploads'][-1])}")
    sdgt = runs["sdgt"]
    keep = np.flatnonzero(sdgt.dist2 >= 1e-12 * sdgt.dist2[0])
    fit = fit_log_linear(keep, sdgt.dist2[keep])
    verdict = _rate_verdict(fit, rate, gamma, gamma_bar)
    print(f"SD-GT contraction per round of ||x_g - x*||^2: {fit.factor:.4f} [{fit.factor_low:.4f}, "
          f"{fit.factor_high:.4f}] vs Theorem 3's 1 - mu K gamma/4 = {rate:.4f}: {verdict}")
    with atomic_open(tour.out / "metrics.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["round"] + [f"dist2_{name}" for name in runs])
        for r in range(tour.rounds + 1):
            writer.writerow([r] + [f"{t.dist2[r]:.6e}" for t in runs.values()])
    fig = Figure(figsize=(7, 4.2))
    ax = fig.add_subplot()
    for (name, traj), style in zip(runs.items(), ["-", "-", "--"]):
        ax.semilogy(traj.rounds, traj.dist2, style, label=name)
    ax.semilogy(sdgt.rounds, sdgt.dist2[0] * rate ** sdgt.rounds, ":", color="k",
                label=f"Theorem 3's rate (1 - mu K gamma/4)^t = {rate:.4f}^t")
    ax.semilogy(sdgt.rounds, np.exp(fit.intercept) * fit.factor ** sdgt.rounds, ":", color="C0",
                label=f"SD-GT fitted {fit.factor:.4f}^t")
    ax.set_xlabel("global round t")
    ax.set_ylabel("||x_g^t - x*||^2")
    ax.set_title(f"AR(1) least squares, 3 subnets of 10, {H} of 10 sampled", fontsize=10)
    ax.legend(fontsize=7)
    plot = tour.save(fig, "convergence.png")
    tour.summary["sdgt"]["runs"] = {
        "gamma": gamma, "K": K, "h": H, "rounds": tour.rounds,
        "algorithms": {name: {"dist2_initial": float(t.dist2[0]), "dist2_final": float(t.dist2[-1])}
                       for name, t in runs.items()},
        "sdgt_contraction": {"factor": fit.factor, "low": fit.factor_low, "high": fit.factor_high},
        "thm3_rate": rate, "thm3_gamma_bar": gamma_bar, "thm3_applies": gamma <= gamma_bar}
    return [
        page.table(["algorithm", "||x_g^0 - x*||^2", f"||x_g^T - x*||^2 (T = {tour.rounds})",
                    "D2D messages", "uploads"],
                   [(name, float(t.dist2[0]), float(t.dist2[-1]), int(t.comm["d2d_messages"][-1]),
                     int(t.comm["uploads"][-1])) for name, t in runs.items()],
                   caption=f"runs at gamma = {STEP}/(K L) = {gamma:.4g}, K = {K}"),
        page.paragraph(
            f"SD-GT's measured contraction of ||x_g - x*||^2 per round: {fit.factor:.4f} (95% interval "
            f"[{fit.factor_low:.4f}, {fit.factor_high:.4f}]); Theorem 3's rate at the run's gamma: "
            f"1 - mu K gamma/4 = {rate:.4f} per round, for gamma <= gamma_bar = {gamma_bar:.3g}: "
            f"{verdict}."),
        page.figure(plot, "SD-GT, SD-FedAvg and SCAFFOLD: squared distance to x* per round, with "
                          "Theorem 3's rate and SD-GT's fitted contraction")]


def _rate_verdict(fit, rate: float, gamma: float, gamma_bar: float) -> str:
    """Where the run stands against Theorem 3's rate: inside or outside its step condition, and the
    measured contraction's interval below, above or around the rate."""
    where = "inside the theorem's step condition" if gamma <= gamma_bar else \
        f"the run's gamma = {gamma:.4g} is outside the theorem's step condition"
    if fit.factor_high < rate:
        return f"{where}; the run contracts faster than the theorem's rate"
    if fit.factor_low > rate:
        return f"{where}; the run contracts slower than the theorem's rate"
    return f"{where}; the run's interval contains the theorem's rate"


# ---- FedNova -------------------------------------------------------------------------------------

def _fednova(tour: Tour) -> tuple:
    """FedNova (seed 001): Theorems 1 and 3 (fednova.thm1, fednova.thm3, and Theorem 2's floor
    fednova.thm2 for FedAvg) at the constants of Monte-Carlo runs on heterogeneous quadratics
    (``fedbound verify fednova thm1-quadratic``), the audit, and FedAvg and FedNova with unequal
    local steps run against their exact fixed points (objective inconsistency)."""
    _show("FedNova: Theorems 1-3 vs runs, audit, exact fixed points")
    parts = _bound_and_audit(tour, "fednova", "thm1-quadratic", "FedNova Theorems 1-3 (quadratics)")
    return "fednova", "FedNova: objective inconsistency and normalized averaging", \
        parts + _fednova_fixed_points(tour)


def _fednova_fixed_points(tour: Tour) -> list[str]:
    """FedAvg and FedNova with local steps FEDNOVA_STEPS at a finite lr on the quadratics: the exact
    affine round map x+ = M x + v of each (``fedbound fixed-point``,
    :func:`fedbound.verify.exact_round`), its fixed point x_fp and spectral radius, and a run set
    against the map's prediction ||x_t - x_fp||^2 = ||M^t (x_0 - x_fp)||^2; the run's distance to
    x* settles at ||x_fp - x*||: FedAvg's objective inconsistency, FedNova's O(lr) gap."""
    from matplotlib.figure import Figure

    from fedbound.algorithms import run
    from fedbound.verify import exact_round

    problem = tour.quadratic
    steps = [FEDNOVA_STEPS[i % len(FEDNOVA_STEPS)] for i in range(problem.task.n)]
    options = {"lr": FEDNOVA_LR, "local_steps": steps}
    fig = Figure(figsize=(9, 3.8))
    gap_ax, star_ax = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    rows, numbers = [], {}
    for name in ("fedavg", "fednova"):
        exact = exact_round(problem.algorithm(name, options, seed=tour.seed))   # state: x_g alone
        traj = run(problem.algorithm(name, options, seed=tour.seed), tour.rounds)
        gap2 = np.sum((traj.x_g.numpy() - exact.fixed_point) ** 2, axis=1)
        error, predicted = traj.x_g.numpy()[0] - exact.fixed_point, []
        for _ in traj.rounds:
            predicted.append(float(error @ error))
            error = exact.M @ error
        deviation = float(np.max(np.abs(gap2 - predicted) / np.maximum(predicted, 1e-300)))
        numbers[name] = {"spectral_radius": exact.spectral_radius,
                         "distance_to_x_star": exact.distance_to_x_star,
                         "max_relative_deviation_from_prediction": deviation,
                         "final_gap_to_fixed_point": float(np.sqrt(gap2[-1])),
                         "final_distance_to_x_star": float(np.sqrt(traj.dist2[-1]))}
        rows.append((name, exact.spectral_radius, exact.distance_to_x_star, deviation,
                     float(np.sqrt(gap2[-1])), float(np.sqrt(traj.dist2[-1]))))
        print(f"{name}: exact fixed point at ||x_fp - x*|| = {exact.distance_to_x_star:.4g}, spectral "
              f"radius {exact.spectral_radius:.6f}; the run follows the exact map to a relative "
              f"{deviation:.1e}; ||x_T - x*|| = {np.sqrt(traj.dist2[-1]):.4g}")
        line, = gap_ax.semilogy(traj.rounds, gap2, lw=3, alpha=0.5, label=f"{name}: run")
        gap_ax.semilogy(traj.rounds, predicted, "--", color=line.get_color(),
                        label=f"{name}: ||M^t (x_0 - x_fp)||^2")
        star_ax.semilogy(traj.rounds, traj.dist2, color=line.get_color(), label=f"{name}: run")
        star_ax.axhline(exact.distance_to_x_star ** 2, ls="--", color=line.get_color(),
                        label=f"{name}: ||x_fp - x*||^2")
    gap_ax.set_title("distance to the exact fixed point", fontsize=10)
    gap_ax.set_ylabel("||x_t - x_fp||^2")
    star_ax.set_title("distance to x*", fontsize=10)
    star_ax.set_ylabel("||x_t - x*||^2")
    for ax in (gap_ax, star_ax):
        ax.set_xlabel("round t")
        ax.legend(fontsize=7)
    plot = tour.save(fig, "fednova-fixed-point.png")
    tour.summary["fednova"]["fixed_point"] = {"lr": FEDNOVA_LR, "local_steps": steps, **numbers}
    return [
        page.code(f"fedbound fixed-point fednova --local-steps {','.join(map(str, steps))} "
                  f"--lr {FEDNOVA_LR} --seed {tour.seed}"),
        page.table(["algorithm", "spectral radius of the round map", "||x_fp - x*||",
                    "run vs exact map: max relative deviation", f"||x_T - x_fp|| (T = {tour.rounds})",
                    "||x_T - x*||"], rows,
                   caption=f"exact fixed points at lr = {FEDNOVA_LR}, local steps {steps}"),
        page.figure(plot, "FedAvg and FedNova against their exact round maps: each run follows "
                          "||M^t (x_0 - x_fp)||^2 to its fixed point, whose distance to x* is the "
                          "objective inconsistency")]


# ---- AFGA and FedAda2 ----------------------------------------------------------------------------

def _afga(tour: Tour) -> tuple:
    """AFGA (seed 000): Theorem 4.6 (afga.thm46, per fixed-step variant) against Monte-Carlo runs
    of AFGA (``fedbound verify afga thm46``), and the audit."""
    _show("AFGA: Theorem 4.6 vs runs, audit")
    return "afga", "AFGA: adaptive federated learning with gossip averaging", \
        _bound_and_audit(tour, "afga", "thm46", "AFGA Theorem 4.6")


def _fedada2(tour: Tour) -> tuple:
    """FedAda2 (seed 004): Theorem 20 (fedada2.thm20, every variant) against runs of FedAda2,
    server AdaGrad with SM3 clients (``fedbound verify fedada2 thm20``), and the audit."""
    _show("FedAda2: Theorem 20 vs runs, audit")
    return "fedada2", "FedAda2: efficient jointly adaptive federated learning", \
        _bound_and_audit(tour, "fedada2", "thm20", "FedAda2 Theorem 20")


# ---- controller, PEP, sweep ----------------------------------------------------------------------

def _controller(tour: Tour, net) -> tuple:
    """SD-GT's co-optimization controller (the geometric program (31), certified integer
    decisions): the plan of D2D rounds K and samples h_s for the demo's network, at device-server
    costs E_s drawn from the seed and D2D costs COST_RATIOS times E_s."""
    from matplotlib.figure import Figure

    from fedbound.control import ControlProblem, NetSpec, plan

    _show("controller: D2D rounds K and samples h_s from the geometric program (31)")
    E = validate.rng(tour.seed, "--seed").uniform(1, 100, net.S)
    plans = {}
    for ratio in COST_RATIOS:
        spec = NetSpec(m=net.m.tolist(), E=E.tolist(), E_d2d=(ratio * E).tolist())
        result = plan(ControlProblem(spec, H=1.0, lambdas=LAMBDAS, K_cap=K_CAP))
        plans[ratio] = result
        print(f"E_d2d/E = {ratio:g}: K = {result.K}, h = {list(result.h)}, p = {result.p:.4f}, "
              f"objective = {result.objective:.5f} (continuous lower bound {result.lower_bound:.5f})")
    tour.summary["controller"] = {"E": E.tolist(), "lambdas": list(LAMBDAS),
                                  "plans": {str(r): p.to_dict() for r, p in plans.items()}}
    fig = Figure(figsize=(7, 3.6))
    k_ax = fig.add_subplot(1, 2, 1)
    e_ax = fig.add_subplot(1, 2, 2)
    k_ax.semilogx(COST_RATIOS, [p.K for p in plans.values()], "o-")
    k_ax.set_ylabel("D2D rounds K")
    e_ax.loglog(COST_RATIOS, [p.energy_per_round for p in plans.values()], "o-")
    e_ax.set_ylabel("energy per round")
    for ax in (k_ax, e_ax):
        ax.set_xlabel("D2D cost / device-server cost")
    plot = tour.save(fig, "controller.png")
    return "controller", "SD-GT controller: D2D rounds and subnet sampling", [
        page.paragraph(f"Device-server costs E_s = {', '.join(f'{e:.4g}' for e in E)}; weights "
                       f"lambda = {LAMBDAS}; K at most {K_CAP}. The integer plan is certified "
                       f"against enumeration; the gap is to the continuous relaxation."),
        page.table(["E_d2d/E", "K", "h_s", "p", "objective", "continuous lower bound", "gap",
                    "energy per round"],
                   [(r, p.K, ", ".join(map(str, p.h)), p.p, p.objective, p.lower_bound, p.gap,
                     p.energy_per_round) for r, p in plans.items()], caption="the plans"),
        page.figure(plot, "the plan against the cost of D2D communication")]


def _pep(tour: Tour) -> tuple:
    """One worst-case certificate by performance estimation (:func:`fedbound.pep.certify`): SD-GT
    over L-smooth mu-strongly convex clients, the worst Lyapunov value after T rounds, a quadratic
    lower bound, the replay of the worst function and Theorem 3's bound (sdgt.thm3, main)."""
    from fedbound.pep import certify

    _show("PEP: worst-case certificate of SD-GT")
    cert = certify(PEP_METHOD, **PEP_OPTIONS)
    print(f"pep {cert.method}: worst case {cert.worst_case:.6g} ({cert.status}, {cert.solver}); "
          f"quadratic lower bound {cert.lower_bound:.6g}; verdict: {cert.verdict}")
    tour.summary["pep"] = cert.to_dict()
    flags = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in PEP_OPTIONS.items())
    return "pep", "PEP: a worst-case certificate of SD-GT", [
        page.code(f"fedbound pep {PEP_METHOD} {flags}"),
        page.table(["quantity", "value"], [
            ("options", json.dumps(cert.options)), ("worst case (SDP)", cert.worst_case),
            ("solver, status", f"{cert.solver}, {cert.status}"), ("Gram matrix size", cert.gram_size),
            ("duality gap", cert.duality_gap), ("quadratic lower bound", cert.lower_bound),
            ("replay of the worst function", cert.replay_value),
            ("theory", cert.theory), ("theory's source", cert.theory_source),
            ("theory applies", cert.theory_applies), ("why not", cert.theory_note or None),
            ("verdict", cert.verdict), ("seconds", cert.seconds)], caption="certificate")]


def _sweep(tour: Tour) -> tuple:
    """A small sweep (:func:`fedbound.sweep.run_sweep`, embedded): FedAvg and SCAFFOLD with 1 and
    5 local steps on the quadratics with gradient noise, a few seeds each, into the results store
    out/sweep; its report (:mod:`fedbound.sweep.report`): the final squared distance to x* with a
    95% Student-t interval per configuration, and the curves."""
    from fedbound.sweep import loads, report, run_sweep

    _show("sweep: a grid of runs with 95% intervals")
    s = tour.scale
    spec_json = {"algorithm": ["fedavg", "scaffold-fl"],
                 "task": {"name": "quadratic", "n": 12, "d": 5, "seed": tour.seed},
                 "rounds": s.sweep_rounds,
                 "grid": {"lr": 0.05, "local_steps": [1, 5], "clients_per_round": 4, "sigma": 0.1,
                          "seed": list(range(s.sweep_seeds))}}
    write_json(tour.out / "sweep-spec.json", spec_json, indent=2)
    folder = tour.out / "sweep"
    done = run_sweep(loads(json.dumps(spec_json)), folder, overwrite=True)
    rows = report.summarize(folder, "dist2")
    plots = report.plots(rows, "dist2", folder)
    print(report.table(rows, "dist2"))
    header = ("algorithm", "options", "sigma", "seeds", "mean", "95% low", "95% high")
    table_rows = [(row["algorithm"], ", ".join(f"{k}={v}" for k, v in sorted(row["options"].items())),
                   row["sigma"], row["seeds"], row["final"]["mean"], row["final"]["low"],
                   row["final"]["high"]) for row in rows]
    tour.summary["sweep"] = {"cells": done.cells, "diverged": done.diverged, "spec": spec_json,
                             "configurations": [dict(zip(header, r)) for r in table_rows]}
    return "sweep", "Sweep: a grid of runs with 95% intervals", [
        page.code(f"fedbound sweep {tour.out / 'sweep-spec.json'} --out DIR; "
                  f"fedbound sweep report {folder} --metric dist2"),
        page.paragraph(f"{done.cells} runs ({done.diverged} diverged) in the results store "
                       f"{folder.name}/; per configuration the mean over its seeds of "
                       f"||x_T - x*||^2 at T = {s.sweep_rounds} with a 95% Student-t interval."),
        page.table(header, table_rows, caption="final squared distance to x*"),
        *(page.figure(Path(path).relative_to(tour.out).as_posix(),
                      f"dist2 against {axis} (mean, 95% band)") for axis, path in plots.items())]
