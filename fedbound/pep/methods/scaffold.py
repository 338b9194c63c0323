"""SCAFFOLD, deterministic, full participation (Karimireddy et al., ICML 2020, Algorithm 1 with
option-II control variates, as :mod:`fedbound.algorithms.federated.scaffold`; issue 13).

Per round, from y_i = x each client takes K steps y_i <- y_i - gamma (grad f_i(y_i) - c_i + c),
then c_i <- c_i - c + (x - y_i)/(K gamma), x <- x + eta_g (1/n) sum_i (y_i - x), c <- (1/n) sum_i c_i.
Control variates start at zero (``control_variates = zero``, the toolkit's implementation: the first round is
FedAvg) or at c_i = grad f_i(x0) (``control_variates = grad``). Class, conditions and metric as FedAvg
(:mod:`fedbound.pep.methods.local`). With ``grad`` control variates the worst case does not depend on zeta:
adding a_i^T x with sum_i a_i = 0 to the f_i shifts every c_i by a_i and leaves the iterates
unchanged, so every zeta has the worst case of zeta = 0 -- the PEP certifies it numerically.
No bound of the four papers covers SCAFFOLD in this setting (theory: none). The method is the
round method (:func:`fedbound.pep.rounds.round_method`) of FedAvg's round with control variates
(``control_variates``, formerly ``c0``) and the server step eta_g (``server_lr``, formerly ``eta_g``).
"""
from __future__ import annotations

from fedbound.pep.method import option, register
from fedbound.pep.methods.common import LOCAL_STEPS, LR
from fedbound.pep.rounds import CONTROL_VARIATES, RoundSpec, round_method
from fedbound.registry import choice_option, number_option

ROUND = RoundSpec(
    lr=LR, local_steps=LOCAL_STEPS,
    server_lr=option(number_option, "server_lr", "global step size eta_g", 1.0, low=0.0, high=10.0,
                     low_open=True, examples=(0.5, 1.0), aliases=("eta_g",)),
    control_variates=option(choice_option, "control_variates", "initial control variates: zero or grad "
                            "(c_i = grad f_i(x0))", "zero", choices=CONTROL_VARIATES, examples=("zero", "grad"),
                            aliases=("c0",)))

METHOD = register(round_method("scaffold", "SCAFFOLD (deterministic, option II control variates)", ROUND,
                               doc=__doc__))
