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
from fedbound.readout import by_size, number, ratio_words
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
    claim and no adversarial search: the headline (holds / fails by severity) and the failures,
    largest violation first, each ratio's size in words (:func:`fedbound.readout.ratio_words`)."""
    from fedbound.theory.audit import run_audit
    from fedbound.theory.audit_report import SEVERITIES

    samples = tour.scale.audit_samples
    reports = run_audit(paper, samples=samples, seed=tour.seed, iterations=0)
    tour.audits[paper] = reports
    failed = by_size([r for r in reports if r.verdict == "fails"],
                     key=lambda r: (r.violation_ratio, r.log10_ratio))
    severity = {s: sum(r.severity == s for r in failed) for s in reversed(SEVERITIES) if s != "holds"}
    counts = ", ".join(f"{n} {s}" for s, n in severity.items() if n)
    headline = (f"audit: {len(reports)} claims, {len(reports) - len(failed)} hold, {len(failed)} fail"
                + (f" ({counts})" if counts else ""))
    print(f"{headline}; {samples} random samples per claim")
    for r in failed:
        print(f"  FAILS {r.claim} [{r.variant}] ({r.flag}): {r.severity}, lhs/rhs {_claim_size(r)}")
    tour.summary[paper]["audit"] = {
        "claims": len(reports), "holds": len(reports) - len(failed), "fails": len(failed),
        "by_severity": severity, "samples": samples,
        "failures": [f"{r.claim} [{r.variant}]" for r in failed]}
    return [page.paragraph(
        f"{headline}. Each claim evaluated at {samples} random samples of its domain and at the "
        f"domain's extremes, without the adversarial search of `fedbound audit {paper}` (which may "
        f"find more or grade a failure differently). Failures largest first."),
        page.table(["claim", "variant", "flag", "kind", "severity", "lhs/rhs at the worst point"],
                   [(r.claim, r.variant, r.flag, r.kind, r.severity, _claim_size(r)) for r in failed],
                   caption=f"{paper}: failing claims, by the size of the violation")]


def _claim_size(report) -> str:
    """A failing claim's violation ratio lhs/rhs in words and powers of ten; infinite where the
    right side is 0 or negative."""
    return ratio_words(report.violation_ratio, report.log10_ratio)


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


def _bound_rows(checks: list) -> tuple[list[dict], dict]:
    """Per check: the bound of its result and variant evaluated at the run's constants (the paper's
    adapter) at the check's last horizon T (``Result.evaluate``), its largest step
    (``Result.max_step``), the measurement at T (Monte-Carlo mean, 95% interval), the check's
    verdict over every horizon, and the bound read against the result's reference and the
    measurement (``Evaluation.reading``: vacuous, tight); for a check outside the theorem, the
    conditions that fail. Returns the rows and the evaluations by (result, variant)."""
    from fedbound.theory import get

    rows, evaluations = [], {}
    for c in checks:
        result = get(c.details["result"])
        row = {"result": result.id, "algorithm": c.details["algorithm"], "variant": c.variant,
               "status": c.status, "T": None, "step": None, "bound": None, "measured": None,
               "low": None, "high": None, "worst_ratio": None, "seeds": None, "few": None,
               "reading": None, "vacuous": None, "tight": None, "anatomy": None}
        if c.status == "not applicable":
            row["status"] = f"not applicable: {'; '.join(map(str, c.details['conditions']))}"
        else:
            T, est = c.details["horizons"][-1], c.details["measured"]
            constants = {**c.details["constants"], result.rounds: float(T)}
            ev = evaluations[(result.id, c.variant)] = result.evaluate(c.variant, **constants)
            reading = ev.reading(float(est.mean[-1]))
            row.update(T=T, bound=float(ev.bound), step=_largest_step(result, c.variant, constants),
                       measured=float(est.mean[-1]), low=float(est.low[-1]), high=float(est.high[-1]),
                       worst_ratio=c.ratio, seeds=est.samples,
                       few=bool(est.few and np.any(np.asarray(est.stderr) > 0)),
                       reading=reading.words(), tight=bool(reading.tight),
                       vacuous=None if reading.vacuous is None else bool(reading.vacuous))
        rows.append(row)
    return rows, evaluations


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


def _fold(rows: list[dict]) -> list[list[dict]]:
    """The rows grouped where they say the same: one result, algorithm, horizon, verdict and a bound
    equal to 6 digits (FedAda2's 16 variants fold to one row per distinct bound)."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        bound = None if row["bound"] is None else float(f"{row['bound']:.6g}")
        groups.setdefault((row["result"], row["algorithm"], row["T"], row["status"], bound), []).append(row)
    return list(groups.values())


def _explain_vacuous(groups: list[list[dict]], evaluations: dict) -> list[tuple]:
    """For every group whose bound is vacuous: its anatomy at the run (dominant term and share, the
    decades of the bound each constant accounts for, the steepest sensitivities), written into the
    group's rows; the table rows. A bound without a symbolic form says so."""
    from fedbound.errors import ValidationError

    out = []
    for group in groups:
        first = group[0]
        if not first["vacuous"]:
            continue
        try:
            anatomy = evaluations[(first["result"], first["variant"])].anatomy()
        except ValidationError as error:    # a bound computed numerically (a derived variant)
            out.append((first["result"], _variants(group), None, None, str(error), None))
            continue
        words = anatomy.describe(top=5)
        for row in group:
            row["anatomy"] = words
        dominant = anatomy.dominant
        decades = ", ".join(f"{name} {number(x, 2)}" for name, x in anatomy.decades()[:6] if abs(x) >= 0.05)
        steep = ", ".join(f"{name} {number(s, 3)}" for name, s in anatomy.ranked()[:4] if s != 0)
        out.append((first["result"], _variants(group), dominant.label,
                    f"{number(100 * anatomy.at(dominant.share), 3)}%", decades, steep))
    return out


def _variants(group: list[dict]) -> str:
    return ", ".join(row["variant"] for row in group)


def _measured(row: dict) -> str | None:
    """``0.0099 [0.0098, 0.0101] (3 seeds: few)``: the mean and its 95% interval at T."""
    if row["measured"] is None:
        return None
    few = f" ({row['seeds']} seeds: few)" if row["few"] else ""
    return f"{number(row['measured'], 4)} [{number(row['low'], 4)}, {number(row['high'], 4)}]{few}"


def _bound_table(groups: list[list[dict]], caption: str) -> str:
    """One row per group of variants that say the same (:func:`_fold`)."""
    return page.table(
        ["result", "algorithm", "variants", "step condition at the run", "horizon T", "bound at T",
         "measured at T (mean, 95% interval)", "the bound read against its reference and the run",
         "verdict over the horizons"],
        [(g[0]["result"], g[0]["algorithm"], _variants(g), g[0]["step"], g[0]["T"], g[0]["bound"],
          _measured(g[0]), g[0]["reading"], g[0]["status"]) for g in groups], caption=caption)


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


def _bound_and_audit(tour: Tour, paper: str, check: str, title: str, more=None) -> list[str]:
    """A paper section's bound table (variants that say the same folded into one row, each read
    against its reference and the measurement), why each vacuous bound is vacuous (its anatomy),
    the plot from its theorem check ``paper.check``, ``more(tour, checks, evaluations)``'s parts,
    then its audit."""
    checks = _theorem_check(tour, f"{paper}.{check}")
    rows, evaluations = _bound_rows(checks)
    groups = _fold(rows)
    vacuous = _explain_vacuous(groups, evaluations)
    tour.summary[paper] = {"bound": rows}
    plot = _check_plot(tour, checks, f"{paper}-bound.png", title)
    parts = [page.code(_verify_command(tour, paper, check)),
             _bound_table(groups, f"{title}: bound and measurement ({len(rows)} variants in "
                                  f"{len(groups)} rows: variants with the same bound share one)")]
    if vacuous:
        parts.append(page.table(
            ["result", "variants", "dominant term", "its share of the bound",
             "decades of the bound each constant accounts for (S log10 c)",
             "steepest S = d log B / d log c (B scales like c^S)"], vacuous,
            caption="why each vacuous bound is vacuous: its anatomy at the run (Evaluation.anatomy)"))
    parts.append(page.figure(plot, f"{title}: measured (mean, 95% band) against the bound, per horizon T"))
    if more is not None:
        parts += more(tour, checks, evaluations)
    return parts + _audit(tour, paper)


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
    from fedbound.theory.sdgt.table1 import regime, table1_rounds

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
              f"{number(rows[variant]['A_l1'], 12)} vs 1 - mu K gamma/4 = "
              f"{number(rows[variant]['contraction'], 12)}")
    thm2, caps = get("sdgt.thm2"), {}
    for variant in thm2.variants:
        gamma, binding = thm2.max_step(variant, **consts)
        caps[variant] = {"gamma": float(gamma), "binding": str(binding)}
        print(f"Thm 2 [{variant}]: largest admissible gamma = {float(gamma):.3e} ({binding})")
    table1_constants = dict(sigma=1.0, n=task.n, K=K, p=p, q=net.q, rho=net.q, eta=1.0, eta_s=1.0)
    table1 = {k: float(v) for k, v in table1_rounds(1e-3, **table1_constants).items()}
    table1_regime = regime(1e-3, **table1_constants)
    print("Table I, rounds to eps = 1e-3: " + ", ".join(f"{k} {v:.3e}" for k, v in table1.items()))
    print(table1_regime["words"])
    tour.summary["sdgt"]["theory"] = {"thm3": rows, "thm2": caps, "table1": table1,
                                      "table1_regime": table1_regime}
    return [
        page.table(["variant", "gamma_bar", "binding condition", "||A||_1", "1 - mu K gamma_bar/4",
                    "||A||_1 <= 1 - mu K gamma/4 (95)"],
                   [(v, r["gamma_bar"], r["binding"], number(r["A_l1"], 12), number(r["contraction"], 12),
                     "holds" if r["A_l1"] <= r["contraction"] else "fails")
                    for v, r in rows.items()],
                   caption=f"sdgt.thm3 (strongly convex) at the demo's L, mu (global), K = {K}, "
                           f"p, q, n"),
        page.table(["variant", "largest gamma", "binding condition"],
                   [(v, c["gamma"], c["binding"]) for v, c in caps.items()],
                   caption="sdgt.thm2 (weakly convex)"),
        page.table(["method", "rounds to eps = 1e-3", "against SD-GT's"],
                   [(m, v, ratio_words(v / table1["SD-GT"])) for m, v in
                    sorted(table1.items(), key=lambda kv: kv[1])],
                   caption="sdgt.table1: Table I (non-convex), sigma = 1 and the paper's constants 1, "
                           "fewest rounds first"),
        page.paragraph(table1_regime["words"])]


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
    print(f"SD-GT contraction per round of ||x_g - x*||^2: {number(fit.factor, 4)} [{number(fit.factor_low, 4)}, "
          f"{number(fit.factor_high, 4)}] vs Theorem 3's 1 - mu K gamma/4 = {number(rate, 4)}: {verdict}")
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
                label=f"Theorem 3's rate (1 - mu K gamma/4)^t = {number(rate, 4)}^t")
    ax.semilogy(sdgt.rounds, np.exp(fit.intercept) * fit.factor ** sdgt.rounds, ":", color="C0",
                label=f"SD-GT fitted {number(fit.factor, 4)}^t")
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
            f"SD-GT's measured contraction of ||x_g - x*||^2 per round: {number(fit.factor, 4)} (95% interval "
            f"[{number(fit.factor_low, 4)}, {number(fit.factor_high, 4)}]); Theorem 3's rate at the run's gamma: "
            f"1 - mu K gamma/4 = {number(rate, 4)} per round, for gamma <= gamma_bar = {gamma_bar:.3g}: "
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
    server AdaGrad with SM3 clients (``fedbound verify fedada2 thm20``), its anatomy and the same
    bound under Corollary 24's step-size schedule (:func:`_fedada2_anatomy`), and the audit."""
    _show("FedAda2: Theorem 20 vs runs, its anatomy and Corollary 24's schedule, audit")
    return "fedada2", "FedAda2: efficient jointly adaptive federated learning", \
        _bound_and_audit(tour, "fedada2", "thm20", "FedAda2 Theorem 20", more=_fedada2_anatomy)


#: the horizons at which Theorem 20 is shown under Corollary 24's schedule (with the run's own)
SCHEDULE_T = (1e2, 1e4, 1e6, 1e8, 1e12, 1e16, 1e20)
#: the variants shown under the schedule: the printed bound and the fully corrected one
SCHEDULE_VARIANTS = ("printed", "rederived")
#: what makes each of Theorem 20's terms large (module doc of fedbound.theory.fedada2.thm20)
PSI_CARRIES = {
    "Psi1/Psi6": "the initial gap f(x_0) - f(x*)",
    "Psi2/Psi6": "eta^2 L T d ||Phi1||^2/tau^2, the server step over the adaptivity tau",
    "Psi3/Psi6": "L~ = 2 sqrt(d) G/(eta_l eps_s) [L140] (eps_s the clipping threshold) times "
                 "K/(alpha1 tau (sqrt(v0) + eps)^2), 1/alpha1 = 2 sqrt(v0 + d K G^2) + 2 eps [L862]",
    "Psi4/Psi6": "L c(b) ||Phi2||^2 K/(alpha1 tau (sqrt(v0) + eps)^2), the momentum's drift",
    "Psi5/Psi6": "d ||Phi1|| G log(1 + T ||Phi1||^2/tau^2)/tau, the preconditioner's change"}


def _reaches(bound, level: float, low: float, high_log10: float = 200.0) -> float | None:
    """The smallest T in [low, 10^high_log10] with bound(T) <= level, by bisection in log T on a
    bound that falls with T there; None if bound(10^high_log10) is still above ``level``."""
    if bound(10.0 ** high_log10) > level:
        return None
    lo, hi = np.log10(low), high_log10
    if bound(low) <= level:
        return low
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if bound(10.0 ** mid) <= level else (mid, hi)
    return float(10.0 ** hi)


def _fedada2_anatomy(tour: Tour, checks: list, evaluations: dict) -> list[str]:
    """Theorem 20 (printed) taken apart at the run's constants and last horizon (its five terms
    Psi_i/Psi6, the dominant one, d log B / d log c of every constant), then the same bound under
    Corollary 24's step-size schedule [L1120-L1126]: eta = Theta(1) (the run's eta) and
    eta_l = c_l T^-1/2 (Corollary 23 case A, T eta_l^2 = O(1) [L1075-L1118]; the proof's minimax at
    p1 = 0, p2 = -1/2), with c_l = eta_l sqrt(T_run) so that the schedule's step at the run's
    horizon is the run's. At fixed steps every term grows with T; under the schedule the printed
    bound falls like T^-1/2 (its Psi3/Psi6 ratio is Theta(eta_l)); the rederived variant's (L~^2
    in the drift step, notes 8.2) Psi3/Psi6 is Theta(1) and it does not fall."""
    from matplotlib.figure import Figure

    from fedbound.theory import get

    result = get("fedada2.thm20")
    check = next(c for c in checks if c.variant == "printed" and c.status != "not applicable")
    T_run = int(check.details["horizons"][-1])
    ev = evaluations[(result.id, "printed")]
    anatomy = ev.anatomy()
    constants = dict(check.details["constants"])
    trivial = float(result.reference_value(ev.values))
    dominant = anatomy.dominant
    c_l = constants["eta_l"] * np.sqrt(T_run)
    grid = np.array(sorted({float(T_run), *SCHEDULE_T}))

    def scheduled(variant: str, T):
        T = np.asarray(T, dtype=float)
        return result.bound(variant, **{**constants, "T": T, "eta_l": c_l / np.sqrt(T)})

    fixed = {v: result.bound(v, **{**constants, "T": grid}) for v in SCHEDULE_VARIANTS}
    schedule = {v: scheduled(v, grid) for v in SCHEDULE_VARIANTS}
    reach = {v: _reaches(lambda T, v=v: float(scheduled(v, T)), trivial, float(T_run))
             for v in SCHEDULE_VARIANTS}
    slope = float(np.polyfit(np.log(grid[-3:]), np.log(schedule["printed"][-3:]), 1)[0])
    ranked = anatomy.ranked()
    print(f"Theorem 20 (printed) at T = {T_run}: {anatomy.describe(top=6)}")
    print(f"Corollary 24's schedule eta_l = {c_l:.4g}/sqrt(T): the printed bound falls like T^{slope:.3f}; "
          + "; ".join(f"{v} reaches the trivial bound {number(trivial, 3)} "
                      + (f"at T = {number(t, 2)}" if t is not None else "at no T up to 1e200")
                      for v, t in reach.items()))
    tour.summary["fedada2"]["anatomy"] = {
        "variant": "printed", "T": T_run, "constants": constants, **anatomy.to_dict(),
        "trivial_bound": trivial}
    tour.summary["fedada2"]["schedule"] = {
        "eta_l": f"{c_l:.6g}/sqrt(T)", "c_l": c_l, "T": grid.tolist(), "trivial_bound": trivial,
        "fixed_steps": {v: b.tolist() for v, b in fixed.items()},
        "schedule": {v: b.tolist() for v, b in schedule.items()},
        "printed_slope": slope, "reaches_trivial_at": reach}
    fig = Figure(figsize=(7, 4.2))
    ax = fig.add_subplot()
    for v in SCHEDULE_VARIANTS:
        line, = ax.loglog(grid, schedule[v], "o-", label=f"[{v}] eta_l = {c_l:.3g}/sqrt(T) (Cor. 24)")
        ax.loglog(grid, fixed[v], "--", color=line.get_color(),
                  label=f"[{v}] eta_l = {constants['eta_l']:g} fixed (the run's)")
    ax.axhline(trivial, color="k", lw=1, label=f"trivial bound min(d G^2, 2 L f_gap) = {trivial:.3g}")
    measured = check.details["measured"]
    ax.loglog(check.details["horizons"], measured.mean, "k.", label="measured (the run)")
    ax.set_xlabel("horizon T (rounds)")
    ax.set_ylabel("bound on min_t ||grad f(x_{t-1})||^2")
    ax.set_title("FedAda2 Theorem 20 at fixed steps and under Corollary 24's schedule", fontsize=10)
    ax.legend(fontsize=6)
    plot = tour.save(fig, "fedada2-schedule.png")
    decades = anatomy.decades()
    return [
        page.paragraph(
            f"Why Theorem 20 is vacuous here. At the run's constants and T = {T_run} the printed bound "
            f"is {number(float(ev.bound), 3)}, {ratio_words(float(ev.bound) / trivial)} above the trivial "
            f"bound min(d G^2, 2 L f_gap) = {number(trivial, 3)} and {ratio_words(float(ev.bound) / float(measured.mean[-1]))} "
            f"above the measured {number(float(measured.mean[-1]), 3)}. Its dominant term is "
            f"{dominant.label}, {number(100 * anatomy.at(dominant.share), 4)}% of the bound; "
            f"{dominant.label.split('/')[0]} carries {PSI_CARRIES[dominant.label]}. Read as a "
            f"monomial (B scales like c^S, S = d log B / d log c), the constants that make it "
            f"{number(float(ev.bound), 2)}, by the decades of B each accounts for at its value "
            f"(S log10 c): "
            + ", ".join(f"{name} {number(x, 2)}" for name, x in decades[:8] if abs(x) >= 0.05)
            + f"; the steepest: " + ", ".join(f"{name} {number(s, 3)}" for name, s in ranked[:5] if s != 0)
            + (" (the delay z enters through K - ceil(K/z), 0 at z = 1: steep, but no decades at "
               "the run's z)" if constants.get("z") == 1 and any(n == "z" for n, _ in ranked[:5]) else "")
            + "."),
        page.table(["term", "value at the run", "share of the bound"],
                   [(t.label, anatomy.at(t.value), f"{number(100 * anatomy.at(t.share), 3)}%")
                    for t in sorted(anatomy.terms, key=lambda t: -anatomy.at(t.share))],
                   caption=f"Theorem 20 (printed) at T = {T_run}: its five terms, dominant first"),
        page.table(["constant", "value at the run", "d log B / d log c", "decades of B (S log10 c)"],
                   [(name, float(np.asarray(anatomy.constants[name])), anatomy.at(anatomy.sensitivities[name]),
                     x) for name, x in decades],
                   caption="each constant's share in the size of the bound: the decades it accounts "
                           "for at its value (largest first) and its sensitivity"),
        page.paragraph(
            f"The same bound under Corollary 24's step-size schedule [L1120-L1126]: eta = Theta(1) "
            f"(the run's eta = {number(constants['eta'], 3)}) and eta_l = c_l T^-1/2, the case A of "
            f"Corollary 23 (T eta_l^2 = O(1) [L1075-L1118]) where the theorem is meant to be used, with "
            f"c_l = {number(c_l, 4)} so that eta_l = {number(constants['eta_l'], 3)} at the run's T = {T_run}. "
            f"At fixed steps every bound rises with T; under the schedule the printed bound falls like "
            f"T^{slope:.2f} and reaches the trivial bound "
            + (f"only at T = {number(reach['printed'], 2)}" if reach["printed"] is not None
               else "at no T up to 1e200")
            + "; the rederived bound (L~^2 in the drift step, notes 8.2) keeps Psi3/Psi6 = Theta(1) and "
            + ("does not fall below it." if reach["rederived"] is None
               else f"reaches it at T = {number(reach['rederived'], 2)}.")),
        page.table(["horizon T", "eta_l = c_l/sqrt(T)"]
                   + [f"[{v}] {what}" for v in SCHEDULE_VARIANTS for what in ("fixed eta_l", "schedule")]
                   + ["trivial bound"],
                   [(int(T) if T < 1e6 else float(T), c_l / np.sqrt(T),
                     *(float(b[i]) for v in SCHEDULE_VARIANTS for b in (fixed[v], schedule[v])), trivial)
                    for i, T in enumerate(grid)],
                   caption="Theorem 20 at fixed steps and under Corollary 24's schedule"),
        page.figure(plot, "Theorem 20 against T: at the run's fixed steps (dashed) and under "
                          "Corollary 24's schedule eta_l = c_l/sqrt(T) (solid), with the trivial "
                          "bound and the measured values")]



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
        print(f"E_d2d/E = {ratio:g}: K = {result.K}, h = {list(result.h)}, p = {number(result.p, 4)}, "
              f"objective = {result.objective:.5f} (continuous lower bound {result.lower_bound:.5f})")
        for lim in result.limits:
            print(f"  active limit {lim.name}: {lim.words}")
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
                       f"against enumeration; the gap is to the continuous relaxation. Where the "
                       f"optimum sits on a limit (K = K_cap, every device sampled) the plan says so "
                       f"and what raising the limit would buy. (31) weighs energy in its objective "
                       f"(lambda3) and has no energy budget that could bind."),
        page.table(["E_d2d/E", "K", "h_s", "p", "objective", "continuous lower bound", "gap",
                    "energy per round", "limits the plan sits on"],
                   [(r, p.K, ", ".join(map(str, p.h)), p.p, p.objective, p.lower_bound, p.gap,
                     p.energy_per_round, "; ".join(lim.name for lim in p.limits) or "none")
                    for r, p in plans.items()], caption="the plans"),
        page.table(["E_d2d/E", "limit", "where", "what raising it would buy"],
                   [(r, lim.name, lim.where, lim.words) for r, p in plans.items() for lim in p.limits],
                   caption="active limits: where the optimum sits on a cap, and its worth (the GP's "
                           "dual values; for K_cap also the integer plan at K_cap + 1)"),
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
    from fedbound.stats import FEW_SAMPLES
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
    method = rows[0]["final"]["method"]
    few = any(row["final"]["few"] for row in rows)
    tour.summary["sweep"] = {"cells": done.cells, "diverged": done.diverged, "spec": spec_json,
                             "interval": method, "few_seeds": few,
                             "configurations": [dict(zip(header, r)) for r in table_rows]}
    return "sweep", "Sweep: a grid of runs with 95% intervals", [
        page.code(f"fedbound sweep {tour.out / 'sweep-spec.json'} --out DIR; "
                  f"fedbound sweep report {folder} --metric dist2"),
        page.paragraph(f"{done.cells} runs ({done.diverged} diverged) in the results store "
                       f"{folder.name}/; per configuration the mean over its seeds of "
                       f"||x_T - x*||^2 at T = {s.sweep_rounds} with a 95% {method} interval (a squared "
                       f"distance is non-negative, and so is its interval; intersecting the t-interval "
                       f"with [0, inf) keeps its coverage)."
                       + (f" {s.sweep_seeds} seeds per configuration are few (fewer than "
                          f"{FEW_SAMPLES}): the intervals rest on standard deviations estimated from "
                          f"{s.sweep_seeds} values and are wide." if few else "")),
        page.table(header, table_rows, caption=f"final squared distance to x* (95% {method} interval"
                                               + (f", {s.sweep_seeds} seeds: few)" if few else ")")),
        *(page.figure(Path(path).relative_to(tour.out).as_posix(),
                      f"dist2 against {axis} (mean, 95% band; a log axis where the means span a "
                      f"decade)") for axis, path in plots.items())]
