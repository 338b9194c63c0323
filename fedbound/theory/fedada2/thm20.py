r"""FedAda2 Theorem 20 (full form of main-text Theorem 6) for Algorithm 2, with its four independent
corrections as switches (seed 004 [L842-L1052], papers/fedada2.md 4.9 and 8.1, 8.2, 8.4, 8.27).

    min_{t in [T]} ||grad f(x_{t-1})||^2 <= (Psi1 + Psi2 + Psi3 + Psi4 + Psi5)/Psi6       [L844-L852]
    Psi1 = f(x0) - f(x*)
    Psi2 = eta^2 L T d ||Phi1||^2/tau^2
    Psi3 = (1 - b^T) eta eta_l K L~ T ||Phi1||^2/(alpha1 tau (sqrt(v0) + eps)^2)
    Psi4 = (1 - b)   eta eta_l K L T c(b) ||Phi2||^2/(alpha1 tau (sqrt(v0) + eps)^2)
    Psi5 = eta d ||Phi1|| G (1 - b + log(1 + T ||Phi1||^2/tau^2))/tau
    Psi6 = 3 (1 - b) eta gamma1 T/(4 (sqrt(T ||Phi1||^2 + v~0) + tau))
    gamma1 = eta_l K/(sqrt(v0 + d K G^2) + eps),   alpha1 = 1/(2 sqrt(v0 + d K G^2) + 2 eps)   [L862]
    L~ = 2 sqrt(d) G/(eta_l eps_s)                                                          [L140]

b = b~1 (server momentum), Phi1 from Lemma 15, Phi2 = min{eta sqrt(1 - b), eta Phi1/tau} (Lemma 16,
T-uniform). The switches (:data:`SWITCHES`), each one independent correction:

* ``norm``: "vector" reads Phi1, Phi2 as vectors (||Phi1||^2 = d phi1^2, [L739], notes 8.27), the
  faithful reading; "scalar" uses the scalar phi1, phi2 of Lemmas 15-16.
* ``denom``: "sqrt_v0" is the statement's (sqrt(v0) + eps)^2 [L852]; "v0" is eq. (15)'s (v0 + eps)^2
  [L1026] (notes 8.4).
* ``smooth``: "L" is the drift step as printed, ||a - b||^2 <= 2L||.||^2 + 2L~||.||^2 [L922]; "L2" is
  the correct 2L^2||.||^2 + 2L~^2||.||^2 (notes 8.2): Psi3 gets L~^2 and Psi4 gets L^2.
* ``phi1``: Lemma 15's "printed" Phi1 (inner eta_l) or the "proved" one (notes 8.1).

:func:`thm20_variants` generates the 16 variants from the switches; the printed combination is the
variant "printed" (vector, sqrt_v0, L, printed), the fully corrected one "rederived" (vector,
sqrt_v0, L2, proved); the others are named by their settings, e.g.
"norm=scalar,denom=v0,smooth=L2,phi1=proved". :func:`psi_terms` builds the six Psi's for any
(Phi1, gamma1, alpha1, Psi3/Psi4 coefficient) and serves Theorem 25 and Corollaries 27 and 29;
:func:`ratios` names the bound's five terms Psi_i/Psi6 for its anatomy, and :data:`TRIVIAL` is the
trivial bound min(d G^2, 2 L f_gap) it is read against.
"""
from __future__ import annotations

import dataclasses
from typing import Annotated, Mapping

import sympy as sp
from sympy.codegen.cfunctions import log1p

from fedbound.argtypes import Choice
from fedbound.theory.fedada2.common import (G_inf, K_local, beta1_server, c_beta, d_params,
                                            eps_client, eps_s, eta_l, eta_server, f_gap, l_tilde,
                                            tau_adapt, v0, vtilde0, where)
from fedbound.theory.fedada2.lemmas import PHI1, phi2
from fedbound.theory.registry import register
from fedbound.theory.result import (Flag, Predicate, Reference, Result, StepCondition, Switch, Variant,
                                    switch_variants)
from fedbound.theory.statement import Measure
from fedbound.theory.symbols import L, T

#: the four independent corrections, each with its printed option (module docstring)
SWITCHES: tuple[Switch, ...] = (
    Switch("norm", {"vector": "Phi1, Phi2 as vectors (||Phi1||^2 = d phi1^2) [L739]",
                    "scalar": "Phi1, Phi2 as the scalars of Lemmas 15-16"}, printed="vector"),
    Switch("denom", {"sqrt_v0": "(sqrt(v0) + eps)^2 of the statement [L852]",
                     "v0": "(v0 + eps)^2 of eq. (15) [L1026]"}, printed="sqrt_v0"),
    Switch("smooth", {"L": "drift step with L and L~ as printed [L922]",
                      "L2": "drift step corrected to L^2 and L~^2 (notes 8.2)"}, printed="L"),
    Switch("phi1", {"printed": "Lemma 15's Phi1 as stated (inner eta_l) [L745]",
                    "proved": "Lemma 15's Phi1 as proved [L764-L776]"}, printed="printed"),
)
PRINTED = {s.name: s.printed for s in SWITCHES}
#: every correction applied: the variant named "rederived" (the engine would call it "smooth=L2,phi1=proved")
REDERIVED = {**PRINTED, "smooth": "L2", "phi1": "proved"}

GAMMA1 = eta_l * K_local / (sp.sqrt(v0 + d_params * K_local * G_inf ** 2) + eps_client)   # [L862]
ALPHA1 = 1 / (2 * sp.sqrt(v0 + d_params * K_local * G_inf ** 2) + 2 * eps_client)        # [L862]
L_TILDE = l_tilde(d_params, G_inf, eta_l, eps_s)


def psi_terms(phi1: sp.Expr | float, gamma1: sp.Expr | float, coefficient: sp.Expr | float,
              norm: Annotated[str, Choice(("vector", "scalar"))],
              smooth: Annotated[str, Choice(("L", "L2"))]) -> dict:
    """Psi1..Psi6 of Theorem 20's form [L844-L852] for a scalar Lemma-15-type bound ``phi1``, the
    intermediary ``gamma1`` and the common factor ``coefficient`` of Psi3 and Psi4 (Theorem 20:
    K/(alpha1 tau (sqrt(v0) + eps)^2); Theorem 25: C; Corollary 27: (1 - b1^(2K)) K B^2/(2 alpha1
    tau eps^2)), in ``norm`` mode ("vector" or "scalar") with the drift step's ``smooth`` power
    ("L" or "L2")."""
    b = beta1_server
    scale = d_params if norm == "vector" else 1
    phi1_sq = scale * phi1 ** 2
    phi2_sq = scale * phi2(phi1) ** 2
    power = 1 if smooth == "L" else 2
    return {
        "Psi1": f_gap,
        "Psi2": eta_server ** 2 * L * T * d_params * phi1_sq / tau_adapt ** 2,
        "Psi3": (1 - b ** T) * eta_server * eta_l * L_TILDE ** power * T * phi1_sq * coefficient,
        "Psi4": (1 - b) * eta_server * eta_l * L ** power * T * c_beta(b) * phi2_sq * coefficient,
        "Psi5": eta_server * d_params * sp.sqrt(phi1_sq) * G_inf
        * (1 - b + log1p(T * phi1_sq / tau_adapt ** 2)) / tau_adapt,
        "Psi6": 3 * (1 - b) * eta_server * gamma1 * T
        / (4 * (sp.sqrt(T * phi1_sq + vtilde0) + tau_adapt)),
    }


def ratios(psi: Mapping[str, sp.Expr | float]) -> dict[str, sp.Expr]:
    """The five terms Psi_i/Psi6 of the bound by name ("Psi1/Psi6", ...): the variants'
    ``term_names`` (:mod:`fedbound.theory.anatomy`)."""
    return {f"Psi{i}/Psi6": psi[f"Psi{i}"] / psi["Psi6"] for i in range(1, 6)}


def bound_of(psi: Mapping[str, sp.Expr | float]) -> sp.Expr:
    """(Psi1 + ... + Psi5)/Psi6 as a sum of the five ratios Psi_i/Psi6 (one term each)."""
    return sp.Add(*ratios(psi).values())


def thm20_fields(settings: dict[str, str]) -> dict:
    """The bound and extras of Theorem 20 at one setting of every switch in :data:`SWITCHES`."""
    phi1 = PHI1[settings["phi1"]]
    root = sp.sqrt(v0) if settings["denom"] == "sqrt_v0" else v0
    coefficient = K_local / (ALPHA1 * tau_adapt * (root + eps_client) ** 2)
    psi = psi_terms(phi1, GAMMA1, coefficient, settings["norm"], settings["smooth"])
    return {"bound": bound_of(psi), "extras": {**psi, "phi1": phi1, "phi2": phi2(phi1)},
            "predicates": (VTILDE0_PREDICATE,), "term_names": ratios(psi)}


#: what min_t ||grad f(x_{t-1})||^2 is at most without the theorem: its t = 1 value
#: ||grad f(x_0)||^2 <= 2 L (f(x_0) - f*) (A1, f bounded below with a minimiser [L90, L130]) and
#: <= d G^2 (A2, |grad_j f| <= G [L134-L138]); the audit's thm20.nonvacuous compares with the same
TRIVIAL = Reference(sp.Min(d_params * G_inf ** 2, 2 * L * f_gap), "min(d G^2, 2 L f_gap)", "trivial",
                    "min_t <= ||grad f(x_0)||^2, A1 [L130] and A2 [L134-L138]")


#: the statement's assumption v~_0 >= tau^2 [L842]
VTILDE0_PREDICATE = Predicate("vtilde0 >= tau^2", vtilde0, ">=", tau_adapt ** 2, "[L842]")


def rename(variants: list[Variant], settings: dict[str, str], name: str) -> list[Variant]:
    """``variants`` with the one generated at ``settings`` renamed ``name`` (e.g. "rederived" for
    the fully corrected combination); it stays reachable by its settings ("smooth=L2,phi1=proved")."""
    return [dataclasses.replace(v, name=name, _compiled={}) if dict(v.settings) == settings else v
            for v in variants]


#: The step condition of the "rederived" variant. The paper states none: "We make no other
#: assumptions on local or global learning rates" [L160], and the statement assumes no restriction
#: [L842-L852] (known issue "step"). The proof needs none for the inequality itself (every step of
#: [L886-L1052] is an upper bound at any eta, eta_l); what the paper's convergence claim needs is
#: Corollary 23's case A, eta_l = O(T^-1/2) with T eta_l^2 = O(1) [L1075-L1118], the regime where
#: Psi6 = Theta(eta eta_l T) and Corollary 24's rate O(T^-1/2) is read [L1120-L1126]. The rederived
#: variant states it with the Theta-constant 1: eta_l <= T^-1/2 (so T eta_l^2 <= 1).
STEP_CONDITION = StepCondition("Cor. 23 case A: T eta_l^2 <= 1", 1 / sp.sqrt(T), False,
                               "[L1075-L1118] (the paper states no condition [L160])", variable=eta_l)


def thm20_variants() -> list[Variant]:
    """All 2^4 = 16 variants, generated from :data:`SWITCHES` by
    :func:`~fedbound.theory.result.switch_variants` ("printed" first); the fully corrected one is
    named "rederived" and carries :data:`STEP_CONDITION`."""
    variants = rename(switch_variants(SWITCHES, thm20_fields, "Theorem 20"), REDERIVED, "rederived")
    return [dataclasses.replace(v, conditions=(STEP_CONDITION,), _compiled={}) if v.name == "rederived"
            else v for v in variants]


THM20 = register(Result(
    id="fedada2.thm20",
    title="Theorem 20 (non-convex bound of Algorithm 2: server AdaGrad + SM3-II clients)",
    statement="For Algorithm 2 with full-batch local gradients, m~_0 = 0, v~_0 >= tau^2 and no step-size "
              "restriction: min_{t in [T]} ||grad f(x_{t-1})||^2 <= (Psi1 + ... + Psi5)/Psi6.",
    provenance=where("Theorem 20, (15)", "842-1052"),
    assumptions=("A1 (L-smooth)", "A2 (|grad_j F_i(x, z)| <= G)", "full-batch local gradients [L913]",
                 "the L~ trick [L138-L142]: only for ||x - y|| >= eta_l eps_s (notes 8.3)",
                 "proof written for the case without clipping [L892]"),
    lhs="min_{t in [T]} ||grad f(x_{t-1})||^2",
    variants=thm20_variants(),
    default_variant="printed",
    measure=Measure("grad_norm2", "min"),
    reference=TRIVIAL,
    relations=(VTILDE0_PREDICATE,),
    known_issues=(
        Flag("step", "no step condition is stated ([L160]: no assumption on the learning rates); the "
                     "'rederived' variant carries Corollary 23's case A, eta_l <= T^-1/2 [L1075-L1118]. "
                     "At typical constants the bound is astronomically above the trivial bound "
                     "min(d G^2, 2 L f_gap) on min_t ||grad f(x_{t-1})||^2 (audit: thm20.nonvacuous)"),
        Flag("8.1", "Lemma 15's printed Phi1 has an inner eta_l the proof does not give"),
        Flag("8.2", "[L922] L and L~ where L^2 and L~^2 are needed; with L~^2 = Theta(eta_l^-2) the "
                    "bound no longer vanishes (audit: thm20.vanishes)"),
        Flag("8.3", "the L~ trick hides client heterogeneity: not a certified inequality"),
        Flag("8.4", "(v0 + eps)^2 in (15) versus (sqrt(v0) + eps)^2 in the statement"),
        Flag("8.27", "Phi viewed as a vector: ||Phi1||^2 = d phi1^2, d counted twice in Psi2/Psi5"),
    ),
))
