"""Constants and provenance shared by the SD-GT results (seed 003, papers/sdgt.md).

Every SD-GT constant is declared in scope ``"sdgt"`` (key ``"sdgt.K"``; SD-GT results see it as
``K``): :func:`declare` is :func:`fedbound.theory.symbols.declare` with that scope.
"""
from fedbound.theory.paper import Paper
from fedbound.theory.symbols import NONNEGATIVE, POSITIVE_INTEGER, UNIT

SEED = "003_3166d581b98362e1.txt"
SCOPE = "sdgt"
PAPER = Paper(SCOPE, SEED)
declare, where = PAPER.declare, PAPER.where


K = declare("K", POSITIVE_INTEGER, "local steps (D2D rounds) per global round")
p = declare("p", UNIT, "sampling measure min_s(1 - beta_s^2) of SD-GT")
q = declare("q", UNIT, "mixing measure min_s rho_s of SD-GT")
# Lemma 7 (unroll-recursion lemma) constants
r0 = declare("r0", NONNEGATIVE, "Lemma 7: initial-distance constant r0")
b = declare("b", NONNEGATIVE, "Lemma 7: coefficient of the linear term")
e = declare("e", NONNEGATIVE, "Lemma 7: coefficient of the quadratic term")
u = declare("u", NONNEGATIVE, "Lemma 7: inverse of the step-size cap")
E1 = declare("E1", NONNEGATIVE, "initial optimality gap E f(x_g^1) - f*", latex="mathcal{E}_1")
R = declare("R", NONNEGATIVE, "initial distance E||x_g^1 - x*||^2")
