"""Ordinary PyTorch programs run unchanged under `import ndgrad as torch`.

Each program below is plain PyTorch source. It is executed twice: once with `torch` bound to the
real PyTorch and once with `torch` (and every `torch.*` submodule) bound to ndgrad. Inputs and
initial weights come from NumPy seeds inside the program, since ndgrad's RNG differs from
PyTorch's. The program leaves its final numbers in a dict `result`; those numbers and everything
it printed must agree.
"""
import contextlib
import io
import sys
import textwrap

import numpy as np
import pytest

import ndgrad

PROGRAMS = {}


def program(name, rtol=1e-5, atol=1e-6, compare_stdout=True):
    def deco(src):
        PROGRAMS[name] = (textwrap.dedent(src), rtol, atol, compare_stdout)
    return deco


# ----------------------------------------------------------------------------------- programs

program("linear_regression_manual_gd", rtol=1e-8, atol=1e-10)("""
    import numpy as np
    import torch

    rng = np.random.default_rng(0)
    X = torch.from_numpy(rng.standard_normal((64, 3)))
    true_w = torch.tensor([[1.5], [-2.0], [0.5]], dtype=torch.float64)
    y = X @ true_w + 0.3 + 0.01 * torch.from_numpy(rng.standard_normal((64, 1)))

    w = torch.zeros(3, 1, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    lr = 0.1
    for epoch in range(60):
        pred = X @ w + b
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
            w.grad.zero_()
            b.grad.zero_()
        if epoch % 20 == 0:
            print(f"epoch {epoch}: loss {loss.item():.6f}")
    print(w.grad, b.requires_grad, w.is_leaf)
    print(w.detach().squeeze().round(decimals=2))
    result = {"w": w, "b": b, "loss": loss.item()}
""")

program("linear_module_sgd_momentum")("""
    import numpy as np
    import torch
    import torch.nn as nn

    rng = np.random.default_rng(1)
    X = torch.tensor(rng.standard_normal((100, 2)), dtype=torch.float32)
    y = (X[:, :1] * 3 - X[:, 1:] + 1).float()
    model = nn.Linear(2, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.1, -0.2]]))
        model.bias.fill_(0.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    loss_fn = nn.MSELoss()
    losses = []
    for step in range(40):
        optimizer.zero_grad()
        loss = loss_fn(model(X), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    print(model)
    print(model.weight.shape, model.bias.requires_grad, model.weight.dtype)
    print(type(model.weight).__name__, isinstance(model.weight, torch.Tensor))
    print([name for name, _ in model.named_parameters()])
    result = {"losses": losses, "weight": model.weight, "bias": model.bias}
""")

program("logistic_regression_bce_with_logits")("""
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    rng = np.random.default_rng(2)
    X_np = rng.standard_normal((200, 4)).astype(np.float32)
    y_np = (X_np @ np.array([1.0, -1.0, 0.5, 0.0], dtype=np.float32) > 0).astype(np.float32)
    X = torch.from_numpy(X_np)
    y = torch.from_numpy(y_np).unsqueeze(1)

    model = nn.Linear(4, 1)
    nn.init.zeros_(model.weight)
    nn.init.constant_(model.bias, 0.1)
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.5]))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, weight_decay=1e-3)
    for epoch in range(25):
        logits = model(X)
        loss = criterion(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        probs = torch.sigmoid(model(X))
        preds = (probs > 0.5).float()
        acc = (preds == y).float().mean().item()
        bce = F.binary_cross_entropy(probs, y).item()
    print(f"accuracy {acc:.3f}")
    print(criterion)
    result = {"acc": acc, "bce": bce, "loss": loss.item(), "w": model.weight, "b": model.bias}
""")

program("mlp_dataloader_adam_steplr")("""
    import numpy as np
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    rng = np.random.default_rng(3)
    centers = np.array([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.5]])
    labels = rng.integers(0, 3, size=150)
    feats = centers[labels] + 0.7 * rng.standard_normal((150, 2))
    dataset = TensorDataset(torch.tensor(feats, dtype=torch.float32), torch.tensor(labels))
    loader = DataLoader(dataset, batch_size=32, shuffle=False)

    class MLP(nn.Module):
        def __init__(self, n_in, n_hidden, n_out):
            super().__init__()
            self.net = nn.Sequential(
                nn.Linear(n_in, n_hidden), nn.ReLU(),
                nn.Linear(n_hidden, n_hidden), nn.Tanh(),
                nn.Linear(n_hidden, n_out))

        def forward(self, x):
            return self.net(x)

    model = MLP(2, 16, 3)
    init = np.random.default_rng(33)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(init.standard_normal(tuple(p.shape)) * 0.3))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.9, 0.99))
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    criterion = nn.CrossEntropyLoss()
    print(len(dataset), len(loader))
    history = []
    for epoch in range(5):
        model.train()
        total, n = 0.0, 0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * xb.size(0)
            n += len(xb)
        scheduler.step()
        history.append(total / n)
        print(f"epoch {epoch} lr {scheduler.get_last_lr()[0]:.5f} loss {total / n:.4f}")
    model.eval()
    correct = 0
    with torch.no_grad():
        for xb, yb in loader:
            correct += (model(xb).argmax(dim=1) == yb).sum().item()
    print(f"acc {correct / len(dataset):.3f}")
    print(model)
    print(xb.dtype, yb.dtype, xb.shape)
    result = {"history": history, "acc": correct / len(dataset),
              "params": [p.detach().clone() for p in model.parameters()]}
""")

program("cnn_train_and_eval", rtol=1e-4, atol=1e-5)("""
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class SmallCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, kernel_size=3, padding=1)
            self.bn1 = nn.BatchNorm2d(4)
            self.conv2 = nn.Conv2d(4, 6, 3, stride=1, padding=0, bias=False)
            self.pool = nn.MaxPool2d(2)
            self.drop = nn.Dropout(0.5)
            self.fc = nn.Linear(6 * 3 * 3, 3)

        def forward(self, x):
            x = self.pool(F.relu(self.bn1(self.conv1(x))))
            x = F.relu(self.conv2(x))
            x = torch.flatten(x, 1)
            return self.fc(x)

    rng = np.random.default_rng(4)
    model = SmallCNN()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.startswith("bn"):
                continue
            p.copy_(torch.tensor(rng.standard_normal(p.shape) * 0.3, dtype=torch.float32))
    x = torch.tensor(rng.standard_normal((5, 1, 10, 10)), dtype=torch.float32)
    target = torch.tensor([0, 1, 2, 1, 0])

    model.train()
    out = model(x)
    loss = F.cross_entropy(out, target)
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters()}

    # dropout in training mode: each element is either zero or scaled by 1 / (1 - p)
    h = torch.ones(200, 10)
    d = model.drop(h)
    ok = bool(((d == 0) | (d == 2.0)).all())
    model.eval()
    same = torch.equal(model.drop(h), h)
    with torch.no_grad():
        eval_out = model(x)
    print(model)
    print(out.shape, eval_out.shape, ok, same)
    print(model.bn1.num_batches_tracked, model.training, model.bn1.training)
    result = {"loss": loss.item(), "eval_out": eval_out, "grads": grads,
              "running_mean": model.bn1.running_mean, "running_var": model.bn1.running_var}
""")

program("lstm_sequence_regression", rtol=1e-4, atol=1e-5)("""
    import numpy as np
    import torch
    import torch.nn as nn

    class SeqModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(input_size=3, hidden_size=5, num_layers=2, batch_first=True)
            self.head = nn.Linear(5, 1)

        def forward(self, x):
            out, (h, c) = self.lstm(x)
            return self.head(out[:, -1, :]), h, c

    rng = np.random.default_rng(5)
    model = SeqModel()
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.from_numpy(rng.uniform(-0.4, 0.4, size=tuple(p.shape))))
    x = torch.from_numpy(rng.standard_normal((4, 7, 3)).astype(np.float32))
    y = torch.from_numpy(rng.standard_normal((4, 1)).astype(np.float32))
    optimizer = torch.optim.RMSprop(model.parameters(), lr=0.01)
    for step in range(3):
        optimizer.zero_grad()
        pred, h, c = model(x)
        loss = nn.functional.mse_loss(pred, y)
        loss.backward()
        optimizer.step()
    print([n for n, _ in model.named_parameters()])
    print(h.shape, c.shape, pred.shape)
    print(model.lstm)
    result = {"loss": loss.item(), "pred": pred, "h": h, "c": c,
              "w_ih_grad": model.lstm.weight_ih_l0.grad}
""")

program("custom_autograd_function", rtol=1e-8, atol=1e-10)("""
    import torch
    from torch.autograd import Function, gradcheck

    class ClampedExp(Function):
        @staticmethod
        def forward(ctx, x, limit):
            y = torch.exp(x.clamp(max=limit))
            ctx.save_for_backward(x, y)
            ctx.limit = limit
            return y

        @staticmethod
        def backward(ctx, grad_out):
            x, y = ctx.saved_tensors
            return grad_out * y * (x <= ctx.limit).to(grad_out.dtype), None

    class MulAdd(Function):
        @staticmethod
        def forward(ctx, a, b, c):
            ctx.save_for_backward(a, b)
            return a * b + c

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a, g

    x = torch.linspace(-1, 2, 7, dtype=torch.float64, requires_grad=True)
    y = ClampedExp.apply(x, 1.0)
    y.sum().backward()
    print(y.grad_fn is not None, x.grad)

    a = torch.arange(1.0, 4.0, dtype=torch.float64, requires_grad=True)
    b = torch.full((3,), 2.0, dtype=torch.float64, requires_grad=True)
    c = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    out = MulAdd.apply(a, b, c)
    (out ** 2).sum().backward()
    ok = gradcheck(MulAdd.apply, (a.detach().requires_grad_(), b.detach().requires_grad_(),
                                  c.detach().requires_grad_()))
    print(ok, a.grad, b.grad, c.grad)
    result = {"xgrad": x.grad, "y": y, "a": a.grad, "b": b.grad, "c": c.grad, "ok": ok}
""")

program("hooks_and_retain_grad", rtol=1e-8, atol=1e-10)("""
    import torch
    import torch.nn as nn

    x = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64, requires_grad=True)
    h = x * 2
    h.retain_grad()
    seen = []
    handle = h.register_hook(lambda g: seen.append(g.clone()) or g * 10)
    z = (h ** 2).sum()
    z.backward()
    print(h.grad, x.grad, len(seen))
    handle.remove()

    lin = nn.Linear(3, 2).double()
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[0.1, 0.2, 0.3], [-0.1, 0.0, 0.5]]))
        lin.bias.zero_()
    acts = {}
    def fwd_hook(module, inputs, output):
        acts["out"] = output.detach()
    def pre_hook(module, inputs):
        return (inputs[0] * 2,)
    def bwd_hook(module, grad_input, grad_output):
        acts["grad_out"] = grad_output[0].detach()
    hs = [lin.register_forward_hook(fwd_hook), lin.register_forward_pre_hook(pre_hook),
          lin.register_full_backward_hook(bwd_hook)]
    inp = torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64, requires_grad=True)
    out = lin(inp)
    out.pow(2).sum().backward()
    for hd in hs:
        hd.remove()
    out2 = lin(inp)
    print(acts["out"], acts["grad_out"])
    lin.weight.register_hook(lambda g: g.clamp(min=0))
    lin.zero_grad()
    lin(inp).sum().backward()
    result = {"hgrad": h.grad, "xgrad": x.grad, "seen": seen[0], "acts": acts["out"],
              "grad_out": acts["grad_out"], "inp_grad": inp.grad, "out2": out2,
              "wgrad": lin.weight.grad}
""")

program("no_grad_eval_topk_accuracy")("""
    import numpy as np
    import torch

    rng = np.random.default_rng(7)
    logits = torch.tensor(rng.standard_normal((50, 10)), dtype=torch.float32, requires_grad=True)
    targets = torch.tensor(rng.integers(0, 10, 50), dtype=torch.long)

    def accuracy(output, target, topk=(1,)):
        with torch.no_grad():
            maxk = max(topk)
            batch_size = target.size(0)
            _, pred = output.topk(maxk, 1, True, True)
            pred = pred.t()
            correct = pred.eq(target.view(1, -1).expand_as(pred))
            res = []
            for k in topk:
                correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
                res.append(correct_k.mul_(100.0 / batch_size))
            return res

    top1, top5 = accuracy(logits, targets, topk=(1, 5))
    print(top1, top5)
    print(top1.requires_grad, torch.is_grad_enabled())
    with torch.no_grad():
        probs = logits.softmax(dim=-1)
        conf, pred = probs.max(dim=1)
        mask = conf > 0.2
        sel = pred[mask]
        picked = probs.gather(1, targets.unsqueeze(1)).squeeze(1)
        wrong = (pred != targets).nonzero().squeeze(1)
        values, idx = torch.sort(picked, descending=True)
    print(mask.sum().item(), sel.tolist()[:5], wrong[:5])
    print(probs.requires_grad, picked.shape)
    result = {"top1": top1.item(), "top5": top5.item(), "picked": picked, "idx": idx,
              "conf": conf, "wrong": wrong, "sel": sel, "values": values}
""")

program("state_dict_bytesio_roundtrip")("""
    import io
    import numpy as np
    import torch
    import torch.nn as nn

    def make():
        return nn.Sequential(nn.Linear(4, 8, bias=False), nn.BatchNorm1d(8), nn.ReLU(),
                             nn.Linear(8, 2))

    rng = np.random.default_rng(8)
    model = make()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(p.shape), dtype=torch.float32))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    x = torch.tensor(rng.standard_normal((6, 4)), dtype=torch.float32)
    for _ in range(2):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()

    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 2}, buf)
    buf.seek(0)
    ckpt = torch.load(buf)
    model2 = make()
    missing = model2.load_state_dict(ckpt["model"])
    opt2 = torch.optim.Adam(model2.parameters(), lr=0.5)
    opt2.load_state_dict(ckpt["optim"])
    print(list(ckpt["model"].keys()))
    print(ckpt["epoch"], missing)
    print(opt2.param_groups[0]["lr"], sorted(ckpt["optim"]["state"][0].keys()))
    model.eval()
    model2.eval()
    with torch.no_grad():
        same = torch.allclose(model(x), model2(x))
    for o in (opt, opt2):
        o.zero_grad()
    model.train()
    model2.train()
    model(x).sum().backward()
    model2(x).sum().backward()
    opt.step()
    opt2.step()
    print(same, torch.equal(model[0].weight, model2[0].weight))
    t = torch.arange(6).reshape(2, 3)
    buf = io.BytesIO()
    torch.save(t, buf)
    buf.seek(0)
    t2 = torch.load(buf)
    print(t2, t2.dtype)
    result = {"w": model2[3].weight, "rm": model2[1].running_mean, "same": same}
""")

program("gradient_clipping")("""
    import numpy as np
    import torch
    import torch.nn as nn
    from torch.nn.utils import clip_grad_norm_, clip_grad_value_

    rng = np.random.default_rng(9)
    model = nn.Sequential(nn.Linear(3, 4), nn.Sigmoid(), nn.Linear(4, 1))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(p.shape) * 2, dtype=torch.float32))
    x = torch.tensor(rng.standard_normal((8, 3)), dtype=torch.float32)
    loss = (model(x) * 100).pow(2).mean()
    loss.backward()
    total = clip_grad_norm_(model.parameters(), max_norm=1.0)
    after = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
    print(f"total {total.item():.1f} after {after.item():.4f}")  # float32 BLAS kernels differ in the last bits
    print(total.dim(), total.dtype)
    clip_grad_value_(model.parameters(), clip_value=0.05)
    inf_norm = clip_grad_norm_(model.parameters(), 10.0, norm_type=float("inf"))
    result = {"total": total, "after": after, "inf": inf_norm,
              "grads": [p.grad for p in model.parameters()]}
""")

program("nn_init_and_apply", rtol=1e-6)("""
    import math
    import torch
    import torch.nn as nn

    def init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight, gain=nn.init.calculate_gain("tanh"))
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            nn.init.constant_(m.bias, 0.01)

    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 4 * 4, 10))
    net.apply(init_weights)
    lin = net[3]
    bound = nn.init.calculate_gain("tanh") * math.sqrt(6.0 / (128 + 10))
    print(bool(lin.weight.abs().max() <= bound), bool((lin.bias == 0).all()))
    print(bool((net[0].bias == 0.01).all()), net[0].weight.shape)
    gains = [nn.init.calculate_gain(n) for n in ("linear", "relu", "tanh", "sigmoid", "selu")]
    gains.append(nn.init.calculate_gain("leaky_relu", 0.2))
    w = torch.empty(3, 5)
    nn.init.eye_(w)
    ones = nn.init.ones_(torch.empty(2, 2))
    o = torch.empty(4, 4)
    nn.init.orthogonal_(o)
    ortho = torch.allclose(o @ o.t(), torch.eye(4), atol=1e-5)
    n_params = sum(p.numel() for p in net.parameters() if p.requires_grad)
    print(n_params, ortho)
    print(net)
    result = {"gains": gains, "eye": w, "ones": ones, "n": n_params}
""")

program("transformer_encoder_step", rtol=1e-4, atol=1e-5)("""
    import numpy as np
    import torch
    import torch.nn as nn

    rng = np.random.default_rng(11)
    layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
                                       batch_first=True)
    encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    head = nn.Linear(8, 3)
    params = list(encoder.parameters()) + list(head.parameters())
    with torch.no_grad():
        for p in params:
            p.copy_(torch.tensor(rng.standard_normal(p.shape) * 0.2, dtype=torch.float32))
    src = torch.tensor(rng.standard_normal((2, 5, 8)), dtype=torch.float32)
    causal = nn.Transformer.generate_square_subsequent_mask(5)
    pad = torch.tensor([[False] * 5, [False, False, False, True, True]])
    pad = torch.zeros(2, 5).masked_fill(pad, float("-inf"))
    optimizer = torch.optim.AdamW(params, lr=1e-3)
    out = encoder(src, mask=causal, src_key_padding_mask=pad)
    logits = head(out.mean(dim=1))
    loss = nn.functional.cross_entropy(logits, torch.tensor([0, 2]))
    loss.backward()
    optimizer.step()
    print([n for n, _ in encoder.named_parameters()][:6])
    print(out.shape, len(encoder.layers))
    result = {"out": out, "loss": loss.item(),
              "grads": [p.grad for p in params], "after": [p.detach().clone() for p in params]}
""")

program("gradient_penalty_create_graph", rtol=1e-8, atol=1e-10)("""
    import numpy as np
    import torch
    import torch.nn as nn

    rng = np.random.default_rng(12)
    critic = nn.Sequential(nn.Linear(2, 6), nn.Tanh(), nn.Linear(6, 1)).double()
    with torch.no_grad():
        for p in critic.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(p.shape)))
    real = torch.from_numpy(rng.standard_normal((5, 2)))
    fake = torch.from_numpy(rng.standard_normal((5, 2)))
    alpha = torch.from_numpy(rng.uniform(size=(5, 1)))
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(interp)
    grads, = torch.autograd.grad(outputs=scores, inputs=interp,
                                 grad_outputs=torch.ones_like(scores),
                                 create_graph=True, retain_graph=True)
    penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
    loss.backward()
    print(grads.requires_grad, penalty.grad_fn is not None)

    # Hessian-vector product by double backward
    w = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    f = (w ** 3).sum() + (w[0] * w[1] * w[2])
    g, = torch.autograd.grad(f, w, create_graph=True)
    v = torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64)
    hvp, = torch.autograd.grad(g @ v, w)
    print(hvp)
    result = {"penalty": penalty, "loss": loss, "grads": grads,
              "pgrads": [p.grad for p in critic.parameters()], "hvp": hvp}
""")

program("reshape_permute_cat_stack_pipeline", rtol=1e-8, atol=1e-10)("""
    import numpy as np
    import torch

    rng = np.random.default_rng(13)
    imgs = torch.from_numpy(rng.standard_normal((2, 3, 4, 4))).requires_grad_()
    patches = imgs.unfold(2, 2, 2).unfold(3, 2, 2)           # B, C, 2, 2, 2, 2
    patches = patches.permute(0, 2, 3, 1, 4, 5).contiguous()
    tokens = patches.view(2, 4, -1)                          # B, N, C*2*2
    cls = torch.zeros(2, 1, tokens.shape[-1], dtype=tokens.dtype)
    seq = torch.cat([cls, tokens], dim=1)
    both = torch.stack([seq, seq.flip(1)], dim=0)
    a, b = both.unbind(0)
    parts = torch.chunk(a, 3, dim=-1)
    halves = b.split([5, 7], dim=-1)
    mixed = torch.cat([parts[2], halves[0], parts[0].transpose(1, 2).reshape(2, 5, -1)], -1)
    summary = mixed.mean(dim=(0, 1)).expand(3, -1).T.squeeze()
    out = (summary.sum(1) * torch.arange(summary.shape[0])).sum()
    out.backward()
    print(patches.shape, tokens.shape, seq.shape, both.shape, mixed.shape, summary.shape)
    print([p.shape for p in parts], tokens.is_contiguous(), imgs.permute(1, 0, 2, 3).is_contiguous())
    print(torch.Size([2, 3]) == (2, 3), tokens.size(), tokens.size(-1), tokens.ndim, tokens.dim())
    x = torch.arange(24).view(2, 3, 4)
    print(x.movedim(0, -1).shape, x.flatten(1).shape, x.unsqueeze(1).shape, x[:, None].shape)
    print(x[..., 1], x[1, :, ::2], x.narrow(2, 1, 2).tolist())
    result = {"out": out, "grad": imgs.grad, "mixed": mixed}
""")

program("print_tensors_modules_losses")("""
    import torch
    import torch.nn as nn

    print(torch.tensor([1.0, 2.5, -3.0]))
    print(torch.tensor([[1, 2], [3, 4]]))
    print(torch.tensor([True, False]))
    print(torch.tensor(3.14159))
    print(torch.tensor([1e-8, 1.0, 1e8]))
    print(torch.zeros(2, 3, dtype=torch.float64))
    print(torch.arange(12.).reshape(3, 4) / 3)
    print(torch.arange(2000))
    print(torch.tensor([1.0, 2.0], requires_grad=True))
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).sum()
    print(y)
    print(str(y.grad_fn).split(" at ")[0], y.grad_fn.next_functions[0][0].__class__.__name__)
    print(torch.tensor([float("nan"), float("inf"), -float("inf")]))
    print(torch.tensor([], dtype=torch.int64), torch.ones(0, 3))
    print(torch.tensor([[0.1234567, 100.0]]), torch.tensor([123456789.0]))
    print(torch.float32, torch.int64, torch.Size([2, 3]), torch.get_default_dtype())
    loss = nn.CrossEntropyLoss()(torch.tensor([[2.0, 1.0, 0.1]]), torch.tensor([0]))
    print(loss)
    print(f"{loss.item():.4f}", f"{loss:.4f}")
    model = nn.Sequential(
        nn.Conv2d(1, 2, 3, stride=2, padding=1), nn.BatchNorm2d(2), nn.ReLU(inplace=True),
        nn.MaxPool2d(2), nn.Dropout(p=0.25), nn.Flatten(), nn.Linear(8, 4, bias=False),
        nn.LeakyReLU(0.1), nn.Softmax(dim=1))
    print(model)
    print(nn.LSTM(3, 4, batch_first=True), nn.Embedding(10, 3, padding_idx=0))
    print(nn.LayerNorm(4), nn.GELU(), nn.MSELoss(reduction="sum"), nn.Identity())
    print(repr(torch.tensor([1, 2], dtype=torch.int32)), str(torch.tensor([0.5], dtype=torch.float16)))
    result = {"loss": loss}
""")

program("dtype_handling")("""
    import numpy as np
    import torch

    a = torch.tensor([1, 2, 3])
    b = torch.tensor([1.5, 2.5])
    c = torch.tensor([[1, 2], [3, 4]], dtype=torch.float64)
    print(a.dtype, b.dtype, c.dtype, torch.tensor(True).dtype, torch.tensor([1, 2.0]).dtype)
    print((a / 2).dtype, (a // 2).dtype, (a * 1.5).dtype, (a + b[0]).dtype, (c + b.double()).dtype)
    print(a.float(), a.double().dtype, b.long(), b.int().dtype, b.half().dtype, (b > 2).dtype)
    print(a.sum().item(), type(a.sum().item()).__name__, type(b.mean().item()).__name__)
    print(c.tolist(), a.tolist(), type(c.tolist()[0][0]).__name__, torch.tensor(5).tolist())
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torch.from_numpy(arr)
    arr[0, 0] = 100.0
    print(t[0, 0].item(), t.dtype, t.numpy().dtype, t.shape)
    n = torch.tensor([1, 2, 3]).numpy()
    print(n.dtype, torch.as_tensor(np.array([1, 2], dtype=np.int32)).dtype)
    print(a.to(torch.float32), b.to(dtype=torch.int64), a.type(torch.float64).dtype)
    print(torch.zeros(2, dtype=torch.long), torch.ones(2).int(), torch.full((2,), 7).dtype)
    print(int(torch.tensor(3.7)), float(torch.tensor(2)), bool(torch.tensor([1])))
    print(a.is_floating_point(), b.is_floating_point(), torch.is_tensor(a), a.numel(), a.element_size())
    print(torch.tensor([1, 2, 3]).sum(dtype=torch.float32), torch.arange(5).float().mean())
    print(torch.zeros_like(a, dtype=torch.float32), torch.ones_like(b).dtype, b.new_zeros(2, 2))
    print(torch.tensor([0.1, 0.2], dtype=torch.float64).float())
    x = torch.randn(3, 4)
    print(x.dtype, x.shape, x.device, x.requires_grad, x.to("cpu").device.type)
    result = {"c": c, "mean": b.mean().item(), "t": t}
""")

program("embedding_bag_of_words")("""
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class BoW(nn.Module):
        def __init__(self, vocab, dim, classes):
            super().__init__()
            self.emb = nn.Embedding(vocab, dim, padding_idx=0)
            self.out = nn.Linear(dim, classes)

        def forward(self, tokens):
            mask = (tokens != 0).unsqueeze(-1).float()
            e = self.emb(tokens) * mask
            pooled = e.sum(1) / mask.sum(1).clamp(min=1)
            return self.out(F.dropout(pooled, p=0.3, training=False))

    rng = np.random.default_rng(14)
    model = BoW(20, 6, 2)
    with torch.no_grad():
        model.emb.weight.copy_(torch.from_numpy(rng.standard_normal((20, 6)).astype("float32")))
        model.emb.weight[0].fill_(0)
        model.out.weight.copy_(torch.from_numpy(rng.standard_normal((2, 6)).astype("float32")))
        model.out.bias.zero_()
    tokens = torch.tensor([[3, 5, 7, 0, 0], [1, 2, 0, 0, 0], [9, 9, 9, 9, 4]])
    labels = torch.tensor([1, 0, 1])
    opt = torch.optim.SGD(model.parameters(), lr=0.3)
    for _ in range(5):
        opt.zero_grad()
        loss = F.cross_entropy(model(tokens), labels, label_smoothing=0.1)
        loss.backward()
        opt.step()
    print(model.emb.weight.grad[0], model.emb.weight.grad.shape)
    print(F.one_hot(labels, num_classes=3))
    log_probs = F.log_softmax(model(tokens), dim=-1)
    nll = F.nll_loss(log_probs, labels, reduction="none")
    result = {"loss": loss.item(), "emb": model.emb.weight, "nll": nll}
""")

program("freeze_layers_param_groups_schedulers")("""
    from collections import OrderedDict
    import numpy as np
    import torch
    import torch.nn as nn

    rng = np.random.default_rng(15)
    model = nn.Sequential(OrderedDict([
        ("backbone", nn.Sequential(nn.Linear(4, 6), nn.GELU())),
        ("dropout", nn.Dropout(0.0)),
        ("head", nn.Linear(6, 2)),
    ]))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(p.shape) * 0.5, dtype=torch.float32))
    for p in model.backbone.parameters():
        p.requires_grad_(False)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    print(trainable, [n for n, _ in model.named_modules()])
    print(sum(p.numel() for p in model.parameters()), model.head.weight.requires_grad)
    optimizer = torch.optim.SGD([
        {"params": model.head.weight, "lr": 0.1},
        {"params": [model.head.bias]},
    ], lr=0.01, momentum=0.5)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[2, 4], gamma=0.1)
    x = torch.tensor(rng.standard_normal((10, 4)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 2, 10))
    lrs = []
    for epoch in range(6):
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
        lrs.append([g["lr"] for g in optimizer.param_groups])
    print(model.backbone[0].weight.grad, len(optimizer.param_groups))
    print(scheduler.state_dict()["last_epoch"], optimizer.state_dict()["param_groups"][1]["lr"])
    cos = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(cos, T_max=4)
    cos_lrs = []
    for _ in range(5):
        cos.step()
        sched.step()
        cos_lrs.append(sched.get_last_lr()[0])
    result = {"lrs": lrs, "cos": cos_lrs, "w": model.head.weight, "b": model.head.bias,
              "loss": loss.item()}
""")

program("tensor_math_utilities", rtol=1e-8, atol=1e-10)("""
    import numpy as np
    import torch

    rng = np.random.default_rng(16)
    x = torch.from_numpy(rng.standard_normal((4, 5)))
    print(torch.softmax(x, dim=1).sum(1), torch.log_softmax(x, 0).exp().sum(0))
    m, i = torch.max(x, dim=1)
    print(i, torch.argmax(x), torch.argmin(x, dim=0), torch.min(x).item() == x.min().item())
    v, j = torch.topk(x, 2, dim=1, largest=False)
    s, k = torch.sort(x[0])
    print(j, k, torch.argsort(x[:, 0], descending=True))
    print(torch.where(x > 0, x, torch.zeros_like(x)).count_nonzero(), torch.clamp(x, -0.5, 0.5).abs().max())
    cs = torch.cumsum(x, dim=1)
    norm = torch.norm(x, dim=0)
    lse = torch.logsumexp(x, dim=1)
    mm = torch.matmul(x, x.T)
    e = torch.einsum("ij,kj->ik", x, x)
    print(torch.allclose(mm, e), torch.isclose(x, x + 1e-12).all())
    mean, std = x.mean(0), x.std(0)
    z = (x - mean) / std
    q = torch.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=torch.float64)
    print(torch.linalg.inv(q), torch.linalg.norm(q), torch.det(q))
    idx = torch.tensor([0, 2])
    print(torch.index_select(x, 1, idx).shape, x.masked_fill(x < 0, 0.0).min())
    print(torch.tril(torch.ones(3, 3)), torch.eye(2, 3), torch.diag(torch.tensor([1, 2])))
    print(torch.unique(torch.tensor([3, 1, 3, 2, 1])), torch.bincount(torch.tensor([0, 1, 1, 3])))
    result = {"cs": cs, "norm": norm, "lse": lse, "z": z, "m": m, "v": v, "s": s}
""")

program("seq2seq_gru_teacher_forcing", rtol=1e-4, atol=1e-5)("""
    import numpy as np
    import torch
    import torch.nn as nn

    rng = np.random.default_rng(17)
    enc = nn.GRU(4, 6, batch_first=True)
    dec = nn.GRUCell(3, 6)
    proj = nn.Linear(6, 3)
    modules = nn.ModuleList([enc, dec, proj])
    with torch.no_grad():
        for p in modules.parameters():
            p.copy_(torch.tensor(rng.uniform(-0.3, 0.3, size=p.shape), dtype=torch.float32))
    src = torch.tensor(rng.standard_normal((2, 5, 4)), dtype=torch.float32)
    tgt = torch.tensor(rng.integers(0, 3, (2, 4)))
    _, h = enc(src)
    h = h.squeeze(0)
    inp = torch.zeros(2, 3)
    loss = 0
    outs = []
    for t in range(tgt.size(1)):
        h = dec(inp, h)
        logits = proj(h)
        outs.append(logits)
        loss = loss + nn.functional.cross_entropy(logits, tgt[:, t])
        inp = nn.functional.one_hot(tgt[:, t], 3).float()
    loss = loss / tgt.size(1)
    loss.backward()
    print(torch.stack(outs, 1).shape, h.shape, type(loss).__name__)
    result = {"loss": loss.item(), "outs": torch.stack(outs, 1),
              "grads": [p.grad for p in modules.parameters()]}
""")


program("seeding_boilerplate_custom_dataset")("""
    import random
    import numpy as np
    import torch
    from torch import nn, optim
    from torch.utils.data import Dataset, DataLoader, Subset

    def set_seed(seed):
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False

    set_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(device, device.type)

    class Squares(Dataset):
        def __init__(self, n):
            self.x = np.linspace(-1, 1, n).astype(np.float32)

        def __len__(self):
            return len(self.x)

        def __getitem__(self, i):
            x = self.x[i]
            return np.array([x], dtype=np.float32), {"y": x * x, "idx": i}

    data = Squares(40)
    train = Subset(data, list(range(0, 40, 2)))
    loader = DataLoader(train, batch_size=6, drop_last=True)
    xb, meta = next(iter(loader))
    print(len(loader), xb.shape, xb.dtype, meta["y"].dtype, meta["idx"].dtype, meta["idx"][:3])

    model = nn.Sequential(nn.Linear(1, 8), nn.SiLU(), nn.Linear(8, 1)).to(device)
    rng = np.random.default_rng(18)
    for p in model.parameters():
        p.data = torch.from_numpy(rng.standard_normal(p.shape).astype(np.float32))
    opt = optim.Adagrad(model.parameters(), lr=0.1)
    losses = []
    for epoch in range(4):
        for i, (x, m) in enumerate(loader):
            x, y = x.to(device), m["y"].to(device).unsqueeze(1).float()
            loss = nn.functional.smooth_l1_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    print(model[0].weight.grad is not None, model[0].weight.device)
    result = {"losses": losses, "params": list(model.parameters())}
""")

program("conv_autoencoder_vae", rtol=1e-4, atol=1e-5)("""
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Sequential(nn.Conv2d(1, 4, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
                                     nn.Flatten())
            self.mu = nn.Linear(4 * 4 * 4, 2)
            self.logvar = nn.Linear(4 * 4 * 4, 2)
            self.dec_in = nn.Linear(2, 4 * 4 * 4)
            self.dec = nn.Sequential(
                nn.Unflatten(1, (4, 4, 4)),
                nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1), nn.ReLU(),
                nn.Upsample(scale_factor=1, mode="nearest"), nn.Conv2d(2, 1, 1), nn.Sigmoid())

        def forward(self, x, eps):
            h = self.enc(x)
            mu, logvar = self.mu(h), self.logvar(h)
            z = mu + eps * torch.exp(0.5 * logvar)
            return self.dec(self.dec_in(z)), mu, logvar

    rng = np.random.default_rng(19)
    model = VAE()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(p.shape) * 0.3, dtype=torch.float32))
    x = torch.tensor(rng.uniform(size=(3, 1, 8, 8)), dtype=torch.float32)
    eps = torch.tensor(rng.standard_normal((3, 2)), dtype=torch.float32)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(3):
        recon, mu, logvar = model(x, eps)
        rec = F.binary_cross_entropy(recon, x, reduction="sum")
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        loss = (rec + kld) / x.size(0)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(recon.shape, mu.shape)
    print(model.dec)
    up = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
    result = {"loss": loss.item(), "recon": recon, "up": up,
              "grads": [p.grad for p in model.parameters()]}
""")

program("old_style_variable_and_data")("""
    import numpy as np
    import torch
    from torch.autograd import Variable

    rng = np.random.default_rng(20)
    x = Variable(torch.from_numpy(rng.standard_normal((10, 3)).astype(np.float32)))
    y = Variable(torch.from_numpy(rng.standard_normal((10, 1)).astype(np.float32)))
    w = Variable(torch.zeros(3, 1), requires_grad=True)
    b = Variable(torch.zeros(1), requires_grad=True)
    for it in range(20):
        loss = (x.mm(w).add(b) - y).pow(2).sum()
        loss.backward()
        w.data -= 0.01 * w.grad.data
        b.data.sub_(0.01 * b.grad.data)
        w.grad.data.zero_()
        b.grad.data.zero_()
    print(type(w).__name__, w.requires_grad, w.data.requires_grad, loss.data.item() > 0)
    print(w.data.numpy().shape, x.data.size(), b.grad)
    result = {"w": w, "b": b, "loss": loss.item()}
""")

program("in_place_updates_and_masks")("""
    import torch

    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    x[x > 8] = -1
    x[:, 0] += 100
    x[1] = torch.tensor([7.0, 7.0, 7.0, 7.0])
    x[0, 1:3] *= 2
    x.clamp_(max=50).add_(1).mul_(0.5)
    idx = torch.tensor([2, 0])
    x[idx, idx] = 0
    print(x)
    y = torch.zeros(5)
    y.index_add_(0, torch.tensor([0, 2, 2]), torch.tensor([1.0, 2.0, 3.0]))
    y.scatter_(0, torch.tensor([4]), 9.0)
    y.masked_fill_(y == 0, -5)
    print(y, y.sum().item())
    w = torch.ones(3, requires_grad=True)
    h = w * 2
    h[1] = 0
    h.exp().sum().backward()
    print(w.grad, h.grad_fn.name() if hasattr(h.grad_fn, "name") else None)
    z = torch.zeros(2, 2)
    z.fill_diagonal_(3)
    z.t_()
    print(z, z.is_contiguous())
    try:
        leaf = torch.ones(2, requires_grad=True)
        leaf.add_(1)
    except RuntimeError as e:
        print("RuntimeError:", e)
    result = {"x": x, "y": y, "wg": w.grad}
""")

program("error_messages_users_see")("""
    import torch
    import torch.nn as nn

    def show(fn):
        try:
            fn()
        except Exception as e:
            print(type(e).__name__ + ":", str(e).splitlines()[0])

    a, b = torch.ones(2, 3), torch.ones(4, 5)
    show(lambda: a @ b)
    show(lambda: a + b)
    show(lambda: torch.cat([a, b]))
    show(lambda: nn.Linear(3, 2)(b))
    show(lambda: a.view(5))
    show(lambda: torch.ones(2, requires_grad=True).numpy())
    show(lambda: torch.ones(2, requires_grad=True).sum().backward() or torch.ones(2).backward())
    show(lambda: torch.tensor([1.0, 2.0], requires_grad=True).item())
    show(lambda: nn.CrossEntropyLoss()(torch.ones(2, 3), torch.tensor([0, 5])))
    show(lambda: a[5])
    show(lambda: a.transpose(0, 2))
    show(lambda: torch.zeros(3).reshape(2, 2))
    show(lambda: torch.tensor([[1, 2], [3]]))
    show(lambda: nn.Conv2d(3, 4, 3)(torch.ones(1, 2, 5, 5)))
    show(lambda: torch.optim.SGD([], lr=0.1))
    show(lambda: torch.ones(3).sum(dim=1))
    x = torch.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    show(lambda: y.backward())
    result = {}
""")

program("module_containers_buffers_dtype_conversion", rtol=1e-8, atol=1e-10)("""
    import numpy as np
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(3, 3) for _ in range(2)])
            self.heads = nn.ModuleDict({"a": nn.Linear(3, 1), "b": nn.Linear(3, 2)})
            self.scales = nn.ParameterList([nn.Parameter(torch.ones(3)) for _ in range(2)])
            self.register_buffer("offset", torch.full((3,), 0.5))
            self.temperature = nn.Parameter(torch.tensor(2.0))

        def forward(self, x):
            for blk, s in zip(self.blocks, self.scales):
                x = torch.relu(blk(x)) * s + self.offset
            return {k: h(x) / self.temperature for k, h in self.heads.items()}

    net = Net().double()
    rng = np.random.default_rng(21)
    sd = net.state_dict()
    new_sd = {k: torch.from_numpy(rng.standard_normal(v.shape)) if v.is_floating_point() else v
              for k, v in sd.items()}
    net.load_state_dict(new_sd)
    print(list(sd.keys()))
    print([n for n, _ in net.named_buffers()], len(list(net.parameters())), len(list(net.children())))
    print(net.offset.dtype, net.temperature.dtype, net.temperature.requires_grad)
    x = torch.from_numpy(rng.standard_normal((4, 3)))
    out = net(x)
    (out["a"].sum() + out["b"].pow(2).mean()).backward()
    grads = {n: p.grad for n, p in net.named_parameters()}
    print(sorted(out), out["b"].shape)
    net.float()
    print(net.heads["a"].weight.dtype, net.offset.dtype)
    net.requires_grad_(False)
    print(any(p.requires_grad for p in net.parameters()))
    net.zero_grad()
    print(net.temperature.grad)
    print(net)
    result = {"a": out["a"], "b": out["b"], "grads": grads}
""")

program("sklearn_style_pipeline_with_metrics", rtol=1e-4, atol=1e-5)("""
    import numpy as np
    import torch
    import torch.nn.functional as F

    rng = np.random.default_rng(22)
    X = rng.standard_normal((120, 5))
    y = (X[:, 0] + X[:, 1] ** 2 > 0.5).astype(np.int64)
    perm = rng.permutation(len(X))
    train_idx, test_idx = perm[:90], perm[90:]
    mean, std = X[train_idx].mean(0), X[train_idx].std(0)
    Xt = torch.tensor((X - mean) / std, dtype=torch.float32)
    yt = torch.tensor(y)
    W1 = torch.tensor(rng.standard_normal((5, 16)) * 0.3, dtype=torch.float32, requires_grad=True)
    b1 = torch.zeros(16, requires_grad=True)
    W2 = torch.tensor(rng.standard_normal((16, 2)) * 0.3, dtype=torch.float32, requires_grad=True)
    b2 = torch.zeros(2, requires_grad=True)
    params = [W1, b1, W2, b2]
    opt = torch.optim.Adam(params, lr=0.05, weight_decay=1e-4, amsgrad=True)

    def forward(x):
        return F.elu(x @ W1 + b1) @ W2 + b2

    tr, te = torch.from_numpy(train_idx), torch.from_numpy(test_idx)
    for epoch in range(30):
        opt.zero_grad()
        loss = F.cross_entropy(forward(Xt[tr]), yt[tr])
        loss.backward()
        opt.step()
    with torch.no_grad():
        pred = forward(Xt[te]).argmax(1)
        yte = yt[te]
        tp = ((pred == 1) & (yte == 1)).sum().item()
        fp = ((pred == 1) & (yte == 0)).sum().item()
        fn = ((pred == 0) & (yte == 1)).sum().item()
        acc = (pred == yte).float().mean().item()
        confusion = torch.zeros(2, 2, dtype=torch.long)
        for t, p in zip(yte.tolist(), pred.tolist()):
            confusion[t, p] += 1
    print(f"loss={loss.item():.4f} acc={acc:.3f} tp={tp} fp={fp} fn={fn}")
    print(confusion)
    result = {"loss": loss.item(), "acc": acc, "W1": W1, "W2": W2, "b2": b2}
""")


program("optimizer_repr_plateau_lbfgs_closure", rtol=1e-6, atol=1e-7)("""
    import numpy as np
    import torch
    import torch.nn as nn

    rng = np.random.default_rng(23)
    x = torch.linspace(-1, 1, 30)
    y = torch.tensor(1.0 - 2.0 * np.linspace(-1, 1, 30) ** 2 + 0.5 * np.linspace(-1, 1, 30) ** 3,
                     dtype=torch.float32)
    feats = torch.stack([x ** i for i in range(4)], dim=1)
    coef = torch.zeros(4, requires_grad=True)
    opt = torch.optim.LBFGS([coef], lr=1, max_iter=20, history_size=5)

    def closure():
        opt.zero_grad()
        loss = ((feats @ coef - y) ** 2).mean()
        loss.backward()
        return loss

    for _ in range(3):
        final = opt.step(closure)
    print(coef.detach().round(decimals=3))

    model = nn.Linear(3, 1)
    sgd = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    print(sgd)
    print(torch.optim.Adam(model.parameters(), lr=1e-3))
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(sgd, mode="min", factor=0.5, patience=1)
    lrs = []
    for val_loss in [1.0, 0.9, 0.95, 0.97, 0.99, 0.8, 0.85, 0.86]:
        plateau.step(val_loss)
        lrs.append(sgd.param_groups[0]["lr"])
    print(lrs)
    vec = nn.utils.parameters_to_vector(model.parameters())
    nn.utils.vector_to_parameters(torch.arange(4.0), model.parameters())
    print(vec.shape, model.weight, model.bias)
    result = {"coef": coef, "final": final.item(), "lrs": lrs}
""")

program("attention_from_scratch_and_contrastive", rtol=1e-5, atol=1e-6)("""
    import math
    import numpy as np
    import torch
    import torch.nn.functional as F

    rng = np.random.default_rng(24)
    B, H, T, D = 2, 2, 4, 3
    q, k, v = (torch.tensor(rng.standard_normal((B, H, T, D)), dtype=torch.float32,
                            requires_grad=True) for _ in range(3))
    mask = torch.tril(torch.ones(T, T)).view(1, 1, T, T)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)
    scores = scores.masked_fill(mask == 0, float("-inf"))
    attn = F.softmax(scores, dim=-1)
    out = attn @ v
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    print(torch.allclose(out, ref, atol=1e-6), attn[0, 0])
    e = torch.einsum("bhqd,bhkd->bhqk", q, k)
    out.sum().backward()

    z = torch.tensor(rng.standard_normal((6, 5)), dtype=torch.float32, requires_grad=True)
    zn = F.normalize(z, dim=1)
    sim = zn @ zn.T / 0.5
    sim = sim.masked_fill(torch.eye(6, dtype=torch.bool), -1e9)
    targets = torch.arange(6).roll(3)
    nce = F.cross_entropy(sim, targets)
    cos = F.cosine_similarity(z[:3], z[3:], dim=-1)
    nce.backward()
    pos = torch.nonzero(mask[0, 0], as_tuple=True)
    rows, cols = torch.where(mask[0, 0] > 0)
    print(nce, cos.shape, pos[0].tolist(), cols.tolist())
    result = {"out": out, "e": e, "qg": q.grad, "kg": k.grad, "vg": v.grad, "nce": nce,
              "zg": z.grad, "cos": cos}
""")

program("padded_sequences_gru_classifier", rtol=1e-4, atol=1e-5)("""
    import numpy as np
    import torch
    import torch.nn as nn
    from torch.nn.utils.rnn import pad_sequence

    rng = np.random.default_rng(25)
    seqs = [torch.tensor(rng.integers(1, 12, n)) for n in (5, 3, 4)]
    lengths = torch.tensor([len(s) for s in seqs])
    batch = pad_sequence(seqs, batch_first=True, padding_value=0)
    print(batch, lengths)

    emb = nn.Embedding(12, 4, padding_idx=0)
    rnn = nn.GRU(4, 5, batch_first=True, bidirectional=True)
    fc = nn.Linear(10, 2)
    mods = nn.ModuleList([emb, rnn, fc])
    with torch.no_grad():
        for p in mods.parameters():
            p.copy_(torch.tensor(rng.uniform(-0.5, 0.5, p.shape), dtype=torch.float32))
    out, h = rnn(emb(batch))
    last = out[torch.arange(3), lengths - 1]
    feat = torch.cat([h[0], h[1]], dim=1)
    logits = fc(feat)
    loss = nn.functional.cross_entropy(logits, torch.tensor([0, 1, 1]))
    loss.backward()
    print(out.shape, h.shape, last.shape)
    result = {"out": out, "h": h, "loss": loss.item(), "grads": [p.grad for p in mods.parameters()]}
""")

program("printoptions_inference_mode_numpy_bridge")("""
    import numpy as np
    import torch

    x = torch.tensor([[1.123456, 22.5], [333.25, -0.001]])
    torch.set_printoptions(precision=2)
    print(x)
    torch.set_printoptions(sci_mode=True)
    print(x)
    torch.set_printoptions(profile="default")
    print(x)
    torch.set_printoptions(threshold=5, edgeitems=2)
    print(torch.arange(10.0))
    torch.set_printoptions(profile="default")
    print(torch.arange(10.0))

    @torch.no_grad()
    def predict(w, inp):
        return inp @ w

    @torch.inference_mode()
    def predict2(w, inp):
        return (inp @ w).relu()

    w = torch.tensor([[1.0], [-1.0]], requires_grad=True)
    p1, p2 = predict(w, x), predict2(w, x)
    print(p1.requires_grad, p2.requires_grad, p1.squeeze(1))
    arr = (x * 2).detach().cpu().numpy()
    print(type(arr).__name__, arr.dtype, arr.shape)
    with torch.set_grad_enabled(False):
        z = w * 2
    print(z.requires_grad, torch.is_grad_enabled())
    result = {"arr": arr, "p1": p1, "p2": p2}
""")


program("deepcopy_best_model_grad_accumulation", rtol=1e-5, atol=1e-6)("""
    import copy
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    rng = np.random.default_rng(26)
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(inplace=True), nn.Linear(6, 3))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(p.shape) * 0.5, dtype=torch.float32))
    print(model[0].weight)
    X = torch.tensor(rng.standard_normal((16, 4)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 3, 16))
    onehot = torch.zeros(16, 3).scatter_(1, y.unsqueeze(1), 1.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    best, best_state, best_model = float("inf"), None, None
    accum = 4
    history = []
    for epoch in range(4):
        losses = []
        opt.zero_grad()
        for i, (xb, yb) in enumerate(zip(X.split(4), onehot.chunk(4))):
            loss = F.binary_cross_entropy_with_logits(model(xb), yb) / accum
            loss.backward()
            losses.append(loss)
            if (i + 1) % accum == 0:
                opt.step()
                opt.zero_grad()
        epoch_loss = sum(losses) / len(losses)
        history.append(float(epoch_loss))
        if epoch_loss < best:
            best = epoch_loss.item()
            best_state = copy.deepcopy(model.state_dict())
            best_model = copy.deepcopy(model)
    print(model[0].weight.grad, type(epoch_loss).__name__, epoch_loss.requires_grad)
    print(best_model is not model, best_model[0].weight is not model[0].weight)
    fresh = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
    fresh.load_state_dict(best_state)
    with torch.no_grad():
        agree = (fresh(X).argmax(-1) == best_model(X).argmax(-1)).all().item()
        acc = (model(X).argmax(-1) == y).float().mean().item()
    print(agree, round(best, 4), X.masked_select(X > 1.5).shape)
    print(dict(model.named_children()).keys(), len(list(model.modules())))
    print(model.state_dict()["2.bias"])
    result = {"history": history, "acc": acc, "best": best,
              "w": [p.detach() for p in best_model.parameters()]}
""")

program("numpy_scalars_and_python_interop", rtol=1e-8, atol=1e-10)("""
    import math
    import numpy as np
    import torch

    a = torch.tensor(np.float32(1.5))
    b = torch.tensor([np.int64(1), np.int64(2)])
    c = torch.tensor(np.arange(4.0))
    d = torch.tensor([[np.float64(0.5)] * 2] * 2)
    print(a, a.dtype, b.dtype, c.dtype, d.dtype)
    e = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    print(e * np.float64(2.0), type(e * np.float64(2.0)).__name__)
    print(max(torch.tensor(3), torch.tensor(5)), min([torch.tensor(2.0), torch.tensor(-1.0)]))
    print(sum(torch.ones(3)), abs(torch.tensor(-2)), -torch.tensor([1, -1]), round(torch.tensor(2.567).item(), 2))
    print(math.sqrt(torch.tensor(16.0)), int(torch.tensor([7])), torch.tensor(3) ** 2, 2 ** torch.tensor([1, 2]))
    print(len(torch.zeros(4, 2)), list(torch.arange(3)), [t.item() for t in torch.arange(3)])
    print(torch.tensor(5) // 2, torch.tensor(-5) % 3, torch.tensor(7.5) // 2, divmod(7, 2))
    print(1 / torch.tensor([2.0, 4.0]), 10 - torch.tensor([1, 2]), torch.tensor([1, 2]) == 1)
    print(np.array(torch.tensor([1.0, 2.0])), np.asarray(torch.arange(3)).dtype)
    x = np.linspace(0, 1, 5)
    print(torch.from_numpy(x).sum().item() == x.sum(), torch.tensor(x).dtype, torch.as_tensor(x).dtype)
    print(torch.tensor(True) & torch.tensor(False), torch.tensor([1, 2]) | 4, ~torch.tensor([True]))
    print(torch.tensor(2.5).item().__class__.__name__, torch.tensor([3]).tolist(), 3 in torch.tensor([1, 3]))
    print(torch.tensor(float("nan")).isnan().item(), torch.tensor([1e20], dtype=torch.float32).half())
    idx = np.array([2, 0])
    t = torch.arange(10, 15)
    print(t[idx], t[torch.tensor(idx)], t[[1, 1, 3]], t[np.int64(2)], t[t > 12])
    result = {"e": e * np.float64(2.0), "x": torch.from_numpy(x).cumsum(0)}
""")


program("resnet_block_ema_onecycle", rtol=1e-4, atol=1e-5)("""
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, cin, cout, stride=1):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                                nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 4, 3, padding=1)
            self.layer = nn.Sequential(BasicBlock(4, 4), BasicBlock(4, 8, stride=2))
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(8, 5)

        def forward(self, x):
            x = self.layer(F.relu(self.stem(x)))
            return self.fc(torch.flatten(self.pool(x), 1))

    rng = np.random.default_rng(27)
    net = Net()
    with torch.no_grad():
        for n, p in net.named_parameters():
            if p.dim() > 1:
                p.copy_(torch.tensor(rng.standard_normal(p.shape) * 0.3, dtype=torch.float32))
        for m in net.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)) and m.bias is not None:
                nn.init.zeros_(m.bias)
    ema = {k: v.detach().clone() for k, v in net.state_dict().items()}
    x = torch.tensor(rng.standard_normal((4, 3, 8, 8)), dtype=torch.float32)
    y = torch.tensor([0, 1, 4, 2])
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=6)
    lrs = []
    for step in range(6):
        loss = F.cross_entropy(net(x), y, weight=torch.tensor([1.0, 2.0, 1.0, 0.5, 1.0]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
        with torch.no_grad():
            for k, v in net.state_dict().items():
                if v.dtype.is_floating_point:
                    ema[k].mul_(0.9).add_(v, alpha=0.1)
                else:
                    ema[k].copy_(v)
    net.eval()
    with torch.no_grad():
        logits = net(x)
    print(ema["layer.1.bn2.num_batches_tracked"], net.layer[1].downsample)
    result = {"loss": loss.item(), "lrs": lrs, "logits": logits,
              "ema": [ema[k] for k in sorted(ema)]}
""")

program("text_cnn_distillation_weight_tying", rtol=1e-5, atol=1e-6)("""
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class TextCNN(nn.Module):
        def __init__(self, vocab=15, dim=6, n_filters=4, sizes=(2, 3), classes=3):
            super().__init__()
            self.embedding = nn.Embedding(vocab, dim)
            self.convs = nn.ModuleList([nn.Conv1d(dim, n_filters, k) for k in sizes])
            self.dropout = nn.Dropout(0.5)
            self.fc = nn.Linear(n_filters * len(sizes), classes)

        def extra_repr(self):
            return "tiny=True"

        def forward(self, tokens):
            x = self.embedding(tokens).permute(0, 2, 1)
            pooled = [F.max_pool1d(F.gelu(c(x)), c(x).size(2)).squeeze(2) for c in self.convs]
            return self.fc(self.dropout(torch.cat(pooled, dim=1)))

    class TiedLM(nn.Module):
        def __init__(self, vocab=15, dim=6):
            super().__init__()
            self.enc = nn.Embedding(vocab, dim)
            self.dec = nn.Linear(dim, vocab, bias=False)
            self.dec.weight = self.enc.weight

        def forward(self, t):
            return self.dec(F.silu(self.enc(t)))

    rng = np.random.default_rng(28)
    student, teacher = TextCNN(), TextCNN(dim=6, n_filters=4)
    for m in (student, teacher):
        with torch.no_grad():
            for p in m.parameters():
                p.copy_(torch.tensor(rng.standard_normal(p.shape) * 0.4, dtype=torch.float32))
    teacher.eval()
    tokens = torch.tensor(rng.integers(0, 15, (5, 7)))
    labels = torch.tensor([0, 1, 2, 1, -100])
    T = 2.0
    student.eval()
    s_logits = student(tokens)
    with torch.no_grad():
        t_logits = teacher(tokens)
    kd = F.kl_div(F.log_softmax(s_logits / T, dim=1), F.softmax(t_logits / T, dim=1),
                  reduction="batchmean") * T * T
    ce = nn.CrossEntropyLoss(ignore_index=-100, label_smoothing=0.05)(s_logits, labels)
    loss = 0.7 * kd + 0.3 * ce
    loss.backward()
    print(student)

    lm = TiedLM()
    with torch.no_grad():
        lm.enc.weight.copy_(torch.tensor(rng.standard_normal((15, 6)), dtype=torch.float32))
    print(len(list(lm.parameters())), list(lm.state_dict().keys()), lm.dec.weight is lm.enc.weight)
    nll = F.cross_entropy(lm(tokens[:, :-1]).reshape(-1, 15), tokens[:, 1:].reshape(-1))
    nll.backward()
    ppl = torch.exp(nll)
    result = {"kd": kd, "ce": ce, "grads": [p.grad for p in student.parameters()],
              "tied_grad": lm.enc.weight.grad, "ppl": ppl}
""")


program("gan_two_optimizers_char_rnn_greedy", rtol=1e-4, atol=1e-5)("""
    import io
    import numpy as np
    import torch
    import torch.nn as nn

    rng = np.random.default_rng(29)

    def init(module, scale):
        with torch.no_grad():
            for p in module.parameters():
                p.copy_(torch.tensor(rng.standard_normal(p.shape) * scale, dtype=torch.float32))
        return module

    G = init(nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2), nn.Linear(8, 2)), 0.5)
    D = init(nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid()), 0.5)
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
    bce = nn.BCELoss()
    real = torch.tensor(rng.standard_normal((16, 2)) + 3.0, dtype=torch.float32)
    noise = torch.tensor(rng.standard_normal((16, 2)), dtype=torch.float32)
    ones, zeros = torch.ones(16, 1), torch.zeros(16, 1)
    for it in range(5):
        fake = G(noise)
        d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = bce(D(fake), ones)
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
    print(f"d={d_loss.item():.4f} g={g_loss.item():.4f}")
    buf = io.BytesIO()
    torch.save({"G": G.state_dict(), "D": D.state_dict(), "step": 5}, buf)
    buf.seek(0)
    state = torch.load(buf, map_location="cpu", weights_only=True)
    G.load_state_dict(state["G"], strict=True)

    chars = sorted(set("hello world"))
    stoi = {c: i for i, c in enumerate(chars)}
    itos = {i: c for c, i in stoi.items()}
    data = torch.tensor([stoi[c] for c in "hello world"], dtype=torch.long)

    class CharRNN(nn.Module):
        def __init__(self, vocab, hidden):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.rnn = nn.RNN(hidden, hidden, batch_first=True)
            self.out = nn.Linear(hidden, vocab)

        def forward(self, x, h=None):
            y, h = self.rnn(self.embed(x), h)
            return self.out(y), h

    model = init(CharRNN(len(chars), 6), 0.4)
    opt = torch.optim.RMSprop(model.parameters(), lr=0.02, alpha=0.9, momentum=0.1)
    x, y = data[:-1].unsqueeze(0), data[1:].unsqueeze(0)
    for step in range(8):
        logits, _ = model(x)
        loss = nn.functional.cross_entropy(logits.view(-1, len(chars)), y.view(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    model.eval()
    with torch.no_grad():
        idx, h, text = torch.tensor([[stoi["h"]]]), None, "h"
        for _ in range(6):
            logits, h = model(idx, h)
            idx = logits[:, -1].argmax(-1, keepdim=True)
            text += itos[idx.item()]
    print(repr(text), h.shape, state["step"])
    result = {"d": d_loss.item(), "g": g_loss.item(), "loss": loss.item(), "text": text,
              "G": [p.detach() for p in G.parameters()]}
""")


# ------------------------------------------------------------------------------------ harness

def _swap_torch(module):
    """Bind `torch` and every `torch.*` submodule in sys.modules to `module`'s tree."""
    saved = {k: v for k, v in sys.modules.items() if k == "torch" or k.startswith("torch.")}
    if module is not ndgrad:
        return saved, None
    for k in saved:
        del sys.modules[k]
    prefix = "ndgrad."
    for k, v in list(sys.modules.items()):
        if k == "ndgrad":
            sys.modules["torch"] = v
        elif k.startswith(prefix):
            sys.modules["torch." + k[len(prefix):]] = v
    return saved, True


def _restore(saved, swapped):
    if not swapped:
        return
    for k in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
        del sys.modules[k]
    sys.modules.update(saved)


def _run(src, module):
    saved, swapped = _swap_torch(module)
    out = io.StringIO()
    env = {"__name__": "__program__", "torch": module}
    # a program may set these process-wide settings: each program starts afresh
    default_dtype = module.get_default_dtype()
    precision = module.get_float32_matmul_precision()
    cudnn = module.backends.cudnn
    flags = cudnn.benchmark, cudnn.deterministic
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(src, "<program>", "exec"), env)
    finally:
        module.set_default_dtype(default_dtype)
        module.set_float32_matmul_precision(precision)
        cudnn.benchmark, cudnn.deterministic = flags
        _restore(saved, swapped)
    return env["result"], out.getvalue()


def _to_py(v):
    if hasattr(v, "detach") and hasattr(v, "numpy"):
        return np.asarray(v.detach().numpy())
    if isinstance(v, dict):
        return {k: _to_py(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_to_py(x) for x in v]
    return v


def _compare(ref, got, rtol, atol, path="result"):
    if isinstance(ref, dict):
        assert isinstance(got, dict) and sorted(ref) == sorted(got), path
        for k in ref:
            _compare(ref[k], got[k], rtol, atol, f"{path}[{k!r}]")
    elif isinstance(ref, list):
        assert isinstance(got, list) and len(ref) == len(got), path
        for n, (r, g) in enumerate(zip(ref, got)):
            _compare(r, g, rtol, atol, f"{path}[{n}]")
    elif ref is None:
        assert got is None, path
    elif isinstance(ref, (bool, str)):
        assert ref == got, path
    else:
        r, g = np.asarray(ref), np.asarray(got)
        assert r.shape == g.shape and r.dtype == g.dtype, (path, r.shape, g.shape, r.dtype, g.dtype)
        np.testing.assert_allclose(g, r, rtol=rtol, atol=atol, err_msg=path)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_runs_unchanged(name):
    torch = pytest.importorskip("torch")
    src, rtol, atol, compare_stdout = PROGRAMS[name]
    ref, ref_out = _run(src, torch)
    got, got_out = _run(src, ndgrad)
    assert sys.modules.get("torch") is torch
    if compare_stdout:
        assert got_out == ref_out
    _compare(_to_py(ref), _to_py(got), rtol, atol)


def test_harness_detects_a_different_result():
    torch = pytest.importorskip("torch")
    src = "import torch\nresult = {'x': torch.tensor([1.0, 2.0]) * (2 if torch is REAL else 3)}\n"
    ref, _ = _run(src.replace("REAL", "torch"), torch)
    got, _ = _run(src.replace("REAL", "None"), ndgrad)
    with pytest.raises(AssertionError):
        _compare(_to_py(ref), _to_py(got), 1e-5, 1e-6)
    src = "import torch, torch.nn\nprint(torch.__name__, torch.nn.__name__)\nresult = {}\n"
    assert _run(src, torch)[1] == "torch torch.nn\n"
    assert _run(src, ndgrad)[1] == "ndgrad ndgrad.nn\n"    # the swap reached the submodules
    assert sys.modules["torch"] is torch and sys.modules["torch.nn"] is torch.nn
