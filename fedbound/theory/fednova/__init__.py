"""FedNova (seed 001, papers/fednova.md): Theorems 1-3, Lemmas 3-4, Corollaries 1-3 and FedProx's
closed forms as registered Results (each result module registers its own);
:mod:`.accumulation` reduces accumulation vectors to their scalar constants (numpy only, so the
client optimizers can use it without sympy); :mod:`.preparation` declares the p_i, tau_i
preparation steps; :mod:`.audit` holds the paper's checkable claims.
"""
