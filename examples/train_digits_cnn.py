"""Train a small convolutional network on scikit-learn's digits with retrograd, end to end.

The data set (1,797 8x8 images of handwritten digits) ships inside scikit-learn, so nothing is
downloaded. The network is two 3x3 convolutions, each followed by batch normalisation and a
ReLU, a 2x2 max-pool, dropout and a linear layer; Adam with a cosine learning-rate decay
trains it. The defaults reach about 99% test accuracy in well under a minute on one CPU core.

    python examples/train_digits_cnn.py                      # full run, loss/accuracy PNG
    python examples/train_digits_cnn.py --device cuda        # with retrograd-cuda installed
    python examples/train_digits_cnn.py --epochs 1 --no-plot # a quick check
    python examples/train_digits_cnn.py --save cnn.safetensors   # rg.save of the state_dict

The saved file is a safetensors state dict with PyTorch's names, so the same ``nn.Sequential``
written with ``torch.nn`` loads it (``safetensors.torch.load_file``). Needs ``scikit-learn``
(data), ``matplotlib`` (the plot; skip it with ``--no-plot``) and ``rich`` or ``tqdm`` for the
progress bar (without either it prints a line now and then).
"""

from __future__ import annotations

import os

# One BLAS thread unless the user set a thread count, set before NumPy is imported (the BLAS
# reads these once, when it loads). Measured: the MLP digits example took 59 s with the default
# threads on a busy two-core machine and 5.5 s with one -- matrices this small gain nothing
# from threads and lose a great deal to contention for the cores.
_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
if not any(name in os.environ for name in _THREAD_VARIABLES):
    os.environ.update(dict.fromkeys(_THREAD_VARIABLES, "1"))

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import retrograd as rg  # noqa: E402
from retrograd import nn  # noqa: E402
from retrograd.nn import functional as F  # noqa: E402
from retrograd.optim import lr_scheduler  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # training_support.py beside it
from training_support import accuracy, check_device, progress_bar  # noqa: E402


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line; the defaults are the run that reaches about 99%."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda, or any backend")
    parser.add_argument("--epochs", type=int, default=10, help="passes over the training set")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3, help="initial Adam learning rate")
    parser.add_argument("--channels", type=int, default=32, help="filters of the first conv")
    parser.add_argument("--dropout", type=float, default=0.3, help="before the linear layer")
    parser.add_argument("--seed", type=int, default=0, help="random seed of split, init, order")
    parser.add_argument(
        "--plot",
        type=Path,
        default=Path("digits_cnn.png"),
        help="where to save the loss and accuracy curves",
    )
    parser.add_argument("--no-plot", action="store_true", help="do not draw the curves")
    parser.add_argument("--save", type=Path, default=None, help="write the state_dict here")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--min-accuracy",
        type=float,
        default=None,
        help="exit with status 1 if the test accuracy ends below this fraction (e.g. 0.98)",
    )
    args = parser.parse_args(argv)
    for name in ("epochs", "batch_size", "channels"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if not 0.0 <= args.dropout < 1.0:
        parser.error(f"--dropout must be in [0, 1), got {args.dropout}")
    return args


def load_digits_split(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Train/test split (80/20, stratified) of the images as ``(N, 1, 8, 8)`` float32,
    standardised with the training set's mean and spread only, so nothing about the test set
    leaks into training."""
    try:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
    except ImportError as exc:
        raise SystemExit("this example needs scikit-learn: pip install scikit-learn") from exc
    digits = load_digits()
    x = digits.images.astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, stratify=y, random_state=seed
    )
    mean, std = x_train.mean(), x_train.std()
    return (x_train - mean) / std, (x_test - mean) / std, y_train, y_test


def build_model(channels: int, dropout: float) -> nn.Sequential:
    """``(N, 1, 8, 8)`` images to 10 logits: conv-BN-ReLU twice at 8x8, max-pool to 4x4,
    dropout, linear."""
    wide = 2 * channels
    return nn.Sequential(
        nn.Conv2d(1, channels, kernel_size=3, padding=1),
        nn.BatchNorm2d(channels),
        nn.ReLU(),
        nn.Conv2d(channels, wide, kernel_size=3, padding=1),
        nn.BatchNorm2d(wide),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Dropout(dropout),
        nn.Linear(wide * 4 * 4, 10),
    )


def plot_curves(
    losses: list[float], accuracies: list[float], steps_per_epoch: int, path: Path
) -> Path:
    """Save the minibatch loss (per step, log scale) above the test accuracy (per epoch)."""
    try:
        import matplotlib
    except ImportError as exc:
        raise SystemExit(
            "the curves need matplotlib: pip install matplotlib (or pass --no-plot)"
        ) from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = np.arange(1, len(losses) + 1)
    window = max(1, len(losses) // 30)
    smooth = np.convolve(losses, np.ones(window) / window, mode="valid")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), dpi=120, sharex=True)
    top.plot(steps, losses, color="#90caf9", linewidth=0.8, label="minibatch loss")
    top.plot(steps[window - 1 :], smooth, color="#0d47a1", linewidth=1.8, label=f"mean of {window}")
    top.set_ylabel("cross-entropy loss")
    top.set_yscale("log")
    top.set_title(f"retrograd CNN on digits: test accuracy {accuracies[-1]:.1%}")
    top.grid(alpha=0.3)
    top.legend()
    epoch_ends = steps_per_epoch * np.arange(1, len(accuracies) + 1)
    bottom.plot(epoch_ends, 100 * np.asarray(accuracies), "o-", color="#2e7d32")
    bottom.set_xlabel("optimizer step")
    bottom.set_ylabel("test accuracy after each epoch (%)")
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Run the whole example; returns the numbers it printed (the tests read them)."""
    check_device(args.device)
    rg.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    x_train, x_test, y_train, y_test = load_digits_split(args.seed)
    xs = rg.tensor(x_train, device=args.device)
    xt = rg.tensor(x_test, device=args.device)

    model = build_model(args.channels, args.dropout).to(args.device)
    optimizer = rg.optim.Adam(model.parameters(), lr=args.lr)
    steps_per_epoch = math.ceil(len(x_train) / args.batch_size)
    total_steps = args.epochs * steps_per_epoch
    scheduler = lr_scheduler.CosineAnnealingLR(optimizer, T_max=total_steps)
    losses: list[float] = []
    accuracies: list[float] = []
    start = time.perf_counter()
    with progress_bar(total_steps, not args.no_progress) as update:
        for _ in range(args.epochs):
            order = rng.permutation(len(x_train))
            for first in range(0, len(order), args.batch_size):
                batch = order[first : first + args.batch_size]
                xb = rg.tensor(x_train[batch], device=args.device)
                yb = rg.tensor(y_train[batch], device=args.device)
                optimizer.zero_grad()
                loss = F.cross_entropy(model(xb), yb)
                loss.backward()
                optimizer.step()
                scheduler.step()
                value = loss.item()
                losses.append(value)
                update(value)
            accuracies.append(accuracy(model, xt, y_test))
    seconds = time.perf_counter() - start
    test_accuracy = accuracies[-1]
    train_accuracy = accuracy(model, xs, y_train)
    print(
        f"{args.epochs} epochs ({total_steps} steps) in {seconds:.1f} s on {args.device}: "
        f"train accuracy {train_accuracy:.1%}, test accuracy {test_accuracy:.1%}"
    )
    plot = None
    if not args.no_plot:
        plot = plot_curves(losses, accuracies, steps_per_epoch, args.plot)
        print(f"loss and accuracy curves saved to {plot}")
    if args.save is not None:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        rg.save(model.state_dict(), args.save)
        print(f"state_dict saved to {args.save}")
    return {
        "losses": losses,
        "accuracies": accuracies,
        "test_accuracy": test_accuracy,
        "train_accuracy": train_accuracy,
        "seconds": seconds,
        "plot": plot,
        "model": model,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; the exit status is 1 when ``--min-accuracy`` is missed."""
    args = parse_args(argv)
    result = train(args)
    if args.min_accuracy is not None and result["test_accuracy"] < args.min_accuracy:
        print(
            f"test accuracy {result['test_accuracy']:.1%} is below --min-accuracy "
            f"{args.min_accuracy:.1%}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
