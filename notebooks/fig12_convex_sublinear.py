# %% [markdown]
# # SD-GT Fig. 12: sublinear convergence on convex (not strongly convex) least squares
#
# Reproduces **Fig. 12** of the SD-GT paper (seed `003_3166d581b98362e1.txt`, Appendix C-A
# [L1094-L1099]; Theorem 2 [L274-L279] in its explicit form (89) [L991]; engineering notes
# `papers/sdgt.md` 4.5 "Numerical check (Thm 2)" and 6.6) at CPU scale.
#
# **Setup (paper).** The synthetic least squares of Sec. V-E with d = 1000 > 900 = total number of
# rows (30 clients x 30 rows), so f is convex but not strongly convex; default system (S = 3 subnets
# of 10 clients); p "obtained from beta_s = 0.2, 0.6, 1" (flag: beta_s = 1 would mean p = 0; read as
# sampling fractions 0.2, 0.6, 1).
#
# **Setup (here).** n = 30 clients in S = 3 subnets of 10 (random geometric graph, Metropolis
# weights), d = 200 > 150 = 30 x 5 rows (d = 50 > 30 x 1 at small scale), AR(1) rows with
# omega = 0.5, x^0 = 0, so x* is the min-norm solution and f* = 0 (the system is consistent).
# Sampling fractions 1, 0.6, 0.2 (h_s = 10, 6, 2; p = 1, 0.84, 0.36). K = 10 (5 at small scale;
# not stated in the paper for this figure). Deterministic gradients (sigma = 0), so Theorem 2's
# bound (89) reduces to the fully explicit 2||x^0 - x*||^2/(gamma K T).
# Two step sizes: gamma_thm, the largest step satisfying every cap of Theorem 2 (printed and
# re-derived variants, `fedbound.theory.get("sdgt.thm2").max_step`), where the bound applies; and
# a practical gamma = 1/L for the shape of the curves and the comparison with SD-FedAvg and
# SCAFFOLD. For p < 1 the curves are Monte-Carlo means over sampling seeds (95% Student-t
# intervals); since f is convex, f(E x_g) <= E f(x_g) (Jensen), so checking the bound, which is
# about f(xbar_g^t) with xbar_g^t = E x_g^t, on E f(x_g^t) is conservative.
#
# **Paper's claim.** SD-GT converges sublinearly to the optimum (Theorem 2: the running average
# (1/T) sum_t (f(x_g^t) - f*) is O(1/T) with sigma = 0) and beats SD-FedAvg and SCAFFOLD.

# %%
import os
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

from fedbound import sweep
from fedbound.algorithms import SCAFFOLD, SDGT, SDFedAvg, run
from fedbound.network import Network, p_from_h
from fedbound.tasks import LeastSquares
from fedbound.theory import get
from fedbound.theory.sdgt import adapter as sdgt_adapter
from fedbound.verify.check import reproduction_verdict
from fedbound.verify.rates import fit_log_log

SCALE = os.environ.get("FEDBOUND_SCALE", "full")
FULL = SCALE == "full"
CFG = (dict(d=200, rows=5, K=10, rounds=1000, seeds=5) if FULL
       else dict(d=50, rows=1, K=5, rounds=200, seeds=2))
N, S, M = 30, 3, 10
H_VALUES = (10, 6, 2)               # sampling fractions 1, 0.6, 0.2
METHODS = ("SD-GT", "SD-FedAvg", "SCAFFOLD")
started = time.time()
print(f"scale={SCALE}: {CFG}")

# %%
network = Network.random_geometric(S=S, m=M, seed=0)
task = LeastSquares.generate(n=N, m=CFG["rows"], d=CFG["d"], omega=0.5, seed=0)
P = {h: p_from_h(h, network.m) for h in H_VALUES}
R0 = float(torch.sum((task.x0 - task.x_star) ** 2))          # ||x^0 - x*||^2
hbar = task.hessians.mean(dim=0).numpy()
lam = np.linalg.eigvalsh(hbar)
lam_pos = lam[lam > 1e-10 * lam[-1]]
print(network, "rho_s =", np.round(network.rho, 3))
print(f"d = {task.d} > {N * CFG['rows']} rows: mu_global = {task.mu_global}, rank of the global Hessian = "
      f"{lam_pos.size}, smallest positive eigenvalue {lam_pos[0]:.4g}; L = {task.L:.4g}, "
      f"L_global = {task.L_global:.4g}")
print(f"f* = {task.f_star:.3g}, ||x^0 - x*||^2 = {R0:.4g}; p for h_s = {P}")

def options(h, gamma):
    """The options of every run with h_s = h at step gamma (also the theorem's constants)."""
    return {"lr": gamma, "local_steps": CFG["K"], "clients_per_subnet": h}


thm2 = get("sdgt.thm2")
GAMMA_PRACTICAL = 1.0 / task.L
GAMMA_THM = {}
for h in H_VALUES:
    k = sdgt_adapter.constants(task, network, "sdgt", options(h, GAMMA_PRACTICAL))   # max_step solves for gamma
    caps = {v: thm2.max_step(v, **k) for v in thm2.variants}
    GAMMA_THM[h] = min(float(c[0]) for c in caps.values())
    print(f"p = {P[h]:.2f}: Theorem 2 max step " + ", ".join(f"{v} {float(c[0]):.3g} (binding: {c[1]})"
                                                             for v, c in caps.items())
          + f" -> gamma_thm = {GAMMA_THM[h]:.3g}")
print(f"practical gamma = 1/L = {GAMMA_PRACTICAL:.4g} ({GAMMA_PRACTICAL / max(GAMMA_THM.values()):.0f} x gamma_thm)")
print("rounds for the slowest mode to converge, 1/(gamma K lambda_min+): "
      f"practical {1 / (GAMMA_PRACTICAL * CFG['K'] * lam_pos[0]):.3g}, "
      f"gamma_thm {1 / (max(GAMMA_THM.values()) * CFG['K'] * lam_pos[0]):.3g}")


# %% [markdown]
# ## Runs
# The running average A_T = (1/T) sum_{t=1}^T (f(x_g^t) - f*), with x_g^1 = x^0 (the paper's
# indexing), for T = 1..rounds. The Monte-Carlo grid (h x step x method x seed) runs through
# `fedbound.sweep.evaluate`, so `with sweep.using(sweep.Executor(ray=True))` puts it on Ray.

# %%
def make(name, h, gamma, seed):
    if name == "SCAFFOLD":
        return SCAFFOLD(task, network=network, **options(h, gamma), seed=seed)
    cls = {"SD-GT": SDGT, "SD-FedAvg": SDFedAvg}[name]
    return cls(task, network, **options(h, gamma), seed=seed)


def running_average(seed, h, step, name):
    gamma = GAMMA_THM[h] if step == "thm" else GAMMA_PRACTICAL
    gap = run(make(name, h, gamma, seed), CFG["rounds"]).loss_gap[: CFG["rounds"]]
    return np.cumsum(gap) / np.arange(1, gap.size + 1)


def grid(hs):
    """SD-GT at gamma_thm, then every method at the practical step, for each h in hs."""
    return {"h": hs, "zip": {"step": ["thm"] + ["practical"] * len(METHODS), "name": ["SD-GT", *METHODS]}}


T = np.arange(1, CFG["rounds"] + 1)
full = sweep.evaluate(running_average, grid(M), seeds=1)          # full participation is deterministic
partial = sweep.evaluate(running_average, grid([h for h in H_VALUES if h != M]), seeds=CFG["seeds"])
avg = {(c["step"], c["h"], c["name"]): ev.estimate(**c) for ev in (full, partial) for c in ev.configurations}
print(f"{len(avg)} curves in {time.time() - started:.0f} s")


# %% [markdown]
# ## Slopes and the bound
# A least-squares line through log A_T vs log T over the last decade T in [T_max/10, T_max] gives
# the exponent with a 95% interval (`fedbound.verify.rates.fit_log_log`). Theorem 2 (89) with
# sigma = 0 gives A_T <= 2||x^0 - x*||^2/(gamma K T); at gamma_thm every cap holds, so it must hold
# for every T (checked on the upper end of the Monte-Carlo interval); at the practical gamma the caps
# fail and the same formula is shown for comparison only.

# %%
def slope(est):
    window = T >= CFG["rounds"] // 10
    return fit_log_log(T[window], est.mean[window])


def bound(gamma):
    return 2 * R0 / (gamma * CFG["K"] * T)


fits = {key: slope(est) for key, est in avg.items()}
ratio = {}
for h in H_VALUES:
    est = avg["thm", h, "SD-GT"]
    ratio["thm", h] = float(np.max(est.high / bound(GAMMA_THM[h])))
    ratio["practical", h] = float(np.max(avg["practical", h, "SD-GT"].high / bound(GAMMA_PRACTICAL)))
    print(f"p = {P[h]:.2f}:")
    f = fits["thm", h, "SD-GT"]
    print(f"   gamma_thm = {GAMMA_THM[h]:.3g}: SD-GT slope {f.slope:.4f} [{f.low:.4f}, {f.high:.4f}], "
          f"max_T A_T(upper CI)/bound = {ratio['thm', h]:.3g}")
    for name in METHODS:
        f, est = fits["practical", h, name], avg["practical", h, name]
        print(f"   gamma = 1/L:  {name:9s} slope {f.slope:.4f} [{f.low:.4f}, {f.high:.4f}], "
              f"A_T at T = {CFG['rounds']}: {est.mean[-1]:.4g} [{est.low[-1]:.4g}, {est.high[-1]:.4g}]")
    print(f"   gamma = 1/L:  SD-GT max_T A_T/(2R/(gamma K T)) = {ratio['practical', h]:.3g} (caps violated)")

# %%
colors = {"SD-GT": "C0", "SD-FedAvg": "C1", "SCAFFOLD": "C2"}
fig, axes = plt.subplots(1, len(H_VALUES), figsize=(14, 4.2), sharey=True)
for ax, h in zip(axes, H_VALUES):
    for name in METHODS:
        est = avg["practical", h, name]
        ax.loglog(T, est.mean, color=colors[name], label=f"{name} (slope {fits['practical', h, name].slope:.3f})")
        if est.samples > 1:
            ax.fill_between(T, np.maximum(est.low, est.mean / 10), est.high, color=colors[name], alpha=0.2)
    ax.loglog(T, bound(GAMMA_PRACTICAL), "k:", label="2R/(gamma K T) (caps violated)")
    ax.set_title(f"gamma = 1/L, p = {P[h]:.2f}")
    ax.set_xlabel("T (global rounds)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
axes[0].set_ylabel("(1/T) sum_t (f(x_g^t) - f*)")
fig.suptitle("Fig. 12 analogue: average suboptimality, practical step")
fig.tight_layout()
plt.show()

fig, ax = plt.subplots(figsize=(6.5, 4.2))
for h in H_VALUES:
    est = avg["thm", h, "SD-GT"]
    line, = ax.loglog(T, est.mean, label=f"SD-GT, p = {P[h]:.2f} (gamma = {GAMMA_THM[h]:.2g})")
    ax.loglog(T, bound(GAMMA_THM[h]), ":", color=line.get_color())
ax.set_title("SD-GT at gamma_thm (all caps hold); dotted: Theorem 2 bound")
ax.set_xlabel("T (global rounds)")
ax.set_ylabel("(1/T) sum_t (f(x_g^t) - f*)")
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Summary: measured numbers and verdicts
# Per case (p), then a claim is REPRODUCED when every case agrees, NOT reproduced when a case
# contradicts it beyond the intervals, INCONCLUSIVE otherwise.
# * *Sublinear O(1/T)*: at gamma = 1/L, SD-GT's fitted log-log slope is within 0.1 of -1 (the 95%
#   interval is printed; with sigma = 0 the curve is smooth, so the interval is narrow and the
#   tolerance 0.1 is what "near -1" means here).
# * *Theorem 2 bound holds*: at gamma_thm, A_T (upper CI) <= 2||x^0 - x*||^2/(gamma K T) for every T
#   (contradicted if the lower CI exceeds it at some T).
# * *SD-GT beats SD-FedAvg and SCAFFOLD*: at gamma = 1/L and T = T_max, SD-GT's interval for A_T lies
#   below both baselines' intervals (contradicted if it lies above one of them).

# %%
final = {(h, n): avg["practical", h, n] for h in H_VALUES for n in METHODS}
lower_ratio = {h: float(np.max(avg["thm", h, "SD-GT"].low / bound(GAMMA_THM[h]))) for h in H_VALUES}


def beats(h):
    mine, others = final[h, "SD-GT"], [final[h, n] for n in ("SD-FedAvg", "SCAFFOLD")]
    return (all(mine.high[-1] < o.low[-1] for o in others), any(mine.low[-1] > o.high[-1] for o in others))


cases = {
    "SD-GT: slope near -1 at gamma = 1/L (every p)": [
        (abs(fits["practical", h, "SD-GT"].slope + 1) <= 0.1, abs(fits["practical", h, "SD-GT"].slope + 1) > 0.1)
        for h in H_VALUES],
    "Theorem 2 bound holds at gamma_thm (every p, every T)": [
        (ratio["thm", h] <= 1, lower_ratio[h] > 1) for h in H_VALUES],
    "SD-GT beats SD-FedAvg and SCAFFOLD at T_max (every p)": [beats(h) for h in H_VALUES],
}
for h in H_VALUES:
    slopes = ", ".join(f"{n} {fits['practical', h, n].slope:.3f}" for n in METHODS)
    finals = ", ".join(f"{n} {final[h, n].mean[-1]:.4g} [{final[h, n].low[-1]:.4g}, {final[h, n].high[-1]:.4g}]"
                       for n in METHODS)
    print(f"p = {P[h]:.2f}: slopes (gamma = 1/L) {slopes}")
    print(f"          A_T at T = {CFG['rounds']} (gamma = 1/L): {finals}; SD-GT beats both: {beats(h)[0]}")
    print(f"          gamma_thm = {GAMMA_THM[h]:.3g}: SD-GT slope {fits['thm', h, 'SD-GT'].slope:.3f}, "
          f"max A_T/bound {ratio['thm', h]:.3g}; at gamma = 1/L max A_T/bound {ratio['practical', h]:.3g}")
print()
for claim, claim_cases in cases.items():
    print(f"{reproduction_verdict(claim_cases):15s} {claim}")
print(f"\ntotal time {time.time() - started:.0f} s")
