# %% [markdown]
# # SD-GT controller: sensitivity of K* and sampling to the D2D cost ratio
#
# The controller of the SD-GT paper (seed `003_3166d581b98362e1.txt`, problem (31) [L425-L430],
# Algorithm 2 [L438-L446], Theorem 5 [L1212-L1232]; engineering notes `papers/sdgt.md` 5 and 4.7)
# solved directly, without running SD-GT: how the number of D2D rounds K and the per-subnet sample
# counts h_s react to the cost ratio delta = E_s^D2D / E_s, for several values of the estimate
# H-hat (which behaves like 1/t along a run, see the Fig. 11 notebook).
#
# **Problem (31).** minimize over K, beta_s: lambda1 H/p^2 + sqrt(lambda2 H/K) + (lambda2 H/(K p^2))^(2/3)
# + lambda3 (sum_s (1 - beta_s) E_s + K sum_s E_s^D2D), with p = min_s (1 - beta_s^2) and
# beta_s = 1 - h_s/m_s. Solved here as the certified integer optimum over K in 1..49 and
# h_s in 1..m_s (`fedbound.control.plan`), with its continuous relaxation and the unconstrained
# root K* of the K-stationarity (118) at the relaxation's p.
#
# **Setup.** S = 3 subnets of m_s = 10, E_s ~ U[1, 100] (one draw), lambdas (1, 0.1, 1e-5) as in the
# paper's experiments, and lambda1 = 0.01 to show a regime where sampling is traded off;
# H in {1, 0.1, 0.01, 0.001}; delta on a log grid from 1e-3 to 10.
#
# **Claims checked.** The paper motivates adaptive control by the room to adapt K when D2D is cheap
# (Fig. 9 [L559], Fig. 14 [L1108-L1113]); the notes (sdgt.md 7.4 item 11) state "decreasing delta
# increases K*"; Theorem 5 (corrected, F29) brackets K*. We also report which way the sampling moves.

# %%
import os
import time

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from fedbound.control import ControlProblem, NetSpec, k_stationary_root, plan, theorem5_interval

SCALE = os.environ.get("FEDBOUND_SCALE", "full")
FULL = SCALE == "full"
DELTAS = np.logspace(-3, 1, 81 if FULL else 13)
H_VALUES = (1.0, 0.1, 0.01, 0.001)
LAMBDA1 = (1.0, 0.01)
LAM2, LAM3, K_CAP = 0.1, 1e-5, 49
S, M = 3, 10
E = np.random.default_rng(1000).uniform(1.0, 100.0, S)
started = time.time()
print(f"scale={SCALE}: {DELTAS.size} cost ratios; E_s = {np.round(E, 2)}")

# %%
FIELDS = ("K", "K_cont", "K_root", "sampled", "p", "energy", "co_lo", "co_hi", "pr_lo", "pr_hi")
res = {}
for lam1 in LAMBDA1:
    for H in H_VALUES:
        table = {f: [] for f in FIELDS}
        for delta in DELTAS:
            spec = NetSpec(m=[M] * S, E=E, E_d2d=delta * E)
            lambdas = (lam1, LAM2, LAM3)
            decision = plan(ControlProblem(spec, H=H, lambdas=lambdas, K_cap=K_CAP), method="reduced")
            root = k_stationary_root(decision.continuous.p, H, lambdas, float(spec.E_d2d.sum()))
            interval = theorem5_interval(H, lambdas, spec)
            for f, v in zip(FIELDS, (decision.K, decision.continuous.K, root, sum(decision.h) / (S * M),
                                     decision.p, decision.energy_per_round, *interval.corrected,
                                     *interval.printed)):
                table[f].append(v)
        res[lam1, H] = {f: np.array(v) for f, v in table.items()}
print(f"{len(res) * DELTAS.size} plans in {time.time() - started:.1f} s")

# %% [markdown]
# ## K, sampled fraction and energy per round against delta
# Top row lambda1 = 1 (the paper's weights), bottom row lambda1 = 0.01. Left: the integer K (solid),
# the unconstrained root K* of (118) (dotted) and K_cap; middle: the sampled fraction
# sum_s h_s / n; right: the planned energy per round sum_s (h_s/m_s) E_s + K sum_s E_s^D2D.

# %%
fig, axes = plt.subplots(len(LAMBDA1), 3, figsize=(15, 8), sharex=True)
for row, lam1 in enumerate(LAMBDA1):
    for i, H in enumerate(H_VALUES):
        r, color = res[lam1, H], f"C{i}"
        axes[row, 0].loglog(DELTAS, r["K"], "-", color=color, label=f"H = {H:g}")
        axes[row, 0].loglog(DELTAS, r["K_root"], ":", color=color)
        axes[row, 1].semilogx(DELTAS, r["sampled"], "-o", ms=2, color=color, label=f"H = {H:g}")
        axes[row, 2].loglog(DELTAS, r["energy"], "-", color=color, label=f"H = {H:g}")
    axes[row, 0].axhline(K_CAP, color="grey", lw=1)
    axes[row, 0].set_ylabel(f"lambda1 = {lam1:g}\nD2D rounds K (solid), K* (dotted)")
    axes[row, 1].set_ylabel("sampled fraction sum h_s / n")
    axes[row, 1].set_ylim(0, 1.05)
    axes[row, 2].set_ylabel("energy per round")
    for ax in axes[row]:
        ax.grid(True, which="both", alpha=0.3)
for ax in axes[-1]:
    ax.set_xlabel("delta = E_d2d / E")
axes[0, 0].legend(fontsize=8)
fig.suptitle("Controller (31): sensitivity to the D2D cost ratio (lambda2 = 0.1, lambda3 = 1e-5, K_cap = 49)")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Theorem 5 across the grid
# The corrected interval (band) and the printed bounds (dashed) against the unconstrained root K*,
# for lambda1 = 1 (lambda1 does not enter the bounds; K* depends on it through p only).

# %%
fig, axes = plt.subplots(1, len(H_VALUES), figsize=(15, 3.8), sharey=True)
for ax, H in zip(axes, H_VALUES):
    r = res[1.0, H]
    ax.fill_between(DELTAS, r["co_lo"], r["co_hi"], color="C2", alpha=0.25, label="corrected")
    ax.loglog(DELTAS, r["pr_lo"], "--", color="C3", label="printed lower")
    ax.loglog(DELTAS, r["pr_hi"], ":", color="C3", label="printed upper")
    ax.loglog(DELTAS, r["K_root"], "k-", label="K* (118)")
    ax.set_title(f"H = {H:g}")
    ax.set_xlabel("delta")
    ax.grid(True, which="both", alpha=0.3)
axes[0].set_ylabel("D2D rounds")
axes[0].legend(fontsize=8)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Measured numbers and verdicts
# Computed over the grid, for every (lambda1, H):
# * *K nonincreasing in delta*: the integer K and the continuous K never rise as delta grows;
# * *sampling nondecreasing in delta*: the sampled fraction never falls as delta grows (the
#   direction we observe; the paper states none);
# * *Theorem 5*: the corrected interval contains K* at every grid point; the printed one is counted.

# %%
verdicts, rows = {}, []
for (lam1, H), r in res.items():
    k_mono = bool(np.all(np.diff(r["K"]) <= 0) and np.all(np.diff(r["K_cont"]) <= 1e-9 * r["K_cont"][1:]))
    s_mono = bool(np.all(np.diff(r["sampled"]) >= 0))
    co = int(np.sum((r["co_lo"] <= r["K_root"]) & (r["K_root"] <= r["co_hi"])))
    pr = int(np.sum((r["pr_lo"] <= r["K_root"]) & (r["K_root"] <= r["pr_hi"])))
    capped = DELTAS[r["K"] == K_CAP]
    rows.append(f"| {lam1:g} | {H:g} | {r['K'][0]} -> {r['K'][-1]} | "
                f"{capped.max() if capped.size else float('nan'):.3g} | {r['sampled'][0]:.2f} -> {r['sampled'][-1]:.2f} | "
                f"{r['energy'][0]:.0f} -> {r['energy'][-1]:.0f} | {co}/{DELTAS.size} | {pr}/{DELTAS.size} |")
    verdicts.setdefault("K nonincreasing in delta", []).append(k_mono)
    verdicts.setdefault("sampled fraction nondecreasing in delta", []).append(s_mono)
    verdicts.setdefault("corrected Theorem 5 interval contains K* everywhere", []).append(co == DELTAS.size)
    verdicts.setdefault("printed Theorem 5 interval contains K* everywhere", []).append(pr == DELTAS.size)
verdicts = {claim: all(v) for claim, v in verdicts.items()}
display(Markdown(
    f"**Measured** (delta from {DELTAS[0]:g} to {DELTAS[-1]:g}):\n\n"
    "| lambda1 | H | K (delta min -> max) | largest delta with K = K_cap | sampled fraction | energy per round "
    "| K* in corrected | K* in printed |\n|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n"
    + "\n".join(f"* {'HOLDS' if ok else 'FAILS'}: {claim}" for claim, ok in verdicts.items())))
for claim, ok in verdicts.items():
    print(f"{'HOLDS' if ok else 'FAILS':6s} {claim}")
print(f"\ntotal time {time.time() - started:.1f} s")
