"""Issue 34's CNN and RNN training steps, for bench/run.py (W9 and W10).

W9  ResNet-ish CNN train step: 3x32x32 input, batch 32; a 3x3 stem (3 -> 32), two residual
    blocks at 32 wide (32x32), a downsampling block to 64 wide (stride 2, 1x1 projection
    shortcut) and one block at 64 wide (16x16), each conv followed by BatchNorm (training mode),
    ReLU after each block; global average pool, linear 64 -> 10, cross-entropy, SGD with
    momentum 0.9. About 14 GFLOP a step.
W10 2-layer LSTM language-model step (PyTorch's word_language_model, without dropout): vocab 10k,
    200 wide, sequence 35, batch 20; embedding, nn.LSTM, linear decoder, cross-entropy,
    clip_grad_norm_(0.25), SGD (lr 20); the hidden state is carried from step to step, detached.

Each is written once as users write it (nn modules, F.cross_entropy, optim.SGD) and run with
ndgrad and with PyTorch from the same float32 weights; W9 also as a hand-written NumPy floor
(im2col + one GEMM per convolution, forward and backward, channels-first CNHW layout so that
BatchNorm reduces contiguous rows). A step returns the loss of the library's first step, so the
harness checks that every library starts from the same loss (later steps differ by float32
rounding, and the libraries run different numbers of untimed steps).
"""
import importlib
import os
import sys
import time

if __name__ == "__main__":  # (before NumPy loads OpenBLAS: see main)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "src"))

import numpy as np

F32 = np.float32


def _lib(name):
    return importlib.import_module("ndgrad" if name == "ndgrad" else "torch")


def _softmax_ce(logits, y):
    """Mean cross-entropy of (N, C) logits and its gradient with respect to them."""
    m = logits.max(1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(1, keepdims=True)
    n = logits.shape[0]
    loss = (np.log(s)[:, 0] + m[:, 0] - logits[np.arange(n), y]).mean()
    e /= s
    e[np.arange(n), y] -= 1
    e /= F32(n)
    return loss, e


def _first(step):
    """The step, returning the loss of its first call every time (see the module's doc)."""
    box = []

    def run():
        loss = step()
        if not box:
            box.append(float(loss))
        return np.float32(box[0])
    return run


# ---------------------------------------------------------------- W9 ResNet-ish CNN step

# (in, out, stride) of the residual blocks after the 3 -> 32 stem
W9_BLOCKS = ((32, 32, 1), (32, 32, 1), (32, 64, 2), (64, 64, 1))
W9_BATCH, W9_LR, W9_MOMENTUM, W9_EPS, W9_BN_MOMENTUM = 32, 0.05, 0.9, 1e-5, 0.1


def _w9_params():
    """name -> float32 array, in the models' named_parameters() order."""
    r = np.random.default_rng(9)
    ps = {}

    def conv(name, o, i, k):
        ps[name + ".weight"] = (r.standard_normal((o, i, k, k)) *
                                np.sqrt(2 / (i * k * k))).astype(F32)

    def bn(name, c):
        ps[name + ".weight"] = (1 + 0.1 * r.standard_normal(c)).astype(F32)
        ps[name + ".bias"] = (0.1 * r.standard_normal(c)).astype(F32)

    conv("stem.0", 32, 3, 3)
    bn("stem.1", 32)
    for b, (i, o, s) in enumerate(W9_BLOCKS):
        conv(f"blocks.{b}.conv1", o, i, 3)
        bn(f"blocks.{b}.bn1", o)
        conv(f"blocks.{b}.conv2", o, o, 3)
        bn(f"blocks.{b}.bn2", o)
        if s != 1 or i != o:
            conv(f"blocks.{b}.short.0", o, i, 1)
            bn(f"blocks.{b}.short.1", o)
    ps["fc.weight"] = (r.standard_normal((10, 64)) / 8).astype(F32)
    ps["fc.bias"] = np.zeros(10, F32)
    x = r.standard_normal((W9_BATCH, 3, 32, 32)).astype(F32)
    y = r.integers(0, 10, W9_BATCH)
    return ps, x, y


def _w9_model(T):
    nn = T.nn

    class Block(nn.Module):
        def __init__(self, i, o, s):
            super().__init__()
            self.conv1 = nn.Conv2d(i, o, 3, s, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(o)
            self.conv2 = nn.Conv2d(o, o, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(o)
            self.short = None if s == 1 and i == o else nn.Sequential(
                nn.Conv2d(i, o, 1, s, bias=False), nn.BatchNorm2d(o))

        def forward(self, x):
            h = T.relu(self.bn1(self.conv1(x)))
            h = self.bn2(self.conv2(h))
            return T.relu(h + (x if self.short is None else self.short(x)))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32),
                                      nn.ReLU())
            self.blocks = nn.Sequential(*[Block(*b) for b in W9_BLOCKS])
            self.fc = nn.Linear(64, 10)

        def forward(self, x):
            h = self.blocks(self.stem(x))
            return self.fc(h.mean((2, 3)))

    return Net()


def w9(lib, quick):
    ps0, x0, y0 = _w9_params()
    if lib == "numpy":
        return _first(_w9_floor(ps0, x0, y0)), 1
    T = _lib(lib)
    model = _w9_model(T)
    with T.no_grad():
        for name, p in model.named_parameters():
            p.copy_(T.tensor(ps0[name]))
    opt = T.optim.SGD(model.parameters(), lr=W9_LR, momentum=W9_MOMENTUM)
    x, y = T.tensor(x0), T.tensor(y0)
    F = T.nn.functional

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return _first(step), 1


class _Conv:
    """A bias-free convolution of the floor on CNHW arrays: im2col into a buffer made once (the
    padded input's border stays zero), one GEMM forward, two backward (weight, columns), and
    col2im as one slice-add per kernel tap. With stride 1 each tap is one contiguous run of the
    flattened padded planes (the outputs computed over the padded width, the extra columns
    dropped: ndgrad's Note [Flat windows]), else one run per output row."""

    def __init__(self, w, N, H, stride):
        self.w = w
        O, C, k, _ = w.shape
        self.k, self.s, self.p = k, stride, k // 2
        self.Ho = (H + 2 * self.p - k) // stride + 1
        Hp = H + 2 * self.p
        self.flat = stride == 1
        if self.flat:
            self.L = self.Ho * Hp                       # outputs over the padded width
            self.pad = np.zeros((C, N, Hp * Hp + k - 1), F32)
            self.inner = self.pad[:, :, :Hp * Hp].reshape(C, N, Hp, Hp)
            self.cols = np.empty((C, k, k, N, self.L), F32)
            self.taps = [(i, j, (slice(None), slice(None), slice(i * Hp + j, i * Hp + j + self.L)))
                         for i in range(k) for j in range(k)]
            self.gy = np.zeros((O, N, self.Ho, Hp), F32)  # the extra columns stay zero
        else:
            self.pad = self.inner = np.zeros((C, N, Hp, Hp), F32)
            self.cols = np.empty((C, k, k, N, self.Ho, self.Ho), F32)
            self.taps = [(i, j, (slice(None), slice(None),
                                 slice(i, i + stride * (self.Ho - 1) + 1, stride),
                                 slice(j, j + stride * (self.Ho - 1) + 1, stride)))
                         for i in range(k) for j in range(k)]

    def fwd(self, x):
        p, O, N = self.p, self.w.shape[0], x.shape[1]
        if p:
            self.inner[:, :, p:-p, p:-p] = x
        src = self.pad if p or self.flat else x
        for i, j, sl in self.taps:
            self.cols[:, i, j] = src[sl]
        y = self.w.reshape(O, -1) @ self.cols.reshape(self.w[0].size, -1)
        if self.flat:
            return y.reshape(O, N, self.Ho, -1)[..., :self.Ho]
        return y.reshape(O, N, self.Ho, self.Ho)

    def bwd(self, g, need_input=True):
        """-> (input gradient or None, weight gradient) of the output gradient g (O, N, Ho, Wo)."""
        O = self.w.shape[0]
        if self.flat:
            self.gy[..., :self.Ho] = g
            g = self.gy
        g2 = g.reshape(O, -1)
        gw = (g2 @ self.cols.reshape(self.w[0].size, -1).T).reshape(self.w.shape)
        if not need_input:
            return None, gw
        if not hasattr(self, "gc"):                # buffers made once: no page faults
            self.gc, self.gp = np.empty_like(self.cols), np.empty_like(self.pad)
        gc = np.matmul(self.w.reshape(O, -1).T, g2, out=self.gc.reshape(self.w[0].size, -1))
        gc = gc.reshape(self.cols.shape)
        p = self.p
        gp = self.gp
        gp.fill(0)
        for i, j, sl in self.taps:
            gp[sl] += gc[:, i, j]
        if self.flat:
            gp = gp[:, :, :self.inner[0, 0].size].reshape(self.inner.shape)
        return (gp[:, :, p:-p, p:-p] if p else gp), gw


class _BN:
    """Training-mode batch norm of the floor over each channel's contiguous row (CNHW)."""

    def __init__(self, gamma, beta):
        self.gamma, self.beta = gamma, beta
        self.mean = np.zeros_like(gamma)
        self.var = np.ones_like(gamma)

    def fwd(self, x):
        C = x.shape[0]
        x2 = x.reshape(C, -1)
        M = x2.shape[1]
        mean = x2.mean(1, keepdims=True)
        xc = x2 - mean
        var = np.einsum("ij,ij->i", xc, xc)[:, None] / F32(M)
        self.invstd = 1 / np.sqrt(var + F32(W9_EPS))
        xc *= self.invstd
        self.xhat = xc
        m = F32(W9_BN_MOMENTUM)
        self.mean += m * (mean[:, 0] - self.mean)
        self.var += m * (var[:, 0] * F32(M / (M - 1)) - self.var)
        y = xc * self.gamma[:, None]
        y += self.beta[:, None]
        return y.reshape(x.shape)

    def bwd(self, g):
        C = g.shape[0]
        g2 = g.reshape(C, -1)
        M = g2.shape[1]
        gb = g2.sum(1)
        gg = np.einsum("ij,ij->i", g2, self.xhat)
        gx = self.xhat * (gg / F32(M))[:, None]
        gx += (gb / F32(M))[:, None]
        np.subtract(g2, gx, out=gx)
        gx *= (self.gamma * self.invstd[:, 0])[:, None]
        return gx.reshape(g.shape), gg, gb


def _w9_floor(ps0, x0, y0):
    """The W9 step in NumPy with a hand-written backward, the floor of a NumPy engine."""
    ps = {k: v.copy() for k, v in ps0.items()}
    bufs = {k: None for k in ps}
    N = x0.shape[0]
    layers = {}
    H = 32
    layers["stem.0"] = _Conv(ps["stem.0.weight"], N, H, 1)
    layers["stem.1"] = _BN(ps["stem.1.weight"], ps["stem.1.bias"])
    for b, (i, o, s) in enumerate(W9_BLOCKS):
        pre = f"blocks.{b}."
        layers[pre + "conv1"] = _Conv(ps[pre + "conv1.weight"], N, H, s)
        Ho = layers[pre + "conv1"].Ho
        layers[pre + "conv2"] = _Conv(ps[pre + "conv2.weight"], N, Ho, 1)
        layers[pre + "bn1"] = _BN(ps[pre + "bn1.weight"], ps[pre + "bn1.bias"])
        layers[pre + "bn2"] = _BN(ps[pre + "bn2.weight"], ps[pre + "bn2.bias"])
        if s != 1 or i != o:
            layers[pre + "short.0"] = _Conv(ps[pre + "short.0.weight"], N, H, s)
            layers[pre + "short.1"] = _BN(ps[pre + "short.1.weight"], ps[pre + "short.1.bias"])
        H = Ho
    L = layers

    def step():
        grads = {}
        x = np.ascontiguousarray(x0.transpose(1, 0, 2, 3))               # CNHW
        h = np.maximum(L["stem.1"].fwd(L["stem.0"].fwd(x)), 0)
        saved = [h]
        for b, (i, o, s) in enumerate(W9_BLOCKS):
            pre = f"blocks.{b}."
            a = np.maximum(L[pre + "bn1"].fwd(L[pre + "conv1"].fwd(h)), 0)
            z = L[pre + "bn2"].fwd(L[pre + "conv2"].fwd(a))
            z += h if pre + "short.0" not in L else \
                L[pre + "short.1"].fwd(L[pre + "short.0"].fwd(h))
            h = np.maximum(z, 0, out=z)
            saved += [a, h]
        C = h.shape[0]
        pooled = h.reshape(C, N, -1).mean(2).T                             # (N, C)
        logits = pooled @ ps["fc.weight"].T + ps["fc.bias"]
        loss, g = _softmax_ce(logits, y0)
        grads["fc.weight"], grads["fc.bias"] = g.T @ pooled, g.sum(0)
        gh = np.broadcast_to((g @ ps["fc.weight"]).T[:, :, None, None] / F32(h[0, 0].size),
                             h.shape)
        for b in range(len(W9_BLOCKS) - 1, -1, -1):
            pre = f"blocks.{b}."
            h_out, a = saved.pop(), saved.pop()
            gz = np.where(h_out > 0, gh, F32(0))
            g2, grads[pre + "bn2.weight"], grads[pre + "bn2.bias"] = L[pre + "bn2"].bwd(gz)
            ga, grads[pre + "conv2.weight"] = L[pre + "conv2"].bwd(g2)
            ga *= a > 0
            g1, grads[pre + "bn1.weight"], grads[pre + "bn1.bias"] = L[pre + "bn1"].bwd(ga)
            gh, grads[pre + "conv1.weight"] = L[pre + "conv1"].bwd(g1)
            if pre + "short.0" in L:
                gs, grads[pre + "short.1.weight"], grads[pre + "short.1.bias"] = \
                    L[pre + "short.1"].bwd(gz)
                gs, grads[pre + "short.0.weight"] = L[pre + "short.0"].bwd(gs)
                gh += gs
            else:
                gh += gz
        h0 = saved.pop()
        gh *= h0 > 0
        g0, grads["stem.1.weight"], grads["stem.1.bias"] = L["stem.1"].bwd(gh)
        _, grads["stem.0.weight"] = L["stem.0"].bwd(g0, need_input=False)
        mom, lr = F32(W9_MOMENTUM), F32(W9_LR)
        for k, p in ps.items():           # torch.optim.SGD: buf = momentum * buf + grad
            buf = bufs[k]
            if buf is None:
                bufs[k] = buf = grads[k].astype(F32, copy=True)
            else:
                buf *= mom
                buf += grads[k]
            p -= lr * buf
        return np.float32(loss)
    return step


# ---------------------------------------------------------------- W10 LSTM language model step

W10_VOCAB, W10_WIDTH, W10_LAYERS, W10_SEQ, W10_BATCH = 10000, 200, 2, 35, 20
W10_LR, W10_CLIP = 20.0, 0.25


def _w10_params():
    r = np.random.default_rng(10)
    V, H = W10_VOCAB, W10_WIDTH
    ps = {"encoder.weight": r.uniform(-0.1, 0.1, (V, H)).astype(F32)}
    k = 1 / np.sqrt(H)
    for layer in range(W10_LAYERS):
        for name, shape in (("weight_ih", (4 * H, H)), ("weight_hh", (4 * H, H)),
                            ("bias_ih", (4 * H,)), ("bias_hh", (4 * H,))):
            ps[f"rnn.{name}_l{layer}"] = r.uniform(-k, k, shape).astype(F32)
    ps["decoder.weight"] = r.uniform(-0.1, 0.1, (V, H)).astype(F32)
    ps["decoder.bias"] = np.zeros(V, F32)
    data = r.integers(0, V, (W10_SEQ + 1, W10_BATCH))
    return ps, data[:-1], data[1:]


def _w10_model(T):
    nn = T.nn

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(W10_VOCAB, W10_WIDTH)
            self.rnn = nn.LSTM(W10_WIDTH, W10_WIDTH, W10_LAYERS)
            self.decoder = nn.Linear(W10_WIDTH, W10_VOCAB)

        def forward(self, input, hidden):
            output, hidden = self.rnn(self.encoder(input), hidden)
            return self.decoder(output).view(-1, W10_VOCAB), hidden

    return RNNModel()


def w10(lib, quick):
    if lib == "numpy":
        return _first(_w10_floor(*_w10_params())), 1
    T = _lib(lib)
    ps0, x0, y0 = _w10_params()
    model = _w10_model(T)
    with T.no_grad():
        for name, p in model.named_parameters():
            p.copy_(T.tensor(ps0[name]))
    opt = T.optim.SGD(model.parameters(), lr=W10_LR)
    x, y = T.tensor(x0), T.tensor(y0.reshape(-1))
    zeros = T.zeros(W10_LAYERS, W10_BATCH, W10_WIDTH)
    hidden = [(zeros, zeros)]
    F = T.nn.functional

    def step():
        h = tuple(t.detach() for t in hidden[0])
        opt.zero_grad()
        out, hidden[0] = model(x, h)
        loss = F.cross_entropy(out, y)
        loss.backward()
        T.nn.utils.clip_grad_norm_(model.parameters(), W10_CLIP)
        opt.step()
        return loss.item()
    return _first(step), 1


def _sigmoid(x, out):
    np.negative(x, out=out)
    np.exp(out, out=out)
    out += F32(1)
    return np.reciprocal(out, out=out)


def _w10_floor(ps0, x0, y0):
    """The W10 step in NumPy with a hand-written backward through time."""
    ps = {k: v.copy() for k, v in ps0.items()}
    S, N, H, V = W10_SEQ, W10_BATCH, W10_WIDTH, W10_VOCAB
    state = [np.zeros((W10_LAYERS, N, H), F32), np.zeros((W10_LAYERS, N, H), F32)]
    idx = x0.reshape(-1)

    def step():
        grads = {}
        inp = ps["encoder.weight"][idx]                                     # (S*N, H)
        tape = []
        for layer in range(W10_LAYERS):
            w_ih, w_hh = ps[f"rnn.weight_ih_l{layer}"], ps[f"rnn.weight_hh_l{layer}"]
            gi = inp @ w_ih.T
            gi += ps[f"rnn.bias_ih_l{layer}"] + ps[f"rnn.bias_hh_l{layer}"]
            gates = gi.reshape(S, N, 4 * H)          # becomes the activations i, f, g, o
            hs = np.empty((S + 1, N, H), F32)        # h_{t-1} at t, the last one at S
            cs = np.empty((S + 1, N, H), F32)
            tc = np.empty((S, N, H), F32)
            hs[0], cs[0] = state[0][layer], state[1][layer]
            for t in range(S):
                a = gates[t]
                a += hs[t] @ w_hh.T
                _sigmoid(a[:, :2 * H], a[:, :2 * H])
                np.tanh(a[:, 2 * H:3 * H], out=a[:, 2 * H:3 * H])
                _sigmoid(a[:, 3 * H:], a[:, 3 * H:])
                c = np.multiply(a[:, H:2 * H], cs[t], out=cs[t + 1])
                c += a[:, :H] * a[:, 2 * H:3 * H]
                np.tanh(c, out=tc[t])
                np.multiply(a[:, 3 * H:], tc[t], out=hs[t + 1])
            state[0][layer], state[1][layer] = hs[S], cs[S]
            tape.append((inp, gates, hs, cs, tc))
            inp = hs[1:].reshape(S * N, H)
        logits = inp @ ps["decoder.weight"].T
        logits += ps["decoder.bias"]
        loss, g = _softmax_ce(logits, y0.reshape(-1))
        grads["decoder.weight"], grads["decoder.bias"] = g.T @ inp, g.sum(0)
        gout = g @ ps["decoder.weight"]                                      # (S*N, H)
        for layer in range(W10_LAYERS - 1, -1, -1):
            inp, gates, hs, cs, tc = tape.pop()
            w_hh = ps[f"rnn.weight_hh_l{layer}"]
            gout = gout.reshape(S, N, H)
            dG = np.empty((S, N, 4 * H), F32)
            dh = np.zeros((N, H), F32)
            dc = np.zeros((N, H), F32)
            for t in range(S - 1, -1, -1):
                a, d = gates[t], dG[t]
                i, f, gg, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
                dh += gout[t]
                np.multiply(dh, tc[t], out=d[:, 3 * H:])
                d[:, 3 * H:] *= o * (1 - o)
                dh *= o
                dh *= 1 - tc[t] * tc[t]
                dc += dh
                np.multiply(dc, gg, out=d[:, :H])
                d[:, :H] *= i * (1 - i)
                np.multiply(dc, i, out=d[:, 2 * H:3 * H])
                d[:, 2 * H:3 * H] *= 1 - gg * gg
                np.multiply(dc, cs[t], out=d[:, H:2 * H])
                d[:, H:2 * H] *= f * (1 - f)
                dc *= f
                dh = d @ w_hh
            dG2 = dG.reshape(S * N, 4 * H)
            grads[f"rnn.weight_hh_l{layer}"] = dG2.T @ hs[:S].reshape(S * N, H)
            grads[f"rnn.weight_ih_l{layer}"] = dG2.T @ inp
            grads[f"rnn.bias_ih_l{layer}"] = grads[f"rnn.bias_hh_l{layer}"] = dG2.sum(0)
            gout = dG2 @ ps[f"rnn.weight_ih_l{layer}"]
        ge = np.zeros_like(ps["encoder.weight"])
        np.add.at(ge, idx, gout)
        grads["encoder.weight"] = ge
        total = np.sqrt(sum(np.dot(v.reshape(-1), v.reshape(-1)) for v in grads.values()))
        coef = F32(W10_CLIP) / (total + F32(1e-6))
        lr = F32(W10_LR) * min(coef, F32(1))
        for k, p in ps.items():
            p -= lr * grads[k]
        return np.float32(loss)
    return step


WORKLOADS = [
    ("W9", "ResNet-ish CNN train step, 3x32x32 batch 32, BN, SGD momentum", "ms/step", 1e3, w9,
     (10, 3)),
    ("W10", "2-layer LSTM LM step, vocab 10k, 200 wide, seq 35 batch 20, clip, SGD", "ms/step",
     1e3, w10, (10, 3)),
]


def main(argv=None):
    """`python bench/workloads_cnn_rnn.py [rounds]`: W9 and W10 in CPU time, every library on one
    thread (NumPy's OpenBLAS, PyTorch's set_num_threads(1)), rounds interleaved; minima and
    medians. On a shared machine the CPU time a step takes on one thread varies far less than
    its wall time (bench/run.py's measure), so this is the figure to compare changes by."""
    import ndgrad  # noqa: F401
    import torch
    torch.set_num_threads(1)
    rounds = int((argv or sys.argv[1:] or [10])[0])
    for name, desc, _, _, make, _ in WORKLOADS:
        steps = {lib: make(lib, False)[0] for lib in ("ndgrad", "torch", "numpy")}
        times = {lib: [] for lib in steps}
        first = {lib: float(s()) for lib, s in steps.items()}
        for _ in range(rounds):
            for lib, s in steps.items():
                t0 = time.process_time()
                s()
                times[lib].append(time.process_time() - t0)
        st = {lib: (min(t) * 1e3, sorted(t)[len(t) // 2] * 1e3) for lib, t in times.items()}
        ok = all(abs(v - first["torch"]) <= 2e-3 * abs(first["torch"]) for v in first.values())
        print(f"{name} {desc}: CPU ms min/median " +
              ", ".join(f"{lib} {a:.0f}/{b:.0f}" for lib, (a, b) in st.items()) +
              f"; ndgrad/torch {st['ndgrad'][0] / st['torch'][0]:.2f}/"
              f"{st['ndgrad'][1] / st['torch'][1]:.2f}, ndgrad/numpy "
              f"{st['ndgrad'][0] / st['numpy'][0]:.2f}/{st['ndgrad'][1] / st['numpy'][1]:.2f}; "
              f"first losses {'equal' if ok else 'DIFFER: ' + str(first)}", flush=True)


if __name__ == "__main__":
    main()
