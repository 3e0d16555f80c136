"""What the training examples share: the device check, eval-mode accuracy and the progress bar.

The examples put this directory on ``sys.path`` and import it, so each stays one runnable file
with its model and loop in view, and the plumbing is written once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import numpy as np

import retrograd as rg
from retrograd import nn


def check_device(device: str) -> None:
    """Exit with a clear message when ``device`` cannot hold a tensor here."""
    try:
        rg.zeros(1, device=device)
    except Exception as exc:  # the registry's message says what is missing
        hint = " (install retrograd-cuda with a CUDA GPU)" if device.startswith("cuda") else ""
        raise SystemExit(f"device {device!r} is not usable here{hint}: {exc}") from exc


def accuracy(model: nn.Module, x: rg.Tensor, y: np.ndarray) -> float:
    """Fraction of ``x`` classified as ``y``, in eval mode (BatchNorm's running statistics,
    no dropout); the model is put back in training mode."""
    model.eval()
    with rg.no_grad():
        logits = model(x)
    model.train()
    predicted = logits.argmax(dim=1).cpu().numpy()
    return float((predicted == y).mean())


@contextlib.contextmanager
def progress_bar(total: int, enabled: bool, digits: int = 4) -> Iterator[Callable[[float], None]]:
    """Yields ``update(loss)``: a rich bar, else a tqdm bar, else an occasional printed line
    (the loss shown with ``digits`` decimals)."""
    if enabled:
        try:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )
        except ImportError:
            pass
        else:
            columns = (
                TextColumn("training"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(f"loss {{task.fields[loss]:.{digits}f}}"),
                TimeRemainingColumn(),
            )
            with Progress(*columns) as bar:
                task = bar.add_task("train", total=total, loss=float("nan"))
                yield lambda loss: bar.update(task, advance=1, loss=loss)
            return
        try:
            from tqdm import tqdm
        except ImportError:
            pass
        else:
            with tqdm(total=total, desc="training") as tbar:

                def update(loss: float) -> None:
                    tbar.update(1)
                    tbar.set_postfix(loss=f"{loss:.{digits}f}")

                yield update
            return
    count = 0

    def plain(loss: float) -> None:
        nonlocal count
        count += 1
        if enabled and (count % max(1, total // 10) == 0 or count == total):
            print(f"step {count}/{total}  loss {loss:.{digits}f}", flush=True)

    yield plain
