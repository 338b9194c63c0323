"""Properties of every optimizer transform (hypothesis): named (NamedTuple) states, purity, per-client
masking, chaining with the small-step rule, and FedNova's accumulation vectors against the transforms
themselves."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.algorithms.optim import chain, client, masked, server, tree_map

D = 6
SHAPES = [(2, 2), 2]  # d = 4 + 2

CLIENTS = {
    "sgd": lambda: client.sgd(0.1),
    "sgd_decay": lambda: client.sgd(0.1, decay=0.7),
    "prox": lambda: client.prox(0.1, 0.5),
    "momentum": lambda: client.momentum(0.1, 0.8),
    "nesterov": lambda: client.momentum(0.1, 0.8, nesterov=True),
    "adagrad_delay": lambda: client.adagrad(0.1, 1e-3, v0=0.1, delay=2),
    "adam_delay": lambda: client.adam(0.05, 0.9, 0.99, 1e-6, delay=3),
    "adam_raw": lambda: client.adam(0.05, bias_correction=False),
    "sm3_ii": lambda: client.sm3(0.1, SHAPES, eps=1e-3),
    "sm3_ii_delay": lambda: client.sm3(0.1, SHAPES, delay=2, eps=1e-3),
    "sm3_ii_literal": lambda: client.sm3(0.1, SHAPES, delay=3, eps=1e-3, carry_over=False),
    "sm3_i_delay": lambda: client.sm3(0.1, SHAPES, variant="I", delay=2, eps=1e-3),
    "sm3_adam_delay": lambda: client.sm3_adam(0.05, SHAPES, 0.9, 0.99, 1e-3, delay=2),
    "adagrad_drop": lambda: chain(client.adagrad(0.1, 1e-3), client.drop_small_steps(0.5, lr=0.1)),
}
SERVERS = {
    "sgd": lambda: server.sgd(0.9),
    "momentum": lambda: server.momentum(1.0, 0.9, nesterov=True),
    "adagrad": lambda: server.adagrad(0.1, 1e-3, v0=1e-6, b1=0.5),
    "adam": lambda: server.adam(bias_correction=True, eps_inside_sqrt=True),
    "yogi": lambda: server.yogi(v0=1e-6),
    "amsgrad": lambda: server.amsgrad(),
}


def _data(seed: int, shape, steps: int):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, dtype=torch.float64, generator=gen)
    grads = torch.randn((steps, *shape), dtype=torch.float64, generator=gen)
    return x, grads * torch.exp(torch.randn((steps, *shape[:1], *[1] * (len(shape) - 1)),
                                            dtype=torch.float64, generator=gen))


def _leaves(tree):
    out = []
    tree_map(lambda t: out.append(t), tree)
    return out


def _clone(tree):
    return tree_map(lambda t: t.clone(), tree)


def _same(a, b) -> bool:
    la, lb = _leaves(a), _leaves(b)
    return len(la) == len(lb) and all(torch.equal(x, y) for x, y in zip(la, lb))


@settings(max_examples=60)
@given(name=st.sampled_from(sorted(CLIENTS) + [f"server:{s}" for s in sorted(SERVERS)]),
       rows=st.integers(1, 4), warmup=st.integers(0, 4), seed=st.integers(0, 2 ** 31))
def test_update_is_pure(name, rows, warmup, seed):
    """Same (grads, state, params) in -> bitwise the same (updates, state) out, inputs untouched."""
    is_server = name.startswith("server:")
    t = SERVERS[name[7:]]() if is_server else CLIENTS[name]()
    shape = (D,) if is_server else (rows, D)
    x, grads = _data(seed, shape, warmup + 1)
    state = t.init(x)
    for k in range(warmup):
        u, state = t.update(grads[k], state, x)
        x = x + u
    g, s_copy, x_copy = grads[-1].clone(), _clone(state), x.clone()
    u1, s1 = t.update(grads[-1], state, x)
    u2, s2 = t.update(grads[-1], state, x)
    assert torch.equal(u1, u2) and _same(s1, s2)
    assert torch.equal(grads[-1], g) and torch.equal(x, x_copy) and _same(state, s_copy)
    assert all(leaf.shape[:1] == (rows,) for leaf in _leaves(s1)) or is_server


@pytest.mark.parametrize("name", sorted(CLIENTS) + [f"server:{s}" for s in sorted(SERVERS)])
def test_states_are_named(name):
    """Every state is a NamedTuple whose fields the update keeps (stateless: ()); a chain's state is
    the tuple of its transforms' states."""
    is_server = name.startswith("server:")
    t = SERVERS[name[7:]]() if is_server else CLIENTS[name]()
    x, grads = _data(0, (D,) if is_server else (2, D), 1)
    state = t.init(x)
    _, new = t.update(grads[0], state, x)
    parts = zip(state, new) if name == "adagrad_drop" else [(state, new)]
    for s, n in parts:
        assert s == () == n or (hasattr(s, "_fields") and type(n) is type(s))


@settings(max_examples=40)
@given(name=st.sampled_from(sorted(CLIENTS)), rows=st.integers(1, 4),
       masks=st.lists(st.lists(st.booleans(), min_size=4, max_size=4), min_size=1, max_size=7),
       seed=st.integers(0, 2 ** 31))
def test_masked_rows_frozen_and_rows_independent(name, rows, masks, seed):
    """masked(t, active): inactive rows get zero updates and keep their state bitwise; every client's
    trajectory equals running the transform on that client alone for its active steps only (so
    per-client step counters and delays follow each client's own local step count)."""
    t = CLIENTS[name]()
    field_h = 0.5 + torch.rand((rows, D), dtype=torch.float64,
                               generator=torch.Generator().manual_seed(seed))
    x0, noise = _data(seed + 1, (rows, D), len(masks))
    x, state = x0.clone(), t.init(x0)
    for k, mask in enumerate(masks):
        active = torch.tensor(mask[:rows])
        u, new_state = masked(t, active).update(field_h * x + noise[k], state, x)
        for leaf_new, leaf_old in zip(_leaves(new_state), _leaves(state)):
            assert torch.equal(leaf_new[~active], leaf_old[~active])
        assert torch.all(u[~active] == 0)
        x, state = x + u, new_state
    for i in range(rows):
        xi = x0[i:i + 1].clone()
        si = t.init(xi)
        for k, mask in enumerate(masks):
            if mask[i]:
                ui, si = t.update(field_h[i:i + 1] * xi + noise[k, i:i + 1], si, xi)
                xi = xi + ui
        torch.testing.assert_close(x[i:i + 1], xi, rtol=1e-12, atol=1e-12)


@settings(max_examples=60)
@given(rows=st.integers(1, 5), eps_s=st.floats(1e-3, 10.0), lr=st.floats(1e-3, 1.0),
       seed=st.integers(0, 2 ** 31))
def test_chain_sgd_drop_small_steps(rows, eps_s, lr, seed):
    """chain(sgd(lr), drop_small_steps(eps_s, lr)): a client's step is -lr g unless
    0 < ||g|| < eps_s (FedAda2 Alg. 2 L679 with m/(sqrt v + eps) = g), then it is exactly zero."""
    _, grads = _data(seed, (rows, D), 1)
    g = grads[0] * (eps_s / np.sqrt(D))  # norms spread around eps_s
    if rows > 1:
        g[0] = 0.0  # a zero step is not "small" (0 < ||g|| fails) and stays zero
    t = chain(client.sgd(lr), client.drop_small_steps(eps_s, lr=lr))
    u, state = t.update(g, t.init(g), g)
    assert state == ((), ())
    norms = torch.linalg.vector_norm(g, dim=1)
    for i in range(rows):
        if 0 < norms[i] < eps_s:
            assert torch.all(u[i] == 0)
        else:
            torch.testing.assert_close(u[i], -lr * g[i], rtol=0, atol=0)


LINEAR = {
    "sgd": lambda lr, p: client.sgd(lr),
    "decay": lambda lr, p: client.sgd(lr, decay=p),
    "prox": lambda lr, p: client.prox(lr, p / lr),      # alpha = lr * mu = p
    "prox_mu0": lambda lr, p: client.prox(lr, 0.0),    # alpha = 0: SGD
    "prox_beyond": lambda lr, p: client.prox(lr, (1 + p) / lr),   # alpha > 1, outside FedNova's (0, 1]
    "momentum": lambda lr, p: client.momentum(lr, p * 0.99),
    "nesterov": lambda lr, p: client.momentum(lr, p * 0.99, nesterov=True),
}


@settings(max_examples=80)
@given(kind=st.sampled_from(sorted(LINEAR)), taus=st.lists(st.integers(1, 12), min_size=1, max_size=4),
       lr=st.floats(1e-3, 1.0), p=st.floats(0.05, 1.0), seed=st.integers(0, 2 ** 31))
def test_accumulation_closed_form_equals_transform(kind, taus, lr, p, seed):
    """FedNova eq. (4): client i's round change is -lr * sum_k a_k(tau_i) g_k for the closed-form a of
    its solver (fednova.md 2.3), on a fixed gradient sequence, with heterogeneous tau_i run in one
    masked, vectorized round (client i active for its first tau_i steps)."""
    t = LINEAR[kind](lr, p)
    rows, steps = len(taus), max(taus)
    x0, grads = _data(seed, (rows, D), steps)
    x, state = x0.clone(), t.init(x0)
    for k in range(steps):
        u, state = masked(t, torch.tensor([k < tau for tau in taus])).update(grads[k], state, x)
        x = x + u
    for i, tau in enumerate(taus):
        a = t.accumulation(tau)
        assert a.shape == (tau,)
        expected = x0[i] - lr * (torch.from_numpy(a)[:, None] * grads[:tau, i]).sum(0)
        torch.testing.assert_close(x[i], expected, rtol=1e-12, atol=1e-12)


def _cover_lower_bound(mu, shapes):
    """min over the cover sets containing j of their accumulators, flattened (rows, d): rows and
    columns of a matrix, the singletons of a vector."""
    parts = []
    for s, acc in zip(shapes, mu):
        if len(s) == 2:
            parts.append(torch.minimum(acc[0][:, :, None], acc[1][:, None, :]).reshape(acc[0].shape[0], -1))
        else:
            parts.append(acc[0])
    return torch.cat(parts, dim=1)


@settings(max_examples=60, deadline=None)
@given(variant=st.sampled_from(["I", "II", "adam"]), z=st.integers(1, 4), steps=st.integers(1, 10),
       rows=st.integers(1, 3), seed=st.integers(0, 2 ** 31))
def test_sm3_accumulators_upper_bound_the_delayed_adagrad_accumulator(variant, z, steps, rows, seed):
    """SM3's defining property with delay (FedAda2 Lemma 15's lower bound [L739-L766], notes 2.4):
    after every local step, min_{r: S_r contains j} mu_k(r) >= v_k(j) = sum_{l <= ceil(k/z)}
    g_{(l-1)z+1}(j)^2, the delayed AdaGrad (AGDU) accumulator on the same gradient sequence, for
    SM3-I and SM3-II with the mu carry-over, over row/column covers; and SM3-Adam's accumulators
    upper-bound ADMU's second moment v_k (the same induction with the EMA)."""
    shapes = [(3, 2), 4]
    _, grads = _data(seed, (rows, 10), steps)
    if variant == "adam":
        sm3, dense, acc = (client.sm3_adam(0.1, shapes, 0.9, 0.9, delay=z),
                           client.adam(0.1, 0.9, 0.9, delay=z), 2)
    else:
        sm3, dense, acc = client.sm3(0.1, shapes, variant=variant, delay=z), client.adagrad(0.1, 1e-8, delay=z), 1
    x = torch.zeros(rows, 10, dtype=torch.float64)
    s_sm3, s_dense = sm3.init(x), dense.init(x)
    for k in range(steps):
        _, s_sm3 = sm3.update(grads[k], s_sm3, x)
        _, s_dense = dense.update(grads[k], s_dense, x)
        bound = _cover_lower_bound(s_sm3[acc], [(3, 2), (4,)])
        assert torch.all(bound >= s_dense[-1] * (1 - 1e-12))


def test_literal_sm3_ii_without_carry_over_loses_the_bound():
    """The printed reset mu <- 0 at every step (Alg. 4 line 4 [L723]) with z = 2: after a
    non-refresh step the refresh at k = 3 reads mu = 0, so mu_3 = g_3^2 = 1 < g_1^2 + g_3^2 = 2."""
    g = torch.ones(1, 4, dtype=torch.float64)
    literal = client.sm3(0.1, [4], delay=2, carry_over=False)
    agdu = client.adagrad(0.1, 1e-8, delay=2)
    x = torch.zeros(1, 4, dtype=torch.float64)
    s_lit, s_ada = literal.init(x), agdu.init(x)
    for _ in range(3):
        _, s_lit = literal.update(g, s_lit, x)
        _, s_ada = agdu.update(g, s_ada, x)
    assert torch.all(s_lit[1][0][0] == 1.0) and torch.all(s_ada[1] == 2.0)


@pytest.mark.parametrize("name", sorted(CLIENTS) + [f"server:{s}" for s in sorted(SERVERS)])
def test_transforms_print_the_call_that_built_them(name):
    """A transform prints its factory's call with every argument, defaults included, and the model's
    shapes left out (it printed a NamedTuple of closure addresses); it stays hashable; a masked one
    (an internal per-step copy) names its update instead."""
    import inspect
    from fedbound.display import REPR_LIMIT

    is_server = name.startswith("server:")
    t = SERVERS[name[7:]]() if is_server else CLIENTS[name]()
    text = repr(t)
    factory = t.label.factory
    assert text.startswith(f"{factory.__name__}(") and "0x" not in text and len(text) <= REPR_LIMIT
    if factory.__name__ != "chain":
        shown = [p for p in inspect.signature(factory).parameters if p != "shapes"]
        assert [part.split("=")[0] for part in text[len(factory.__name__) + 1:-1].split(", ")] == shown
        assert "shapes" not in text
    hash(t)
    assert repr(masked(t, torch.ones(2, dtype=torch.bool))).startswith("Transform(masked.")


def test_a_transforms_repr_reads_its_arguments():
    assert repr(server.adam(0.01, bias_correction="flower")) == (
        "adam(lr=0.01, b1=0.9, b2=0.99, eps=0.001, bias_correction='flower', eps_inside_sqrt=False, v0=0)")
    assert repr(chain(client.sgd(0.1), client.drop_small_steps(0.5, lr=0.1))) == (
        "chain(sgd(lr=0.1, decay=None), drop_small_steps(eps_s=0.5, lr=0.1))")
    assert repr(client.sm3(0.1, SHAPES, eps=1e-3)) == "sm3(lr=0.1, variant='II', delay=1, eps=0.001, carry_over=True)"
