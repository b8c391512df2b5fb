"""Training steps as users write them, optimizer included (issue 34): registered in run.py.

W2-user  W2's MLP (784-256-128-10, batch 64) as nn.Sequential of nn.Linear, F.cross_entropy and
         optim.SGD (zero_grad, forward, backward, step): held to W2's target of <= 1.3x the
         NumPy floor, whose update is `w -= lr * g` (two roundings; PyTorch's and ndgrad's SGD
         round once, a fused multiply-add: ops/_fma.py).
MLP      784-512-512-10, batch 128, Adam (lr 1e-3), the same modules: target <= 1.0x PyTorch.
         Its NumPy floor is a hand-written forward, backward and Adam update.

Both start from the same float32 weights in every library; the last loss of each is checked
against the NumPy floor's.
"""
import numpy as np

F32 = np.float32


def _mlp_weights(sizes, seed):
    r = np.random.default_rng(seed)
    ws = []
    for i, o in zip(sizes[:-1], sizes[1:]):
        ws.append((r.standard_normal((o, i)) / np.sqrt(i)).astype(F32))   # nn.Linear's (out, in)
        ws.append(np.zeros(o, dtype=F32))
    return ws


def _data(batch, n_in, seed):
    r = np.random.default_rng(seed + 100)
    return r.standard_normal((batch, n_in)).astype(F32), r.integers(0, 10, batch)


def _np_forward_backward(ws, x, y):
    """Loss and gradients of the ReLU MLP with a softmax cross-entropy (mean), in float32."""
    acts, h = [x], x
    n = len(ws) // 2
    for k in range(n):
        a = h @ ws[2 * k].T + ws[2 * k + 1]
        h = np.maximum(a, 0) if k < n - 1 else a
        acts.append(h)
    logits = acts[-1]
    m = logits.max(1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(1, keepdims=True)
    b = logits.shape[0]
    loss = (np.log(s)[:, 0] + m[:, 0] - logits[np.arange(b), y]).mean()
    g = e / s
    g[np.arange(b), y] -= 1
    g /= b
    grads = [None] * len(ws)
    for k in range(n - 1, -1, -1):
        grads[2 * k] = g.T @ acts[k]
        grads[2 * k + 1] = g.sum(0)
        if k:
            g = (g @ ws[2 * k]) * (acts[k] > 0)
    return np.float32(loss), grads


def _model(T, ws):
    nn = T.nn
    layers = []
    for k in range(len(ws) // 2):
        out_f, in_f = ws[2 * k].shape
        lin = nn.Linear(in_f, out_f)
        with T.no_grad():
            lin.weight.copy_(T.tensor(ws[2 * k]))
            lin.bias.copy_(T.tensor(ws[2 * k + 1]))
        layers += [lin, nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def _user_step(T, ws, x0, y0, make_opt):
    model = _model(T, ws)
    opt = make_opt(T, model.parameters())
    x, y = T.tensor(x0), T.tensor(y0)
    F = T.nn.functional

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def w2_user(lib, quick, lib_module):
    ws = _mlp_weights([784, 256, 128, 10], 1)
    x0, y0 = _data(64, 784, 1)
    lr = 0.01
    if lib == "numpy":
        ps = [w.copy() for w in ws]

        def step():
            loss, grads = _np_forward_backward(ps, x0, y0)
            for p, g in zip(ps, grads):
                p -= F32(lr) * g
            return loss
        return step, 1
    T = lib_module(lib)
    return _user_step(T, ws, x0, y0, lambda T, ps: T.optim.SGD(ps, lr=lr)), 1


def mlp_adam(lib, quick, lib_module):
    ws = _mlp_weights([784, 512, 512, 10], 2)
    x0, y0 = _data(128, 784, 2)
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8
    if lib == "numpy":
        ps = [w.copy() for w in ws]
        ms = [np.zeros_like(w) for w in ws]
        vs = [np.zeros_like(w) for w in ws]
        t = [0]

        def step():
            loss, grads = _np_forward_backward(ps, x0, y0)
            t[0] += 1
            c1, c2 = 1 - b1 ** t[0], 1 - b2 ** t[0]
            for p, g, m, v in zip(ps, grads, ms, vs):
                m *= F32(b1)
                m += F32(1 - b1) * g
                v *= F32(b2)
                v += F32(1 - b2) * (g * g)
                d = np.sqrt(v)
                d /= F32(c2 ** 0.5)
                d += F32(eps)
                p -= F32(lr / c1) * (m / d)
            return loss
        return step, 1
    T = lib_module(lib)
    return _user_step(T, ws, x0, y0, lambda T, ps: T.optim.Adam(ps, lr=lr)), 1


def workloads(lib_module):
    """run.py's WORKLOADS rows (name, description, unit, scale, maker, rounds (full, quick))."""
    def bind(f):
        return lambda lib, quick: f(lib, quick, lib_module)
    return [
        ("W2-user", "W2 as users write it: nn.Sequential, F.cross_entropy, optim.SGD",
         "ms/step", 1e3, bind(w2_user), (100, 10)),
        ("MLP", "MLP 784-512-512-10 train step, batch 128, Adam", "ms/step", 1e3,
         bind(mlp_adam), (30, 5)),
    ]
