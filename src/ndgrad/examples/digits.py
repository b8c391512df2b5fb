"""Train a small CNN (or an MLP) on scikit-learn's bundled 8x8 handwritten digits.

    python -m ndgrad.examples.digits                  # CNN, 10 epochs, >= 97 % test accuracy
    python -m ndgrad.examples.digits --model mlp --epochs 20 --out runs/

Real data, no download: `sklearn.datasets.load_digits` (1797 images, 10 classes). The script is
written against ndgrad's PyTorch API only (swap the import for `torch` and it runs unchanged):
Dataset/DataLoader, nn.Sequential, Adam, CrossEntropyLoss, save/load. It prints the training
loss and test accuracy per epoch, saves a checkpoint, reloads it into a fresh model to check the
accuracy, and writes a PNG of the curves. The same --seed gives the same printed numbers.
Needs the extra packages: pip install "ndgrad[examples]" (scikit-learn, matplotlib, tqdm).
"""
import argparse
import contextlib
import os
import sys

import ndgrad as torch
from ndgrad import nn
from ndgrad.utils.data import DataLoader, TensorDataset, random_split

MISSING = ("The digits demo needs scikit-learn, matplotlib and tqdm ({}).\n"
           "Install them with:  pip install \"ndgrad[examples]\"")


def _require():
    try:
        import sklearn.datasets  # noqa: F401
        import matplotlib  # noqa: F401
        import tqdm  # noqa: F401
    except ImportError as e:
        raise SystemExit(MISSING.format(e)) from None


def _one_blas_thread():
    """Small matmuls run faster on one BLAS thread: multi-threaded OpenBLAS spends more time
    synchronising than computing at these sizes (the role of torch.set_num_threads(1)).
    threadpoolctl comes with scikit-learn; without it this is a no-op."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def build_model(kind):
    """The CNN (about 22k parameters) or the MLP, with PyTorch's default initialisation."""
    if kind == "cnn":
        return nn.Sequential(
            nn.Conv2d(1, 32, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 32x4x4
            nn.Conv2d(32, 64, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 64x2x2
            nn.Flatten(), nn.Dropout(0.25), nn.Linear(64 * 2 * 2, 10))
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64),
                             nn.ReLU(), nn.Linear(64, 10))
    raise ValueError(f"unknown model {kind!r}")


def load_data(seed):
    """Digits as float32 images in [0, 1], split 80/20 with a seeded generator."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    images = torch.tensor(digits.images / 16.0, dtype=torch.float32).unsqueeze(1)  # N,1,8,8
    labels = torch.tensor(digits.target, dtype=torch.int64)
    dataset = TensorDataset(images, labels)
    return random_split(dataset, [0.8, 0.2], generator=torch.Generator().manual_seed(seed))


def evaluate(model, loader):
    """Accuracy of `model` on `loader` (eval mode, no graph)."""
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += int((model(x).argmax(dim=1) == y).sum())
            total += len(y)
    model.train()
    return correct / total


def plot(history, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    epochs = range(1, len(history["loss"]) + 1)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    ax1.plot(epochs, history["loss"], marker="o")
    ax1.set(xlabel="epoch", ylabel="training loss", title="loss")
    ax2.plot(epochs, [100 * a for a in history["acc"]], marker="o", color="tab:green")
    ax2.set(xlabel="epoch", ylabel="test accuracy (%)", title="test accuracy")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m ndgrad.examples.digits", description=__doc__
                                .split("\n")[0])
    p.add_argument("--model", choices=["cnn", "mlp"], default="cnn")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="out", help="folder for the checkpoint and plot")
    p.add_argument("--no-progress", action="store_true", help="hide the tqdm progress bars")
    args = p.parse_args(argv)
    if args.epochs < 1 or args.batch_size < 1 or not args.lr > 0:
        p.error("--epochs and --batch-size must be at least 1 and --lr positive")
    return args


def main(argv=None):
    args = parse_args(argv)
    _require()
    with _one_blas_thread():
        return _run(args)


def _run(args):
    from tqdm import tqdm

    torch.manual_seed(args.seed)
    train_set, test_set = load_data(args.seed)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              generator=torch.Generator().manual_seed(args.seed))
    test_loader = DataLoader(test_set, batch_size=256)
    model = build_model(args.model)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"digits: {len(train_set)} train / {len(test_set)} test images, "
          f"{args.model} with {n_params} parameters, seed {args.seed}")

    history = {"loss": [], "acc": []}
    for epoch in range(1, args.epochs + 1):
        total, seen = 0.0, 0
        bar = tqdm(train_loader, desc=f"epoch {epoch}/{args.epochs}", leave=False,
                   disable=args.no_progress, file=sys.stderr)
        for x, y in bar:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            value = loss.item()
            total += value * len(y)
            seen += len(y)
            bar.set_postfix(loss=f"{value:.4f}")
        scheduler.step()
        acc = evaluate(model, test_loader)
        history["loss"].append(total / seen)
        history["acc"].append(acc)
        print(f"epoch {epoch:3d}  loss {total / seen:.4f}  test accuracy {100 * acc:.2f}%")

    os.makedirs(args.out, exist_ok=True)
    ckpt = os.path.join(args.out, f"digits_{args.model}.pt")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "epoch": args.epochs, "history": history, "args": vars(args)}, ckpt)
    fresh = build_model(args.model)
    state = torch.load(ckpt)          # weights_only=True: loading cannot run code
    fresh.load_state_dict(state["model"])
    reloaded = evaluate(fresh, test_loader)
    status = "matches" if reloaded == history["acc"][-1] else "MISMATCH"
    print(f"saved {ckpt}; reloaded into a fresh model: test accuracy {100 * reloaded:.2f}% "
          f"({status})")
    png = os.path.join(args.out, f"digits_{args.model}_curves.png")
    plot(history, png, f"ndgrad {args.model} on sklearn digits")
    print(f"wrote {png}")
    if status != "matches":
        raise SystemExit("reloaded checkpoint does not reproduce the accuracy")
    return {"history": history, "reloaded_accuracy": reloaded, "checkpoint": ckpt, "plot": png}


if __name__ == "__main__":
    main()
