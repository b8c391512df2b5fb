"""The NumPy floor of the GPT workloads (bench/workloads_transformer.py): the same computation
as the nanoGPT model there, written by hand in float32 NumPy, no autograd.

train_step: token + position embedding, pre-LN blocks (x += attn(ln_1(x)); x += mlp(ln_2(x))),
LayerNorm eps 1e-5, causal self-attention (4-d matmuls, an additive -inf mask, softmax over the
keys), MLP c_fc -> exact GELU -> c_proj, ln_f, the head tied to the token embedding (one
parameter: its gradient is the embedding's plus the head's), mean cross-entropy; the backward
written out; clip_grad_norm_(1.0) and AdamW as PyTorch's (decay 0.1 on the matrices only).
generate: greedy decoding, the whole context's forward for every token, the head on the last
position only (as the model's forward without targets).

NumPy has no erf. GELU's is Abramowitz-Stegun 7.1.26 (absolute error 1.5e-7), the formula of
PyTorch's own vectorised float32 erf, which its CPU GELU kernel uses: the accuracy PyTorch pays
for, so a fair floor (a float64 erf would make the floor slower than need be).
"""
import math

import numpy as np

F32 = np.float32
EPS = F32(1e-5)
# A-S 7.1.26 for erf(a / sqrt 2): p / sqrt 2, and a5 .. a1 times -1/2 (Horner's order)
_P = F32(0.3275911 / math.sqrt(2))
_A = [F32(-0.5 * c) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)]


def state_names(n_layer, n_embd, vocab, block):
    """(name, shape) in the torch model's state_dict order, its .attn.bias buffers left out."""
    C = n_embd
    out = [("transformer.wte.weight", (vocab, C)), ("transformer.wpe.weight", (block, C))]
    for i in range(n_layer):
        out += [(f"transformer.h.{i}.{k}", s) for k, s in (
            ("ln_1.weight", (C,)), ("ln_1.bias", (C,)),
            ("attn.c_attn.weight", (3 * C, C)), ("attn.c_attn.bias", (3 * C,)),
            ("attn.c_proj.weight", (C, C)), ("attn.c_proj.bias", (C,)),
            ("ln_2.weight", (C,)), ("ln_2.bias", (C,)),
            ("mlp.c_fc.weight", (4 * C, C)), ("mlp.c_fc.bias", (4 * C,)),
            ("mlp.c_proj.weight", (C, 4 * C)), ("mlp.c_proj.bias", (C,)))]
    return out + [("transformer.ln_f.weight", (C,)), ("transformer.ln_f.bias", (C,)),
                  ("lm_head.weight", (vocab, C))]


def _layernorm(x, w, b):
    """(N, C) -> y, (xhat, rstd) for the backward."""
    xc = x - x.mean(1, keepdims=True)
    rstd = 1 / np.sqrt((xc * xc).mean(1, keepdims=True) + EPS)
    xc *= rstd
    return xc * w + b, (xc, rstd)


def _layernorm_bwd(g, w, saved):
    """dx, dw, db of _layernorm."""
    xhat, rstd = saved
    dw, db = np.einsum("ij,ij->j", g, xhat), g.sum(0)
    gx = g * w
    dx = xhat * np.einsum("ij,ij->i", gx, xhat)[:, None] / F32(g.shape[1])
    dx += gx.mean(1, keepdims=True)
    np.subtract(gx, dx, out=dx)
    dx *= rstd
    return dx, dw, db


def _gelu(a, grad):
    """GELU(a) = a Phi(a), and where grad its derivative Phi(a) + a pdf(a) for the backward."""
    t = np.abs(a)
    t *= _P
    t += F32(1)
    np.reciprocal(t, out=t)                   # 1 / (1 + p |a| / sqrt 2)
    poly = _A[0] * t
    for c in _A[1:]:
        poly += c
        poly *= t
    e = np.square(a)
    e *= F32(-0.5)
    np.exp(e, out=e)                          # exp(-a^2 / 2)
    poly *= e
    poly += F32(0.5)                          # erf(|a| / sqrt 2) / 2
    phi = np.copysign(poly, a, out=poly)      # (np.where: 6x slower, a branch per element)
    phi += F32(0.5)
    out = a * phi
    if not grad:
        return out, None
    e *= a
    e *= F32(1 / math.sqrt(2 * math.pi))
    e += phi
    return out, e


class _Model:
    def __init__(self, ws, n_head):
        self.ps = {k: v.copy() for k, v in ws.items() if k != "lm_head.weight"}
        self.n_layer = sum(k.endswith("ln_1.weight") for k in ws)
        self.n_head = n_head
        block = ws["transformer.wpe.weight"].shape[0]
        self.mask = np.triu(np.full((block, block), -np.inf, F32), 1)

    def forward(self, idx, train=True):
        """Logits of idx (B, T) and the tape of the backward; not train: the last position's
        logits only, no tape."""
        ps, H = self.ps, self.n_head
        B, T = idx.shape
        C = ps["transformer.wpe.weight"].shape[1]
        D = C // H
        x = (ps["transformer.wte.weight"][idx] + ps["transformer.wpe.weight"][:T]).reshape(B * T, C)
        mask = self.mask[:T, :T]
        tape = []
        for i in range(self.n_layer):
            p = f"transformer.h.{i}."
            h1, ln1 = _layernorm(x, ps[p + "ln_1.weight"], ps[p + "ln_1.bias"])
            qkv = h1 @ ps[p + "attn.c_attn.weight"].T
            qkv += ps[p + "attn.c_attn.bias"]
            q, k, v = qkv.reshape(B, T, 3, H, D).transpose(2, 0, 3, 1, 4)
            att = q @ k.transpose(0, 1, 3, 2)
            att *= F32(1 / math.sqrt(D))
            att += mask
            att -= att.max(-1, keepdims=True)
            np.exp(att, out=att)
            att /= att.sum(-1, keepdims=True)
            y = np.empty((B, T, H, D), F32)
            np.matmul(att, v, out=y.transpose(0, 2, 1, 3))
            y = y.reshape(B * T, C)
            x += y @ ps[p + "attn.c_proj.weight"].T
            x += ps[p + "attn.c_proj.bias"]
            h2, ln2 = _layernorm(x, ps[p + "ln_2.weight"], ps[p + "ln_2.bias"])
            a = h2 @ ps[p + "mlp.c_fc.weight"].T
            a += ps[p + "mlp.c_fc.bias"]
            g, dgelu = _gelu(a, train)
            x += g @ ps[p + "mlp.c_proj.weight"].T
            x += ps[p + "mlp.c_proj.bias"]
            if train:
                tape.append((h1, ln1, q, k, v, att, y, h2, ln2, g, dgelu))
        hf, lnf = _layernorm(x, ps["transformer.ln_f.weight"], ps["transformer.ln_f.bias"])
        if not train:   # (as the model: ln_f over every position, the head on the last)
            hf = hf.reshape(B, T, C)[:, -1]
        return hf @ ps["transformer.wte.weight"].T, (idx, tape, hf, lnf)

    def backward(self, dlogits, saved):
        """Gradients by parameter name from the logits' gradient (B*T, V)."""
        ps, H, gr = self.ps, self.n_head, {}
        idx, tape, hf, lnf = saved
        B, T = idx.shape
        C = hf.shape[1]
        D = C // H
        wte = ps["transformer.wte.weight"]
        gr["transformer.wte.weight"] = dlogits.T @ hf
        dx, gr["transformer.ln_f.weight"], gr["transformer.ln_f.bias"] = _layernorm_bwd(
            dlogits @ wte, ps["transformer.ln_f.weight"], lnf)
        for i in range(self.n_layer - 1, -1, -1):
            p = f"transformer.h.{i}."
            h1, ln1, q, k, v, att, y, h2, ln2, g, dgelu = tape.pop()
            gr[p + "mlp.c_proj.weight"], gr[p + "mlp.c_proj.bias"] = dx.T @ g, dx.sum(0)
            da = dx @ ps[p + "mlp.c_proj.weight"]
            da *= dgelu
            gr[p + "mlp.c_fc.weight"], gr[p + "mlp.c_fc.bias"] = da.T @ h2, da.sum(0)
            dh, gr[p + "ln_2.weight"], gr[p + "ln_2.bias"] = _layernorm_bwd(
                da @ ps[p + "mlp.c_fc.weight"], ps[p + "ln_2.weight"], ln2)
            dx += dh
            gr[p + "attn.c_proj.weight"], gr[p + "attn.c_proj.bias"] = dx.T @ y, dx.sum(0)
            dy = (dx @ ps[p + "attn.c_proj.weight"]).reshape(B, T, H, D).transpose(0, 2, 1, 3)
            dqkv = np.empty((B, T, 3, H, D), F32)
            dq, dk, dv = dqkv.transpose(2, 0, 3, 1, 4)
            np.matmul(att.transpose(0, 1, 3, 2), dy, out=dv)
            ds = dy @ v.transpose(0, 1, 3, 2)
            ds -= np.einsum("bhij,bhij->bhi", ds, att)[..., None]
            ds *= att
            ds *= F32(1 / math.sqrt(D))
            np.matmul(ds, k, out=dq)
            np.matmul(ds.transpose(0, 1, 3, 2), q, out=dk)
            dqkv = dqkv.reshape(B * T, 3 * C)
            gr[p + "attn.c_attn.weight"], gr[p + "attn.c_attn.bias"] = dqkv.T @ h1, dqkv.sum(0)
            dh, gr[p + "ln_1.weight"], gr[p + "ln_1.bias"] = _layernorm_bwd(
                dqkv @ ps[p + "attn.c_attn.weight"], ps[p + "ln_1.weight"], ln1)
            dx += dh
        dx = dx.reshape(B, T, C)
        gr["transformer.wpe.weight"] = np.zeros_like(ps["transformer.wpe.weight"])
        gr["transformer.wpe.weight"][:T] = dx.sum(0)
        onehot = np.zeros((B * T, wte.shape[0]), F32)      # (a GEMM: np.add.at is 5x slower)
        onehot[np.arange(B * T), idx.reshape(-1)] = 1
        gr["transformer.wte.weight"] += onehot.T @ dx.reshape(B * T, C)
        return gr


def _cross_entropy(logits, y):
    """Mean cross-entropy of (N, V) logits and its gradient with respect to them."""
    n = logits.shape[0]
    e = logits - logits.max(1, keepdims=True)
    picked = e[np.arange(n), y]
    np.exp(e, out=e)
    s = e.sum(1, keepdims=True)
    loss = (np.log(s)[:, 0] - picked).mean()
    e /= s
    e[np.arange(n), y] -= F32(1)
    e /= F32(n)
    return loss, e


class Trainer:
    """The training step in its phases (bench/profile_gpt.py times them apart): `forward` (the
    loss, its logits' gradient and the tape), `backward` (the parameters' gradients), `clip`
    (clip_grad_norm_) and `adamw` (torch.optim.AdamW's update)."""

    def __init__(self, ws, n_head, lr=6e-4, betas=(0.9, 0.95), wd=0.1, eps=1e-8, max_norm=1.0):
        self.model = _Model(ws, n_head)
        ps = self.model.ps
        self.ms = {k: np.zeros_like(p) for k, p in ps.items()}
        self.vs = {k: np.zeros_like(p) for k, p in ps.items()}
        self.lr, self.betas, self.wd, self.eps, self.max_norm = lr, betas, wd, eps, max_norm
        self.n = 0

    def forward(self, x, y):
        logits, saved = self.model.forward(x)
        loss, dlogits = _cross_entropy(logits, y.reshape(-1))
        return np.float32(loss), dlogits, saved

    def backward(self, dlogits, saved):
        return self.model.backward(dlogits, saved)

    def clip(self, grads):
        total = np.sqrt(sum(np.dot(g.reshape(-1), g.reshape(-1)) for g in grads.values()))
        coef = F32(self.max_norm) / (total + F32(1e-6))
        if coef < 1:
            for g in grads.values():
                g *= coef

    def adamw(self, grads):
        (b1, b2), lr = self.betas, self.lr
        self.n += 1
        c1, c2 = 1 - b1 ** self.n, 1 - b2 ** self.n
        for k, p in self.model.ps.items():
            g = grads[k]
            if p.ndim >= 2:
                p *= F32(1 - lr * self.wd)
            m, v = self.ms[k], self.vs[k]
            m *= F32(b1)
            m += F32(1 - b1) * g
            v *= F32(b2)
            g *= g
            g *= F32(1 - b2)
            v += g
            d = np.sqrt(v, out=g)
            d /= F32(math.sqrt(c2))
            d += F32(self.eps)
            np.divide(m, d, out=d)
            d *= F32(lr / c1)
            p -= d


def train_step(ws, batches, n_head):
    """(step, first): step() runs one training step on the next batch and returns its loss;
    first is the loss of batches[0] at the initial weights."""
    t = Trainer(ws, n_head)
    at = [0]

    def step():
        x, y = batches[at[0] % len(batches)]
        at[0] += 1
        loss, dlogits, saved = t.forward(x, y)
        grads = t.backward(dlogits, saved)
        t.clip(grads)
        t.adamw(grads)
        return loss

    x0, y0 = batches[0]
    return step, t.forward(x0, y0)[0]


def generate(ws, n_head, prompt, n_tokens):
    """step() returns prompt (1, T0) followed by n_tokens greedy tokens, int64."""
    model = _Model(ws, n_head)
    block = model.mask.shape[0]

    def step():
        idx = prompt
        for _ in range(n_tokens):
            logits = model.forward(idx[:, -block:], train=False)[0]
            idx = np.concatenate([idx, logits.argmax(-1)[:, None]], axis=1)
        return idx
    return step
