"""ndgrad.distributions against torch.distributions: log_prob, entropy, cdf/icdf, KL, reprs,
sample shapes and a REINFORCE-style gradient (values are seeded NumPy arrays; samples from the
two libraries differ, so only their shapes and dtypes are compared)."""
import numpy as np
import pytest

import ndgrad


def P(L, a):
    return L.from_numpy(np.asarray(a))


def chk(torch, name, fn):
    r, g = fn(torch), fn(ndgrad)
    if isinstance(r, str):
        assert r == g, (name, r, g)
        return
    r = np.asarray(r.detach().numpy())
    g = np.asarray(g.detach().numpy())
    assert r.shape == g.shape and r.dtype == g.dtype, (name, r.shape, g.shape, r.dtype, g.dtype)
    np.testing.assert_allclose(g, r, rtol=1e-6, atol=1e-7, err_msg=name)


def test_distributions_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    loc, scale, v = rng.standard_normal(3), rng.uniform(0.5, 2, 3), rng.standard_normal((4, 3))
    N = lambda L: L.distributions.Normal(P(L, loc), P(L, scale))
    chk(torch, "n.logp", lambda L: N(L).log_prob(P(L, v)))
    chk(torch, "n.ent", lambda L: N(L).entropy())
    chk(torch, "n.cdf", lambda L: N(L).cdf(P(L, v)))
    chk(torch, "n.icdf", lambda L: N(L).icdf(L.tensor([0.2, 0.5, 0.9], dtype=L.float64)))
    chk(torch, "n.repr", lambda L: repr(N(L)) + repr(L.distributions.Normal(0., 1.)) + str(N(L).batch_shape) + str(N(L).event_shape))
    chk(torch, "n.sample.shape", lambda L: str(N(L).sample((5, 2)).shape) + str(N(L).rsample().requires_grad))
    chk(torch, "n.kl", lambda L: L.distributions.kl_divergence(N(L), L.distributions.Normal(P(L, v[0]), P(L, scale[::-1].copy()))))
    logits = rng.standard_normal((2, 4)); probs = rng.uniform(0.1, 1, (2, 4))
    for kw in ("logits", "probs"):
        arr = logits if kw == "logits" else probs
        Cat = lambda L: L.distributions.Categorical(**{kw: P(L, arr)})
        chk(torch, kw + "c.logp", lambda L: Cat(L).log_prob(L.tensor([[1, 3], [0, 2], [3, 3]])))
        chk(torch, kw + "c.ent", lambda L: Cat(L).entropy())
        chk(torch, kw + "c.probs", lambda L: Cat(L).probs)
        chk(torch, kw + "c.logits", lambda L: Cat(L).logits)
        chk(torch, kw + "c.repr", lambda L: repr(Cat(L)) + str(Cat(L).batch_shape) + str(Cat(L).sample((3,)).shape) + str(Cat(L).sample().dtype))
        chk(torch, kw + "c.kl", lambda L: L.distributions.kl_divergence(Cat(L), L.distributions.Categorical(logits=P(L, logits[::-1].copy()))))
        chk(torch, kw + "c.mode", lambda L: Cat(L).mode)
        b = rng.uniform(0.1, 0.9, 3) if kw == "probs" else rng.standard_normal(3)
        B = lambda L: L.distributions.Bernoulli(**{kw: P(L, b)})
        chk(torch, kw + "b.logp", lambda L: B(L).log_prob(L.tensor([1.0, 0.0, 1.0], dtype=L.float64)))
        chk(torch, kw + "b.ent", lambda L: B(L).entropy())
        chk(torch, kw + "b.mean", lambda L: B(L).mean)
        chk(torch, kw + "b.var", lambda L: B(L).variance)
        chk(torch, kw + "b.kl", lambda L: L.distributions.kl_divergence(B(L), L.distributions.Bernoulli(probs=L.tensor([0.3, 0.5, 0.7], dtype=L.float64))))
        chk(torch, kw + "b.repr", lambda L: repr(B(L)) + str(B(L).sample((2,)).shape))
    U = lambda L: L.distributions.Uniform(P(L, -scale), P(L, scale))
    chk(torch, "u.logp", lambda L: U(L).log_prob(P(L, np.clip(v * 0.3, -0.5, 0.5))))
    chk(torch, "u.ent", lambda L: U(L).entropy())
    chk(torch, "u.repr", lambda L: repr(U(L)) + str(U(L).rsample((2,)).shape))
    chk(torch, "bern.repr", lambda L: repr(L.distributions.Bernoulli(probs=L.tensor(0.3))) + repr(L.distributions.Categorical(probs=L.tensor([0.2, 0.8]))))
    # REINFORCE-style grad
    def reinforce(L):
        logits = P(L, logits_rl).requires_grad_()
        d = L.distributions.Categorical(logits=logits)
        a = L.tensor([1, 0, 2])
        loss = -(d.log_prob(a) * L.tensor([1.0, -0.5, 2.0], dtype=L.float64)).sum() - 0.01 * d.entropy().sum()
        loss.backward()
        return logits.grad
    logits_rl = rng.standard_normal((3, 4))
    chk(torch, "reinforce", reinforce)


def test_distribution_argument_errors():
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified"):
        ndgrad.distributions.Categorical()
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified"):
        ndgrad.distributions.Bernoulli(probs=ndgrad.ones(1), logits=ndgrad.ones(1))
    with pytest.raises(ValueError, match="must be at least one-dimensional"):
        ndgrad.distributions.Categorical(probs=ndgrad.tensor(1.0))
    # Normal || Uniform is infinite (PyTorch registers it); Normal || Cauchy has no formula
    assert ndgrad.distributions.kl_divergence(ndgrad.distributions.Normal(0.0, 1.0),
                                              ndgrad.distributions.Uniform(0.0, 1.0)).item() \
        == float("inf")
    with pytest.raises(NotImplementedError, match="for p type Normal and q type Cauchy"):
        ndgrad.distributions.kl_divergence(ndgrad.distributions.Normal(0.0, 1.0),
                                           ndgrad.distributions.Cauchy(0.0, 1.0))
