"""The ``models`` group: whole training runs, step for step against PyTorch.

Three models people start with are built from the library's own ``nn`` (the same code runs on
PyTorch and on the subject), given the same weights (drawn with NumPy, in parameter order) and
trained on the same batches:

- ``lenet``: a LeNet-style CNN -- convolutions, batch norm (training statistics and running
  estimates), max pooling, a dropout layer in eval mode, a linear head -- with SGD (momentum,
  weight decay) on cross entropy;
- ``transformer``: a 2-layer decoder-only transformer on characters -- token and position
  embeddings, pre-norm blocks of causal multi-head attention and a GELU MLP, a final layer
  norm and a head tied to the token embedding -- with Adam on next-character cross entropy;
- ``mlp``: a small MLP with AdamW, a cosine learning-rate schedule and gradient-norm clipping.

Each program returns every step's loss, the last learning rate where there is a schedule, and
every final parameter and buffer, so a backend bug anywhere in a forward, a backward, an
optimizer update or a running statistic shows up as the first step whose loss drifts. The
conformance run trains a few steps (``STEPS``); ``packages/conformance/tests`` trains 50 in
float64 and float32 with tighter tolerances.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .semantics import SemanticsCase

__all__ = ["MODEL_CASES", "MODELS", "train_lenet", "train_transformer", "train_mlp", "TEXT"]

STEPS = 8  # per conformance case: enough for every update rule and running estimate to act

#: the training text of the character transformer (written for this suite)
TEXT = (
    "a gradient flows back through every node once all of its contributions have arrived. "
    "the engine walks the graph in reverse, adding what each branch sends to each input, "
    "and a leaf keeps the sum in its grad. hooks see the gradient on its way; a version "
    "counter refuses a tensor that changed after it was saved. "
)


def _tensor(lib: Any, arr: Any) -> Any:
    return lib.tensor(np.asarray(arr, dtype=np.float64))


def _init_weights(lib: Any, model: Any, seed: int) -> None:
    """Every parameter drawn from U(-1, 1) / sqrt(fan_in) with NumPy, in ``named_parameters``
    order, so both libraries start from the same numbers."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for _, p in model.named_parameters():
            shape = tuple(p.shape)
            fan_in = math.prod(shape[1:]) if len(shape) > 1 else shape[0]
            p.copy_(_tensor(lib, rng.uniform(-1.0, 1.0, shape) / math.sqrt(fan_in)))


def _state(lib: Any, model: Any) -> dict[str, Any]:
    """The final parameters and buffers by name (values, detached)."""
    return {f"final {k}": v.detach() for k, v in model.state_dict().items()}


# -- (a) LeNet-style CNN -------------------------------------------------------------------------
def train_lenet(lib: Any, steps: int = STEPS) -> dict[str, Any]:
    """Conv-BN-ReLU-pool, conv-ReLU-pool, dropout (eval), linear; SGD with momentum."""
    nn, F = lib.nn, lib.nn.functional
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3, stride=1), nn.ReLU(), nn.MaxPool2d(2, ceil_mode=True),
        nn.Flatten(), nn.Dropout(0.25), nn.Linear(6 * 2 * 2, 5),
    ).to(device=lib.device, dtype=lib.dtype)
    _init_weights(lib, model, 1)
    model.train()
    model[8].eval()  # dropout off: its mask would come from each library's own generator
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    rng = np.random.default_rng(11)
    losses = []
    for _ in range(steps):
        x = _tensor(lib, rng.normal(size=(6, 1, 11, 11)))
        y = lib.int_tensor(rng.integers(0, 5, size=6))
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return {"losses": lib.stack(losses), **_state(lib, model)}


# -- (b) a 2-layer decoder-only transformer on characters -----------------------------------------
def _transformer(lib: Any, vocab: int, width: int, heads: int, context: int) -> Any:
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.ln1 = nn.LayerNorm(width)
            self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
            self.ln2 = nn.LayerNorm(width)
            self.fc1 = nn.Linear(width, 4 * width)
            self.fc2 = nn.Linear(4 * width, width)

        def forward(self, x: Any, mask: Any) -> Any:
            h = self.ln1(x)
            a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
            x = x + a
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class CharTransformer(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.tok = nn.Embedding(vocab, width)
            self.pos = nn.Embedding(context, width)
            self.blocks = nn.ModuleList([Block(), Block()])
            self.ln = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab, bias=False)
            self.head.weight = self.tok.weight  # weight tying

        def forward(self, idx: Any, mask: Any) -> Any:
            t = idx.shape[1]
            x = self.tok(idx) + self.pos(lib.arange(t, device=lib.device))
            for block in self.blocks:
                x = block(x, mask)
            return self.head(self.ln(x))

    return CharTransformer()


def train_transformer(lib: Any, steps: int = STEPS) -> dict[str, Any]:
    """Next-character cross entropy with Adam; the causal mask as an additive float mask."""
    F = lib.nn.functional
    chars = sorted(set(TEXT))
    codes = np.array([chars.index(c) for c in TEXT])
    vocab, width, heads, context, batch = len(chars), 16, 2, 12, 4
    model = _transformer(lib, vocab, width, heads, context).to(device=lib.device, dtype=lib.dtype)
    _init_weights(lib, model, 2)
    opt = lib.optim.Adam(model.parameters(), lr=3e-3)
    mask = _tensor(lib, np.triu(np.full((context, context), -np.inf), 1))
    rng = np.random.default_rng(12)
    losses = []
    for _ in range(steps):
        starts = rng.integers(0, len(codes) - context - 1, size=batch)
        xb = np.stack([codes[s:s + context] for s in starts])
        yb = np.stack([codes[s + 1:s + context + 1] for s in starts])
        opt.zero_grad()
        logits = model(lib.int_tensor(xb), mask)
        loss = F.cross_entropy(logits.reshape(-1, vocab), lib.int_tensor(yb.reshape(-1)))
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return {"losses": lib.stack(losses), **_state(lib, model)}


# -- (c) an MLP with AdamW, a cosine schedule and clipping ----------------------------------------
def train_mlp(lib: Any, steps: int = STEPS) -> dict[str, Any]:
    """Linear-Tanh-Linear-GELU-Linear; AdamW, CosineAnnealingLR, clip_grad_norm_(1.0)."""
    nn, F = lib.nn, lib.nn.functional
    model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.GELU(),
                          nn.Linear(32, 3)).to(device=lib.device, dtype=lib.dtype)
    _init_weights(lib, model, 3)
    opt = lib.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.05)
    sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(steps, 1))
    rng = np.random.default_rng(13)
    losses, norms, lrs = [], [], []
    for _ in range(steps):
        x = _tensor(lib, rng.normal(size=(16, 8)))
        y = lib.int_tensor(rng.integers(0, 3, size=16))
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), 1.0).detach())
        opt.step()
        sched.step()
        losses.append(loss.detach())
        lrs.append(float(sched.get_last_lr()[0]))
    return {"losses": lib.stack(losses), "gradient norms before clipping": lib.stack(norms),
            "learning rates": lrs, **_state(lib, model)}


#: name -> (program, what it trains)
MODELS: dict[str, tuple[Callable[..., dict[str, Any]], str]] = {
    "lenet": (train_lenet, "a LeNet-style CNN (conv, batch norm, max pool, dropout in eval, "
                           "linear) with SGD momentum"),
    "transformer": (train_transformer, "a 2-layer decoder-only character transformer "
                                       "(embeddings, layer norm, causal attention, GELU MLP, "
                                       "tied head) with Adam"),
    "mlp": (train_mlp, "an MLP with AdamW, a cosine schedule and gradient clipping"),
}

MODEL_CASES: tuple[SemanticsCase, ...] = tuple(
    SemanticsCase(
        f"models-{name}", "models", f"{STEPS} training steps of {what}",
        "every step's loss and every final parameter and buffer, against PyTorch trained from "
        "the same weights on the same batches",
        program)
    for name, (program, what) in MODELS.items()
)
