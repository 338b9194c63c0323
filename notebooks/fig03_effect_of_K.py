# %% [markdown]
# # SD-GT Figs. 3 and 16: effect of the number of D2D rounds K on a non-iid classifier
#
# Reproduces **Fig. 3** (seed `003_3166d581b98362e1.txt`, figure [L474], Sec. V-C [L504-L506]) and
# **Fig. 16** (Appendix [L1123-L1132]) of the SD-GT paper at CPU scale (engineering notes
# `papers/sdgt.md` 6.6 and 7.4 item 13).
#
# **Setup (paper).** CIFAR-10 (Fig. 3) and MNIST (Fig. 16), each client holding one class, n = 30
# clients in S = 3 subnets grouped by proximity, 40% of each subnet sampled per global round,
# K from 3 to 15; SD-GT against SD-FedAvg and SCAFFOLD (SCAFFOLD does K local steps without D2D).
#
# **Setup (here).** scikit-learn's 8x8 digits (1437 training / 360 test images) standing in for
# MNIST, one class per client (`one_class_partition`: 3 clients per class), clients placed in the
# random geometric network in a seeded random order (the paper's subnets are formed by position,
# independently of the data), so each subnet of 10 holds 6-7 of the 10 classes. A one-hidden-layer
# tanh MLP (64-32-10, d = 2410; hidden width 16 at small scale), full local gradients (the only
# randomness is the client sampling), h_s = 4 of 10 (p = 0.64), K in {1, 3, 5, 10} ({1, 5} at small
# scale), the same number of global rounds T for every K, two step sizes gamma in {0.1, 0.5} (one at
# small scale) shared by all methods. Monte-Carlo means over sampling seeds with 95% intervals; the
# same seeds (hence the same sampling sequences) are used for every (method, K), so comparisons are
# paired.
#
# **Paper's claim.** SD-GT gains from larger K while SD-FedAvg does not (Fig. 3); SCAFFOLD is slower
# than SD-GT (Fig. 3), for every K, with a gap that grows with K (Fig. 16).

# %%
import os
import time

import matplotlib.pyplot as plt
import numpy as np

from fedbound import sweep
from fedbound.algorithms import SCAFFOLD, SDGT, SDFedAvg, run
from fedbound.network import Network, p_from_h
from fedbound.tasks import MLPClassifier, digits, one_class_partition, train_test_split
from fedbound.verify.check import reproduction_verdict
from fedbound.stats import mean_ci

SCALE = os.environ.get("FEDBOUND_SCALE", "full")
FULL = SCALE == "full"
CFG = (dict(hidden=32, Ks=(1, 3, 5, 10), gammas=(0.1, 0.5), rounds=50, seeds=4) if FULL
       else dict(hidden=16, Ks=(1, 5), gammas=(0.5,), rounds=20, seeds=2))
N, S, M, H = 30, 3, 10, 4
METHODS = ("SD-GT", "SD-FedAvg", "SCAFFOLD")
started = time.time()
print(f"scale={SCALE}: {CFG}")

# %%
features, labels = digits()
train_x, train_y, test_x, test_y = train_test_split(features, labels, 0.2, seed=0)
parts = one_class_partition(train_y, N, seed=0)
order = np.random.default_rng(0).permutation(N)            # client order independent of position
parts = [parts[i] for i in order]
task = MLPClassifier([train_x[p] for p in parts], [train_y[p] for p in parts], test_x, test_y,
                     hidden=(CFG["hidden"],), num_classes=10, init_seed=0)
network = Network.random_geometric(S=S, m=M, seed=0)
print(network, "rho_s =", np.round(network.rho, 3), f"p = {p_from_h(H, network.m):.2f}, d = {task.d}")
for s in range(S):
    classes = sorted({int(train_y[parts[i]][0]) for i in network.members(s)})
    print(f"subnet {s}: classes {classes}")
print(f"initial test accuracy {task.accuracy(task.x0):.3f}, loss {task.loss(task.x0):.3f}")


# %% [markdown]
# ## Runs
# Test accuracy of x_g after every global round and the training loss f(x_g). The Monte-Carlo grid
# (step size x K x method x seed) runs through `fedbound.sweep.evaluate`, so
# `with sweep.using(sweep.Executor(ray=True))` puts it on Ray.

# %%
def make(name, gamma, K, seed):
    if name == "SCAFFOLD":
        return SCAFFOLD(task, network=network, lr=gamma, local_steps=K, clients_per_subnet=H, seed=seed)
    cls = {"SD-GT": SDGT, "SD-FedAvg": SDFedAvg}[name]
    return cls(task, network, gamma=gamma, K=K, h=H, seed=seed)


def curves(seed, gamma, K, name):
    """Test accuracy and training loss of x_g per round, for one seed."""
    tr = run(make(name, gamma, K, seed), CFG["rounds"])
    return {"acc": np.array([task.accuracy(x) for x in tr.x_g]), "loss": np.asarray(tr.loss)}


ev = sweep.evaluate(curves, grid={"gamma": CFG["gammas"], "K": CFG["Ks"], "name": METHODS}, seeds=CFG["seeds"])
acc = {(c["gamma"], c["K"], c["name"]): out["acc"] for c, out in ev.items()}
loss = {(c["gamma"], c["K"], c["name"]): out["loss"] for c, out in ev.items()}
print(f"{len(acc)} settings x {CFG['seeds']} seeds in {time.time() - started:.0f} s")

# %%
rounds = np.arange(CFG["rounds"] + 1)
for gamma in CFG["gammas"]:
    fig, axes = plt.subplots(1, len(METHODS), figsize=(14, 3.8), sharey=True)
    for ax, name in zip(axes, METHODS):
        for K in CFG["Ks"]:
            est = mean_ci(acc[gamma, K, name])
            line, = ax.plot(rounds, est.mean, label=f"K = {K}")
            ax.fill_between(rounds, est.low, est.high, color=line.get_color(), alpha=0.2)
        ax.set_title(f"{name}, gamma = {gamma}")
        ax.set_xlabel("global round t")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("test accuracy of x_g")
    fig.tight_layout()
    plt.show()

# %%
T = CFG["rounds"]
final_acc = {key: mean_ci(a[:, -1]) for key, a in acc.items()}
final_loss = {key: mean_ci(v[:, -1]) for key, v in loss.items()}
fig, axes = plt.subplots(len(CFG["gammas"]), 2, figsize=(11, 3.6 * len(CFG["gammas"])), squeeze=False)
for row, gamma in enumerate(CFG["gammas"]):
    for name in METHODS:
        for col, (table, label) in enumerate(((final_acc, "test accuracy"), (final_loss, "training loss f(x_g)"))):
            ests = [table[gamma, K, name] for K in CFG["Ks"]]
            mean = np.array([float(e.mean) for e in ests])
            err = np.array([[float(e.mean - e.low) for e in ests], [float(e.high - e.mean) for e in ests]])
            axes[row, col].errorbar(CFG["Ks"], mean, yerr=err, marker="o", capsize=3, label=name)
            axes[row, col].set_ylabel(f"{label} at T = {T}")
            axes[row, col].set_xlabel("K")
            axes[row, col].set_title(f"gamma = {gamma}")
            axes[row, col].grid(True, alpha=0.3)
    axes[row, 0].legend()
    axes[row, 1].set_yscale("log")
fig.suptitle("Figs. 3/16 analogue: after a fixed number of global rounds")
fig.tight_layout()
plt.show()

for gamma in CFG["gammas"]:
    print(f"gamma = {gamma}: test accuracy (and training loss) at T = {T}, mean [95% CI] over {CFG['seeds']} seeds")
    for K in CFG["Ks"]:
        row = "  ".join(f"{n} {float(final_acc[gamma, K, n].mean):.3f} [{float(final_acc[gamma, K, n].low):.3f}, "
                        f"{float(final_acc[gamma, K, n].high):.3f}] ({float(final_loss[gamma, K, n].mean):.3f})"
                        for n in METHODS)
        print(f"   K = {K:2d}: {row}")

# %% [markdown]
# ## Summary: measured numbers and verdicts
# All comparisons are paired over seeds (same sampling sequences): the 95% interval of the per-seed
# difference of final test accuracies. Per step size, then a claim is REPRODUCED when every case
# agrees, NOT reproduced when a case contradicts it beyond the interval, INCONCLUSIVE otherwise.
# * *SD-GT gains from larger K*: acc(K_max) - acc(K = 1) > 0 (contradicted when < 0).
# * *SD-FedAvg does not gain from larger K*: the same difference is at most 0.005 (half a point) at
#   the upper end of its interval (contradicted when its lower end is > 0, i.e. it does gain).
# * *SCAFFOLD slower than SD-GT for every K*: acc_SD-GT - acc_SCAFFOLD > 0 at every K (contradicted
#   when < 0 at some K).
# * *the SD-GT - SCAFFOLD gap grows with K*: gap(K_max) - gap(K = 1) > 0 (contradicted when < 0).

# %%
def paired(diff):
    est = mean_ci(diff)
    return float(est.mean), float(est.low), float(est.high)


k1, kmax = CFG["Ks"][0], CFG["Ks"][-1]
cases = {claim: [] for claim in ("SD-GT gains from larger K", "SD-FedAvg does not gain from larger K",
                                 "SCAFFOLD slower than SD-GT for every K",
                                 "SD-GT - SCAFFOLD gap grows with K")}
for gamma in CFG["gammas"]:
    final = {(K, n): acc[gamma, K, n][:, -1] for K in CFG["Ks"] for n in METHODS}
    gain = {n: paired(final[kmax, n] - final[k1, n]) for n in METHODS}
    gap = {K: paired(final[K, "SD-GT"] - final[K, "SCAFFOLD"]) for K in CFG["Ks"]}
    growth = paired((final[kmax, "SD-GT"] - final[kmax, "SCAFFOLD"]) - (final[k1, "SD-GT"] - final[k1, "SCAFFOLD"]))
    print(f"gamma = {gamma}: accuracy gain from K = {k1} to K = {kmax}: "
          + ", ".join(f"{n} {m:+.3f} [{lo:+.3f}, {hi:+.3f}]" for n, (m, lo, hi) in gain.items()))
    print("            SD-GT - SCAFFOLD accuracy gap: "
          + ", ".join(f"K={K} {m:+.3f} [{lo:+.3f}, {hi:+.3f}]" for K, (m, lo, hi) in gap.items())
          + f"; growth {growth[0]:+.3f} [{growth[1]:+.3f}, {growth[2]:+.3f}]")
    cases["SD-GT gains from larger K"].append((gain["SD-GT"][1] > 0, gain["SD-GT"][2] < 0))
    cases["SD-FedAvg does not gain from larger K"].append((gain["SD-FedAvg"][2] <= 0.005, gain["SD-FedAvg"][1] > 0))
    cases["SCAFFOLD slower than SD-GT for every K"] += [(lo > 0, hi < 0) for _, lo, hi in gap.values()]
    cases["SD-GT - SCAFFOLD gap grows with K"].append((growth[1] > 0, growth[2] < 0))
print()
for claim, claim_cases in cases.items():
    print(f"{reproduction_verdict(claim_cases):15s} {claim}")
print(f"\ntotal time {time.time() - started:.0f} s")
