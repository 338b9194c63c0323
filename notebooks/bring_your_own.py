# %% [markdown]
# # Bring your own algorithm and theorem (issue 21)
#
# fedbound's commands work on any algorithm and theorem registered through `fedbound.extend`, not
# only on the four papers it ships. This notebook plays a researcher with a new method, FedAvg with
# server-side Nesterov momentum, and a convergence theorem for it:
#
# 1. `fedbound new plugin` writes the plugin package (algorithm, theorem with its constants' domains
#    and meanings, the paper's audit claims, a check against runs, a PEP method, tests);
# 2. the plugin is loaded and its algorithm runs against FedAvg on the same task, seeds batched;
# 3. the theorem is evaluated (bound, largest step) at a run's constants, which the plugin's
#    adapter computes from the task;
# 4. the bound is checked against Monte-Carlo runs (`fedbound verify`'s engine) with 95% intervals;
# 5. the audit checks the theorem's claims on admissible constants;
# 6. the exact round map (autograd of one round on a quadratic) gives the contraction factor, which
#    must be within the theorem's rate 1 - mu gamma K/4;
# 7. PEP certifies the worst case of the method over all L-smooth, mu-strongly convex clients and
#    compares it with the theorem.
#
# The theorem is the template's illustration (seed-free: it is not a published result); the same
# steps apply to yours.

# %%
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from fedbound import sweep
from fedbound.algorithms import registry
from fedbound.extend import load_plugin, new_plugin
from fedbound.pep import certify
from fedbound.tasks import Quadratic, make_task
from fedbound.testing import assert_matches_theory
from fedbound.theory import get
from fedbound.theory.audit import run_audit
from fedbound.verify import exact_round
from fedbound.verify.theorem import theorem_checks

warnings.filterwarnings("ignore", message="Solution may be inaccurate")
SCALE = os.environ.get("FEDBOUND_SCALE", "full")
FULL = SCALE == "full"
SEEDS = 40 if FULL else 8
started = time.time()
print(f"scale={SCALE}")

# %% [markdown]
# ## 1. The plugin package
#
# `fedbound new plugin DIR --name nesterov` (here from Python) writes a pip-installable package
# `fedbound_nesterov` with an entry point in the group `fedbound.plugins`: once installed, every
# `fedbound` command finds it without a flag. Here the package is put on `sys.path` and loaded
# explicitly, as `fedbound --plugin fedbound_nesterov` would.

# %%
root = Path(tempfile.mkdtemp(prefix="fedbound-byo-")) / "nesterov"
for path in new_plugin(root, "nesterov"):
    print(path.relative_to(root))
sys.path.insert(0, str(root))
load_plugin("fedbound_nesterov")
print("registered:", "nesterov" in registry.names(), get("nesterov.thm1").title)

# %% [markdown]
# ## 2. Run it against FedAvg
#
# A heterogeneous quadratic task (n = 8 clients, d = 4, gradient noise sigma = 0.1) with exactly
# known L, mu and x*; 4 of 8 clients per round, K = 2 local steps, the same client step for both
# methods. `sweep.runs` batches the seeds of each configuration.

# %%
task = make_task("quadratic", n=8, d=4, seed=0, float64=True).with_noise(0.1)
THM1 = get("nesterov.thm1")
beta, K, c = 0.5, 2, 4
gamma = float(THM1.max_step(L=task.L, K=K, beta=beta)[0])
ROUNDS = 150 if FULL else 60


def make(seed, algorithm):
    extra = {"server_momentum": beta} if algorithm == "nesterov" else {}
    return registry.build(algorithm, task, seed=seed, lr=gamma, local_steps=K,
                          clients_per_round=c, **extra)


ev = sweep.runs(make, ROUNDS, grid={"algorithm": ["fedavg", "nesterov"]}, seeds=SEEDS)
fig, ax = plt.subplots(figsize=(5.5, 3.5))
for name in ("fedavg", "nesterov"):
    est = ev.estimate(algorithm=name)["dist2"]
    ax.semilogy(est.mean, label=name)
    ax.fill_between(np.arange(len(est.mean)), np.maximum(est.low, 1e-300), est.high, alpha=0.3)
    print(f"{name:9s} final E||x - x*||^2: {float(est.mean[-1]):.4g} "
          f"[{float(est.low[-1]):.4g}, {float(est.high[-1]):.4g}]")
ax.set_xlabel("round")
ax.set_ylabel("E||x_t - x*||^2, 95% interval")
ax.set_title(f"gamma = {gamma:.3g} (the step condition's cap), {SEEDS} seeds")
ax.legend()
plt.show()

# %% [markdown]
# ## 3. The theorem at the run's constants
#
# The plugin's adapter maps the run (task and options) to Theorem 1's constants: L, mu, sigma and
# zeta^2 = sum_i p_i ||grad f_i(x*)||^2 from the task, D = ||x_0 - x*||^2, gamma, K, beta, c from the
# options. `fedbound constants nesterov.thm1` prints each constant's meaning and domain.

# %%
from fedbound_nesterov.adapter import constants as adapter_constants  # noqa: E402

consts = adapter_constants(task, None, "nesterov", {"lr": gamma, "local_steps": K,
                                                    "clients_per_round": c, "server_momentum": beta})
meanings = {info.name: info.meaning for info in THM1.constant_info()}
for name, value in sorted(consts.items()):
    print(f"  {name:6s} = {value:<10.6g} {meanings[name]}")
cap, binding = THM1.max_step(**{k: v for k, v in consts.items() if k != "gamma"})
print(f"largest step: {float(cap):.6g} (binding condition {binding})")
horizon = np.arange(1, ROUNDS + 1)
bound = np.array([float(THM1.bound(**{**consts, "T": int(t)})) for t in horizon])
floor = float(THM1.bound(**{**consts, "D": 0.0, "T": 10 ** 9}))
print(f"bound at T = 1: {bound[0]:.4g}, at T = {ROUNDS}: {bound[-1]:.4g}; floor {floor:.4g}")

# %% [markdown]
# ## 4. The bound against measured runs
#
# `assert_matches_theory` (the helper the plugin's own tests use) runs Monte-Carlo seeds, reads the
# theorem's measure (`E||x_T - x*||^2`, the last iterate), and checks the bound with the whole 95%
# interval at every round; `theorem_checks` is the same engine behind `fedbound verify nesterov`.

# %%
match = assert_matches_theory("nesterov", THM1, task,
                              options={"lr": gamma, "local_steps": K, "clients_per_round": c,
                                       "server_momentum": beta},
                              rounds=ROUNDS, seeds=SEEDS)
print(match.check.summary())
print("rate:", match.rate, match.rate_note)
fig, ax = plt.subplots(figsize=(5.5, 3.5))
ax.semilogy(match.rounds, match.measured.mean, label="measured E||x_T - x*||^2")
ax.fill_between(match.rounds, match.measured.low, match.measured.high, alpha=0.3)
ax.semilogy(match.rounds, match.bound, "k--", label="Theorem 1 (2)")
ax.set_xlabel("T")
ax.legend()
plt.show()
worst = float(np.max(match.measured.high / match.bound))
print(f"largest upper 95% end / bound: {worst:.3g} (< 1: the bound holds on these runs)")
plain = make_task("quadratic", n=8, d=4, seed=0, float64=True)    # the check adds noise sigma
checks = theorem_checks("nesterov.thm1", "nesterov", plain,
                        options={"lr": gamma, "local_steps": K, "clients_per_round": c,
                                 "server_momentum": beta},
                        sigma=0.1, rounds=ROUNDS, seeds=SEEDS)
for check in checks:
    print(check.summary())

# %% [markdown]
# ## 5. The audit of the theorem's claims
#
# The paper `nesterov` holds two claims, each checked by computation on admissible constants only
# (mu <= L, gamma a fraction of its cap, c <= n): the rate is a contraction under (1), and the bound
# does not grow with T.

# %%
for report in run_audit("nesterov", samples=4000 if FULL else 500, seed=0,
                        iterations=20 if FULL else 5):
    row = report.to_dict()
    print(f"{row['claim']:20s} {row['verdict']:6s} largest violation ratio "
          f"{row['violation_ratio']:.3g} over {row['n_evaluated']} admissible instances")

# %% [markdown]
# ## 6. Exact contraction on quadratics
#
# On a quadratic task the round of any registered algorithm is affine in its (augmented) state,
# the server momentum buffer included; `exact_round` obtains the map by autograd of the round itself.
# Its spectral radius rho is the method's exact linear rate; Theorem 1 (2) with identical optima
# and no noise implies rho^2 <= 1 - mu gamma K/4. Sweeping beta shows how much room the theorem
# leaves.

# %%
quad = Quadratic.generate(6, 3, kappa=5.0, mu=0.5, heterogeneity=0.0, seed=1)
betas = np.linspace(0.0, 0.9, 10 if FULL else 4)
rho2, theory = [], []
for b in betas:
    lr = float(THM1.max_step(L=quad.L, K=3, beta=float(b))[0])
    alg = registry.build("nesterov", quad, lr=lr, local_steps=3, server_momentum=float(b))
    rho2.append(exact_round(alg).spectral_radius ** 2)
    theory.append(1 - quad.mu * lr * 3 / 4)
fig, ax = plt.subplots(figsize=(5.5, 3.5))
ax.plot(betas, rho2, "o-", label="exact rho^2 (autograd of the round)")
ax.plot(betas, theory, "s--", label="Theorem 1: 1 - mu gamma K / 4")
ax.set_xlabel("server momentum beta (gamma at the cap of (1))")
ax.legend()
plt.show()
print("rho^2 <= theorem's rate at every beta:", all(r <= t * (1 + 1e-12) for r, t in zip(rho2, theory)))

# %% [markdown]
# ## 7. The worst case by performance estimation
#
# The plugin's PEP method describes its round in fedbound's vocabulary (`RoundSpec`); PEP certifies
# the worst ||x_R - x*||^2 over every set of L-smooth, mu-strongly convex clients with
# ||x_0 - x*||^2 <= 1, next to Theorem 1 at the same constants and to the best quadratic instance.

# %%
horizons = [1, 2, 3] if FULL else [1, 2]
certs = [certify("nesterov", rounds=R, local_steps=2, lr=0.01, server_momentum=0.5, zeta=0.3,
                 lower_bound_starts=8 if FULL else 2) for R in horizons]
for R, cert in zip(horizons, certs):
    print(f"R={R}: quadratic {cert.lower_bound:.4f} <= PEP worst {cert.worst_case:.4f} "
          f"<= Theorem 1 {cert.theory:.4f} ({cert.solver})")
fig, ax = plt.subplots(figsize=(5.5, 3.5))
ax.semilogy(horizons, [c.worst_case for c in certs], "o-", label="PEP worst case")
ax.semilogy(horizons, [c.lower_bound for c in certs], "s:", label="best quadratic found")
ax.semilogy(horizons, [c.theory for c in certs], "k--", label="Theorem 1")
ax.set_xlabel("rounds R")
ax.legend()
plt.show()
print(f"done in {time.time() - started:.0f} s")
