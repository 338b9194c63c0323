"""The derived (eta, eta_l) choice minimising FedAda2's Theorem 20 bound (fedbound/control/fedada2/stepsize.py)."""
import numpy as np
import pytest

from fedbound.control.fedada2 import best_step_sizes, gp_step_sizes
from fedbound.errors import ValidationError
from fedbound.theory import get

C = dict(f_gap=1.0, L=1.85, d=4, K=3, z=1, G=2.67, eps=0.1, eps_s=1e-3,
         tau=1e-2, beta1_tilde=0.9, v0=0.0, vtilde0=1e-4, T=1024)
BOX = dict(eta_range=(1e-6, 1e6), eta_l_range=(1e-14, 10.0))


def test_minimiser_beats_a_dense_brute_force_grid():
    """At the notes' constants the bound keeps decreasing along eta -> inf, eta_l -> 0 (eta eta_l ~ 1e-6):
    the minimiser sits on the eta edge of any box (reported by at_boundary)."""
    choice = best_step_sizes(C, "printed", **BOX)
    assert choice.at_boundary and choice.eta == pytest.approx(BOX["eta_range"][1], rel=1e-6)
    assert choice.bound <= choice.grid_bound
    assert choice.bound == pytest.approx(get("fedada2.thm20").bound("printed", **C, eta=choice.eta,
                                                                    eta_l=choice.eta_l), rel=1e-12)
    eta = np.geomspace(*BOX["eta_range"], 301)[:, None]
    eta_l = np.geomspace(*BOX["eta_l_range"], 301)[None, :]
    dense = get("fedada2.thm20").bound("printed", **C, eta=eta, eta_l=eta_l)
    assert choice.bound <= np.nanmin(dense) * (1 + 1e-9)
    assert "derived" in choice.label


def test_small_box_reports_the_boundary_and_missing_constants_are_named():
    choice = best_step_sizes(C, "printed", eta_range=(1e-2, 1.0), eta_l_range=(1e-3, 1.0), points=21)
    assert choice.at_boundary
    with pytest.raises(ValidationError, match="T"):
        best_step_sizes({k: v for k, v in C.items() if k != "T"})


@pytest.mark.parametrize("variant", ["printed", "rederived", "norm=scalar,denom=v0,smooth=L,phi1=proved"])
def test_gp_route_agrees_with_the_direct_minimisation(variant):
    """The DGP of notes 5.2 (two branches of Phi2, log surrogate) lands on the same minimal bound as
    grid + Powell on the true bound, to 1e-4; its surrogate objective bounds the true bound above."""
    box = dict(eta_range=(1e-2, 1e2), eta_l_range=(1e-6, 1.0))
    c = dict(C, z=2)
    gp, direct = gp_step_sizes(c, variant, **box), best_step_sizes(c, variant, **box)
    assert gp.bound <= gp.grid_bound * (1 + 1e-9)
    assert gp.bound == pytest.approx(direct.bound, rel=1e-4)
    assert "GP" in gp.label
