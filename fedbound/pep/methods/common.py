"""Options and conditions shared by the certified methods (issue 13)."""
from __future__ import annotations

from fedbound.deprecation import renamed_attributes
from fedbound.errors import ValidationError
from fedbound.argtypes import NonNegative, Positive
from fedbound.pep.env import Env, heterogeneity
from fedbound.pep.method import option
from fedbound.registry import integer_option, number_option

#: the largest step size times L: beyond 2/L every method diverges, and the worst case of a diverging
#: method grows past what an SDP solver resolves (relative accuracy ~1e-8) within a few steps
MAX_STEP_L = 4.0

# the function class: constants in the papers' notation (fedbound.vocabulary.CONSTANTS)
L = option(number_option, "L", "smoothness constant L", 1.0, low=0.0, high=1e6, low_open=True,
           examples=(1.0, 2.0), constant=True)
MU = option(number_option, "mu", "strong convexity mu (0 <= mu < L)", 0.1, low=0.0, high=1e6,
            examples=(0.1, 0.5), constant=True)
ZETA = option(number_option, "zeta", "heterogeneity: (1/n) sum_i ||grad f_i(x*)||^2 <= zeta^2", 1.0,
              low=0.0, high=1e3, examples=(0.0, 0.3), constant=True)
# the method: options of the one vocabulary (fedbound.vocabulary.OPTIONS); the papers' letters of
# before (gamma, K, R) still work and warn
LR = option(number_option, "lr", f"(local) step size, the papers' gamma (lr L <= {MAX_STEP_L:g})", 1.0,
            low=0.0, high=1e6, low_open=True, examples=(0.5, 1.0), aliases=("gamma",))
N_CLIENTS = option(integer_option, "n", "number of clients / agents", 2, low=1, high=16, examples=(2, 3))
LOCAL_STEPS = option(integer_option, "local_steps", "local steps per round (K)", 4, low=1, high=64,
                     examples=(1, 2), aliases=("K",))
ROUNDS = option(integer_option, "rounds", "communication rounds (R)", 2, low=1, high=64,
                examples=(1, 2), aliases=("R",))


def step_check(name: str, step: Positive, L: Positive) -> None:
    """step L <= MAX_STEP_L (see there)."""
    if step * L > MAX_STEP_L:
        raise ValidationError(f"{name} L must be <= {MAX_STEP_L:g} (every method diverges beyond 2/L), "
                              f"got {name}={step:g}, L={L:g}")


def below_L(cfg: dict) -> None:
    """mu < L (mu = L would make every f_i the same quadratic)."""
    if cfg["mu"] >= cfg["L"]:
        raise ValidationError(f"mu must be < L, got mu={cfg['mu']:g}, L={cfg['L']:g}")


def strongly_convex_check(cfg: dict) -> None:
    """mu < L (:func:`below_L`) and lr L <= MAX_STEP_L."""
    below_L(cfg)
    step_check("lr", cfg["lr"], cfg["L"])


def start_and_heterogeneity(env: Env, zeta: NonNegative | None) -> None:
    """||x0 - x*||^2 <= 1 and, for several clients, (1/n) sum_i ||grad f_i(x*)||^2 <= zeta^2."""
    env.require(env.sq(env.x0 - env.xs), 1.0)
    if zeta is not None and env.n > 1:
        env.require(heterogeneity(env, env.xs), zeta ** 2)


def family(cfg: dict, **extra) -> dict:
    """The lower-bound family of a strongly convex setting: h in [mu, L]; g = 0 when zeta = 0."""
    return {"h_low": cfg["mu"], "zero_g": cfg.get("zeta", 0.0) == 0.0, **extra}


#: the option objects' names of before the one vocabulary
__getattr__ = renamed_attributes(__name__, {"GAMMA": f"{__name__}:LR", "K_STEPS": f"{__name__}:LOCAL_STEPS"})
