"""sdgt.lemma7 (seed 003 (41) [L693-L700]): the unroll-recursion lemma holds at its witness step."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.theory import get

positive = st.floats(1e-6, 1e6, allow_nan=False, allow_infinity=False)
nonnegative = st.one_of(st.just(0.0), positive)


@settings(max_examples=300, deadline=None)
@given(r0=positive, b=nonnegative, e=nonnegative, u=positive, T=st.integers(1, 10 ** 7))
def test_psi_at_witness_is_below_the_bound_and_witness_below_one_over_u(r0, b, e, u, T):
    ev = get("sdgt.lemma7").evaluate(r0=r0, b=b, e=e, u=u, T=T)
    witness = float(ev.extras["witness"])
    psi = float(ev.extras["psi_at_witness"])
    bound = float(ev.bound)
    assert witness > 0 and np.isfinite(psi)
    assert witness <= 1 / u * (1 + 1e-12)
    assert psi <= bound * (1 + 1e-12)


def test_vectorized_over_arrays_matches_the_scalar_evaluations():
    rng = np.random.default_rng(0)
    c = {"r0": rng.uniform(0.1, 10, 50), "b": rng.uniform(0, 10, 50), "e": rng.uniform(0, 10, 50),
         "u": rng.uniform(0.1, 10, 50), "T": rng.integers(1, 1000, 50)}
    lemma7 = get("sdgt.lemma7")
    ev = lemma7.evaluate(**c)
    assert np.all(ev.extras["psi_at_witness"] <= ev.bound * (1 + 1e-12))
    for i in range(50):
        scalar = lemma7.evaluate(**{k: v[i] for k, v in c.items()})
        np.testing.assert_allclose(scalar.bound, ev.bound[i], rtol=1e-14)
        np.testing.assert_allclose(scalar.extras["witness"], ev.extras["witness"][i], rtol=1e-14)
