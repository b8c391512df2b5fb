"""Transformer workloads for bench/run.py: a nanoGPT training step and greedy generation.

The model is nanoGPT's (Karpathy's model.py) as users write it, once against the torch API and
run with `ndgrad` and with `torch`: nn.Module, nn.Linear, nn.LayerNorm, nn.GELU, nn.Embedding
with the output layer's weight tied to the token embedding, attention through
F.scaled_dot_product_attention(is_causal=True) (nanoGPT's path when it exists) or through the
explicit masked softmax (its fallback), F.cross_entropy, AdamW with nanoGPT's parameter groups
(weight decay on the matrices only, betas (0.9, 0.95)) and gradient clipping at 1.0 as in its
train.py. Shape: 4 layers, 128 wide, 4 heads, block 64, batch 16, character vocabulary (65),
dropout 0. Both libraries start from the same float32 weights (nanoGPT's initialisation, drawn
once with NumPy) and see the same batches; the check compares the first step's loss with the
NumPy floor's (bench/_gpt_floor.py: the same model, forward and backward by hand, clipping and
AdamW; the same floor for both attention paths).

Generation: batch 1, a prompt of 8 tokens, 32 new tokens by argmax under no_grad (the model in
eval mode, logits of the last position only, as nanoGPT's forward without targets); the floor
runs the same forward in NumPy, and the tokens are checked equal.
"""
import math

import numpy as np

import _gpt_floor

N_LAYER, N_EMBD, N_HEAD, BLOCK, BATCH, VOCAB = 4, 128, 4, 64, 16, 65
GEN_PROMPT, GEN_TOKENS = 8, 32
F32 = np.float32
NotAvailable = NotImplementedError  # (run.py reports either as "n/a")


def _model_classes(T, flash):
    nn, F = T.nn, T.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(N_EMBD, 3 * N_EMBD)
            self.c_proj = nn.Linear(N_EMBD, N_EMBD)
            self.n_head, self.n_embd = N_HEAD, N_EMBD
            self.flash = flash
            if not flash:
                self.register_buffer("bias", T.tril(T.ones(BLOCK, BLOCK)).view(1, 1, BLOCK, BLOCK))

        def forward(self, x):
            B, T_, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T_, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T_, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T_, self.n_head, C // self.n_head).transpose(1, 2)
            if self.flash:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0,
                                                   is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.bias[:, :, :T_, :T_] == 0, float("-inf"))
                att = F.softmax(att, dim=-1)
                y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T_, C)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(N_EMBD, 4 * N_EMBD)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * N_EMBD, N_EMBD)

        def forward(self, x):
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(N_EMBD)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(N_EMBD)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            x = x + self.mlp(self.ln_2(x))
            return x

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(VOCAB, N_EMBD),
                wpe=nn.Embedding(BLOCK, N_EMBD),
                h=nn.ModuleList([Block() for _ in range(N_LAYER)]),
                ln_f=nn.LayerNorm(N_EMBD),
            ))
            self.lm_head = nn.Linear(N_EMBD, VOCAB, bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # weight tying

        def forward(self, idx, targets=None):
            b, t = idx.size()
            pos = T.arange(0, t, dtype=T.long)
            x = self.transformer.wte(idx) + self.transformer.wpe(pos)
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            if targets is not None:
                logits = self.lm_head(x)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                       ignore_index=-1)
            else:
                logits = self.lm_head(x[:, [-1], :])
                loss = None
            return logits, loss

        def configure_optimizers(self, weight_decay, learning_rate, betas):
            params = [p for p in self.parameters() if p.requires_grad]
            decay = [p for p in params if p.dim() >= 2]
            nodecay = [p for p in params if p.dim() < 2]
            groups = [{"params": decay, "weight_decay": weight_decay},
                      {"params": nodecay, "weight_decay": 0.0}]
            return T.optim.AdamW(groups, lr=learning_rate, betas=betas)

    return GPT


def _weights(model_state_names):
    """nanoGPT's initialisation, drawn once: normal(0, 0.02) for Linear and Embedding weights,
    0.02 / sqrt(2 n_layer) for the residual projections, zero biases, unit LayerNorm."""
    r = np.random.default_rng(34)
    out = {}
    for name, shape in model_state_names:
        if name.endswith("c_proj.weight"):
            w = r.normal(0.0, 0.02 / math.sqrt(2 * N_LAYER), shape)
        elif name.endswith(".weight") and len(shape) == 2:
            w = r.normal(0.0, 0.02, shape)
        elif "ln_" in name and name.endswith(".weight"):
            w = np.ones(shape)
        else:
            w = np.zeros(shape)
        out[name] = w.astype(F32)
    out["transformer.wte.weight"] = out["lm_head.weight"]
    return out


def _build(T, flash):
    if not hasattr(T.nn.functional, "scaled_dot_product_attention") and flash:
        raise NotAvailable("scaled_dot_product_attention")
    GPT = _model_classes(T, flash)
    T.manual_seed(0)
    model = GPT()
    shapes = [(k, tuple(v.shape)) for k, v in model.state_dict().items()
              if not k.endswith(".attn.bias")]
    w = _weights(shapes)
    state = model.state_dict()
    for k in w:
        state[k] = T.tensor(w[k])
    model.load_state_dict(state)
    return model


def _floor_weights():
    """_weights without a model: the names and shapes in the models' state_dict order."""
    return _weights(_gpt_floor.state_names(N_LAYER, N_EMBD, VOCAB, BLOCK))


def _batches(n=4):
    r = np.random.default_rng(35)
    data = r.integers(0, VOCAB, size=(n, BATCH, BLOCK + 1))
    return [(d[:, :-1].copy(), d[:, 1:].copy()) for d in data]


def gpt_step(flash):
    def make(lib, quick):
        if lib == "numpy":
            step, first = _gpt_floor.train_step(_floor_weights(), _batches(), N_HEAD)
            return step, 1, first
        import ndgrad
        T = ndgrad
        if lib.startswith("torch"):
            import torch as T
        model = _build(T, flash)
        opt = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95))
        batches = [(T.tensor(x), T.tensor(y)) for x, y in _batches()]
        with T.no_grad():
            _, first = model(*batches[0])
        it = [0]

        def step():
            x, y = batches[it[0] % len(batches)]
            it[0] += 1
            _, loss = model(x, y)
            loss.backward()
            T.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            return loss
        return step, 1, first
    return make


def gpt_generate(lib, quick):
    prompt = np.random.default_rng(36).integers(0, VOCAB, size=(1, GEN_PROMPT))
    if lib == "numpy":
        return _gpt_floor.generate(_floor_weights(), N_HEAD, prompt, GEN_TOKENS), 1
    import ndgrad
    T = ndgrad
    if lib.startswith("torch"):
        import torch as T
    model = _build(T, True)
    model.eval()
    prompt = T.tensor(prompt)

    def step():
        idx = prompt
        with T.no_grad():
            for _ in range(GEN_TOKENS):
                idx_cond = idx if idx.size(1) <= BLOCK else idx[:, -BLOCK:]
                logits, _ = model(idx_cond)
                idx_next = T.argmax(logits[:, -1, :], dim=-1, keepdim=True)
                idx = T.cat((idx, idx_next), dim=1)
        return idx
    return step, 1


WORKLOADS = [
    # name, description, unit, scale, maker, rounds (full, quick); see run.py
    ("GPT", "nanoGPT train step (4x128, 4 heads, block 64, batch 16, SDPA, AdamW)", "ms/step",
     1e3, gpt_step(True), (20, 3)),
    ("GPT-mask", "GPT step with nanoGPT's explicit masked softmax", "ms/step", 1e3,
     gpt_step(False), (10, 2)),
    ("GPT-gen", "GPT greedy generation, 32 tokens, batch 1, no_grad", "ms", 1e3, gpt_generate,
     (10, 3)),
]
