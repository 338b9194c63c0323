# %% [markdown]
# # FedAda2 Theorem 20: bound validity on real runs and the rate T^(-1/2)
#
# Checks **Theorem 20** (= main-text Theorem 6) and **Corollary 23** of FedAda2 (seed
# `004_a1d7c636af01c22e.txt` [L842-L1090]; notes `papers/fedada2.md` 4.9-4.10, 7.5 item 2, errata
# 8.1-8.4) on runs of Algorithm 2, and **Theorem 25** [L1187-L1329] on blended clients (Algorithm 5).
#
# **Setting (paper).** Algorithm 2: server AdaGrad with momentum (SU, v~_0 = tau^2), client SM3-II
# AdaGrad with the eps_s rule, full-batch local gradients, any participation. Bound:
# min_{t in [T]} ||grad f(x_{t-1})||^2 <= (Psi1 + ... + Psi5)/Psi6, and with eta_l = Theta(T^-1/2),
# eta = Theta(1) the right side decays like T^(-1/2) (Cor. 23).
#
# **Setup (here).** `RobustRegression` (f_i(x) = sum_j log(1 + (x_j - b_ij)^2): L = 2, coordinate
# bound G = 1 exactly, non-convex), n = 5 clients, d = 4, heterogeneity 1, full participation, exact
# gradients. FedAda2 (`fedbound.algorithms.federated.fedada2.FedAda2`; singleton covers of the vector model, so
# SM3 is diagonal AdaGrad) with K = 3, z = 1, eps = 0.1, eps_s = 1e-3, eta = 1, tau = 1e-2,
# beta~_1 = 0.9, eta_l = 0.3 T^(-1/2), for T = 2^6 .. 2^12 (2^6 .. 2^9 at small scale). The right side
# is evaluated by `fedbound.theory.get("fedada2.thm20")` at the runs' constants (FedAda2's adapter,
# `fedbound.theory.fedada2.adapter`) in the printed combination and with all four
# corrections ("rederived"), and in every one of the 16 switch variants for the validity check.
#
# **Caveat (notes 8.3).** The proof's L~ trick assumes the client heterogeneity away, so the bound is
# not certified for heterogeneous clients: the check below is empirical, and the last section shows
# that on these heterogeneous clients the left side does not vanish at all (the runs converge to a
# point where a normalized mean direction vanishes, not the gradient), so the printed bound, which
# decays like T^(-1/2), can only hold at finite T because of its enormous constant.

# %%
import os
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy import optimize, stats

from fedbound.algorithms import run
from fedbound.algorithms.federated.fedada2 import Blended, FedAda2, Strategy
from fedbound.algorithms.optim import chain, client
from fedbound.tasks.robust_regression import RobustRegression
from fedbound.theory import get
from fedbound.theory.fedada2 import adapter as fedada2_adapter
from fedbound.verify.check import reproduction_verdict

SCALE = os.environ.get("FEDBOUND_SCALE", "full")
FULL = SCALE == "full"
TS = 2 ** np.arange(6, 13 if FULL else 10)
started = time.time()
print(f"scale={SCALE}: T = {TS.tolist()}")
task = RobustRegression.generate(5, 4, heterogeneity=1.0, seed=0)
K, Z, EPS, EPS_S, ETA, TAU, B1, C_ETA = 3, 1, 0.1, 1e-3, 1.0, 1e-2, 0.9, 0.3
#: the runs' options but the client step lr = eta_l (a schedule in T)
OPTIONS = dict(local_steps=K, client_eps=EPS, eps_s=EPS_S, server_lr=ETA, tau=TAU, beta1=B1, delay=Z)
print(f"L = {task.L}, G_inf = {task.G_inf}, f(x0) - f* = {task.loss(task.x0) - task.f_star:.4f}")

# %%
from fedbound.verify.theorem import theorem_checks  # noqa: E402  (the code path of `fedbound verify fedada2`)

thm = get("fedada2.thm20")
lhs, last, checks = {}, {}, {}
for T in TS:
    eta_l = C_ETA / np.sqrt(T)
    # Theorem 20 (every variant) against runs of fedada2 at horizon T, the run's constants from FedAda2's
    # adapter: the same code as `fedbound verify fedada2` (deterministic runs, so the two seeds agree)
    checks[T] = {c.variant: c for c in theorem_checks("fedada2.thm20", "fedada2", task, None,
                                                      {**OPTIONS, "lr": eta_l}, rounds=int(T),
                                                      horizons=[int(T)], seeds=2, variants="all")}
    lhs[T] = checks[T]["printed"].measured          # min over t in [T] of ||grad f(x_{t-1})||^2
    traj = run(FedAda2(task, lr=eta_l, **OPTIONS, seed=0), int(T))
    last[T] = (traj.x_g[-1].numpy(), float(traj.grad_norm2[-1]))
print({int(T): f"{v:.3g}" for T, v in lhs.items()}, f"in {time.time() - started:.0f} s")

# %%
T_arr = TS.astype(float)
schedule = {"T": T_arr, "eta_l": C_ETA / np.sqrt(T_arr)}
# Theorem 20's constants of the runs (FedAda2's adapter); eta_l is replaced by the schedule (Theorem 25 below)
constants = fedada2_adapter.constants(task, None, "fedada2", {**OPTIONS, "lr": C_ETA}) | schedule
rhs = {v: np.array([checks[T][v].predicted for T in TS]) for v in thm.variants}
valid = {v: all(checks[T][v].status == "holds" for T in TS) for v in thm.variants}
slack = {v: float(np.min(r / np.array([lhs[T] for T in TS]))) for v, r in rhs.items()}
for v in ("printed", "rederived"):
    print(f"{v:9s}: RHS = " + ", ".join(f"{x:.3g}" for x in rhs[v]) + f"; min RHS/LHS = {slack[v]:.3g}")
print(f"all 16 variants hold on every run: {all(valid.values())}; smallest slack over variants: "
      f"{min(slack.values()):.3g} ({min(slack, key=slack.get)})")
print("Theorem 20 (every variant) bounds the measured min ||grad f||^2:",
      reproduction_verdict([(ok, not ok) for ok in valid.values()]))

# %% [markdown]
# ## Slopes
# The log-log slope of RHS(T) between the two largest T, for the printed combination (Cor. 23:
# -1/2) and the fully corrected one (notes 8.2: with L~^2 in Psi3, Psi3/Psi6 stops decaying, slope 0),
# and of the measured left side. The verdicts use a stated tolerance of 0.05 on the slope (the
# formula is deterministic; the tolerance absorbs the log factor and the Phi2 branch at finite T).

# %%
def slope(values):
    return float(np.diff(np.log(values[-2:]))[0] / np.diff(np.log(T_arr[-2:]))[0])


lhs_arr = np.array([lhs[T] for T in TS])
slopes = {"printed": slope(rhs["printed"]), "rederived": slope(rhs["rederived"]), "measured LHS": slope(lhs_arr)}
print({k: round(v, 3) for k, v in slopes.items()})
print("Cor. 23: printed RHS decays like T^(-1/2):",
      reproduction_verdict([(abs(slopes["printed"] + 0.5) <= 0.05, abs(slopes["printed"] + 0.5) > 0.05)]))
print("notes 8.2: the corrected (L^2, L~^2) RHS no longer vanishes:",
      reproduction_verdict([(slopes["rederived"] > -0.05, slopes["rederived"] <= -0.05)]))

fig, ax = plt.subplots(figsize=(7, 4.2))
for v in ("printed", "rederived"):
    ax.loglog(T_arr, rhs[v], "o-", label=f"Theorem 20 RHS ({v})")
ax.loglog(T_arr, lhs_arr, "ks-", label="measured min_t ||grad f(x_{t-1})||^2")
ax.loglog(T_arr, rhs["printed"][0] * (T_arr / T_arr[0]) ** -0.5, "k:", label="slope -1/2")
ax.set_xlabel("T (eta_l = 0.3 T^-1/2)")
ax.grid(True, alpha=0.3)
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## Does min_t ||grad f(x_{t-1})||^2 vanish? The heterogeneity gap (notes 8.3)
# Cor. 23 claims the left side decays like T^(-1/2). A least-squares fit of log LHS against log T
# with a 95% interval decides: decay at rate 1/2 (or faster) is contradicted if the whole interval
# lies above -1/2.
#
# The mechanism, derived here: as eta_l -> 0 a zero-initialized AdaGrad client barely moves in a
# round, so its update is Delta_i ~ -eta_l D_i(x) with D_i(x) = sum_{k=1}^K g_i/(sqrt(k)|g_i| + eps)
# (coordinate-wise, g_i = grad F_i(x)): a normalized, sign-like direction whose scale is independent
# of |g_i|. The server's adaptive step keeps a constant scale (eta fixed), so the runs settle where
# the mean direction D(x) = (1/n) sum_i D_i(x) vanishes, not where grad f = sum_i p_i g_i does; with
# heterogeneous clients the two differ. The root x^ of D is computed (scipy.optimize.root from the
# last iterate of the longest run) and ||grad f(x^)||^2 compared with the runs' final gradients.

# %%
def limit_direction(x):
    G = task.grad(torch.as_tensor(x).expand(task.n, -1)).numpy()
    return np.mean(sum(G / (np.sqrt(k) * np.abs(G) + EPS) for k in range(1, K + 1)), axis=0)


fit = stats.linregress(np.log(T_arr), np.log(lhs_arr))
half = stats.t.ppf(0.975, len(TS) - 2) * fit.stderr
print(f"fitted slope of the measured LHS: {fit.slope:.3f} [{fit.slope - half:.3f}, {fit.slope + half:.3f}]")
x_last, g_last = last[TS[-1]]
root = optimize.root(limit_direction, x_last, tol=1e-14)
x_hat = root.x
grad_hat = float(task.global_grad(torch.as_tensor(x_hat)).pow(2).sum())
print(f"root of the limit direction: |D(x^)| = {np.abs(limit_direction(x_hat)).max():.2g}, "
      f"||grad f(x^)||^2 = {grad_hat:.4f}; distance of the last iterate (T = {TS[-1]}) to x^: "
      f"{np.abs(x_last - x_hat).max():.2g}")
print("final ||grad f(x_T)||^2 per T:", {int(T): round(v[1], 4) for T, v in last.items()})
print("Cor. 23 on heterogeneous clients: min_t ||grad f||^2 decays like T^(-1/2):",
      reproduction_verdict([(fit.slope + half <= -0.5, fit.slope - half > -0.5)]))

# %% [markdown]
# ## Theorem 25: blended clients (Algorithm 5)
# The same task and schedule with blended clients: SGD and zero-initialized AdaGrad (eps = 0.1),
# both with the client step eta_l and the eps_s rule, alternating over the clients, K(O_l) = 3 and 2,
# weights w(O_l) = 0.8 and 1.2. Theorem 25's constants for these optimizers (notes 3, optimizer
# condition): a = A = 1; denominators in [m_l, M_l] = [1, 1] (SGD) and [eps, sqrt(K G^2) + eps]
# (AdaGrad, zero-init); Xi^- = 0.8, Xi^+ = 1.2 (the printed strict inequalities relaxed to the
# attained weights: the bound is monotone in both); K = 3.

# %%
def blended_run(T):
    eta_l = C_ETA / np.sqrt(T)
    drop = client.drop_small_steps(EPS_S, lr=eta_l)
    strategies = [Strategy(chain(client.sgd(eta_l), drop), 3, 0.8),
                  Strategy(chain(client.adagrad(eta_l, EPS), drop), 2, 1.2)]
    alg = Blended(task, strategies=strategies, assignment=np.arange(task.n) % 2, server_lr=ETA, tau=TAU,
                  beta1=B1, seed=0)
    return float(np.min(run(alg, int(T)).grad_norm2[:-1]))


thm25 = get("fedada2.thm25")
blend_lhs = np.array([blended_run(T) for T in TS])
# the server's and the task's constants as in Theorem 20; the strategies' bounds by hand
c25 = {c: constants[c] for c in ("K", "G", "L", "d", "beta1_tilde", "eps_s", "eta", "f_gap", "tau", "vtilde0",
                                 "T", "eta_l")} | dict(
    A_max=1.0, a_min=1.0, m_min=min(1.0, EPS), M_max=max(1.0, np.sqrt(K * task.G_inf ** 2) + EPS),
    xi_minus=0.8, xi_plus=1.2)
rhs25 = {v: np.asarray(thm25.bound(v, **c25), dtype=float) for v in thm25.variants}
for v, r in rhs25.items():
    print(f"Theorem 25 ({v}): RHS = " + ", ".join(f"{x:.3g}" for x in r) + f"; min RHS/LHS = {np.min(r / blend_lhs):.3g}")
print("measured min ||grad f||^2 (blended):", ", ".join(f"{x:.3g}" for x in blend_lhs))
ok25 = [bool(np.all(r >= blend_lhs)) for r in rhs25.values()]
print("Theorem 25 bounds the blended runs:", reproduction_verdict([(ok, not ok) for ok in ok25]))
print(f"total {time.time() - started:.0f} s")
