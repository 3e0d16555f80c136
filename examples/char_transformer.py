"""Train a small decoder-only transformer on characters with retrograd, then sample from it.

The model reads the text shipped in ``examples/data/tiny_corpus.txt`` one character at a time
and learns to predict the next one: token and position embeddings, pre-LayerNorm blocks of
causal self-attention (``scaled_dot_product_attention`` with ``is_causal=True``) and a GELU
MLP, a final LayerNorm and an output layer that shares its weight with the token embedding
(weight tying). Training is the loop a PyTorch user writes: AdamW with decoupled weight decay
on the matrices only, a linear warmup then cosine decay of the learning rate,
``clip_grad_norm_`` before each step. At the end it samples text with ``rg.multinomial``.

    python examples/char_transformer.py                         # full run, then 400 characters
    python examples/char_transformer.py --steps 50 --sample-length 80   # a quick check
    python examples/char_transformer.py --temperature 0.5 --prompt "The gradient"
    python examples/char_transformer.py --save model.safetensors   # rg.save of the state_dict

The validation loss is printed next to the unigram entropy of the text (the loss of a model
that knows only how often each character occurs): a model that has learnt anything about
order ends well below it. Needs ``rich`` or ``tqdm`` for the progress bar (without either it
prints a line now and then).
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
from training_support import check_device, progress_bar  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "data" / "tiny_corpus.txt"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line; every option has a default that trains in about a minute on a CPU."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="UTF-8 text to learn from")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda, or any backend")
    parser.add_argument("--steps", type=int, default=600, help="optimizer steps (default 600)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--context", type=int, default=64, help="characters the model sees")
    parser.add_argument("--embed", type=int, default=64, help="width of the residual stream")
    parser.add_argument("--heads", type=int, default=4, help="attention heads per block")
    parser.add_argument("--layers", type=int, default=2, help="transformer blocks")
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--lr", type=float, default=3e-3, help="peak AdamW learning rate")
    parser.add_argument("--warmup", type=int, default=100, help="steps of linear warmup")
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--clip", type=float, default=1.0, help="max gradient norm")
    parser.add_argument("--seed", type=int, default=0, help="random seed of training and sampling")
    parser.add_argument("--sample-length", type=int, default=400, help="characters to sample")
    parser.add_argument("--temperature", type=float, default=0.8, help="> 0; lower: safer")
    parser.add_argument("--prompt", default="The ", help="text the sample continues")
    parser.add_argument("--save", type=Path, default=None, help="write the state_dict here")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    for name in ("steps", "batch_size", "context", "embed", "heads", "layers"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.embed % args.heads:
        parser.error(f"--embed ({args.embed}) must be divisible by --heads ({args.heads})")
    if args.temperature <= 0:
        parser.error(f"--temperature must be positive, got {args.temperature}")
    if not 0.0 <= args.dropout < 1.0:
        parser.error(f"--dropout must be in [0, 1), got {args.dropout}")
    if not args.prompt:
        parser.error("--prompt cannot be empty: the sample continues it")
    if args.sample_length < 0 or args.warmup < 0:
        parser.error("--sample-length and --warmup cannot be negative")
    return args


class CharTokenizer:
    """Characters to integer ids and back; the vocabulary is the sorted set of the text's
    characters."""

    def __init__(self, text: str) -> None:
        self.alphabet = sorted(set(text))
        self.index = {ch: i for i, ch in enumerate(self.alphabet)}

    def encode(self, text: str) -> np.ndarray:
        """The ids of ``text``'s characters; a character outside the alphabet is an error."""
        unknown = sorted(set(text) - set(self.index))
        if unknown:
            raise ValueError(f"characters not in the corpus's alphabet: {unknown!r}")
        return np.array([self.index[ch] for ch in text], dtype=np.int64)

    def decode(self, ids: Sequence[int]) -> str:
        """The text spelt by ``ids``."""
        return "".join(self.alphabet[i] for i in ids)


def unigram_entropy(ids: np.ndarray, vocab_size: int) -> float:
    """Entropy in nats of the characters' frequencies: the cross-entropy of the best model
    that ignores order."""
    counts = np.bincount(ids, minlength=vocab_size).astype(np.float64)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which position ``t`` attends to positions ``0..t``."""

    def __init__(self, embed: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.dropout = dropout
        self.qkv = nn.Linear(embed, 3 * embed)
        self.proj = nn.Linear(embed, embed)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x: rg.Tensor) -> rg.Tensor:
        """``x`` ``(batch, time, embed)`` to the same shape."""
        b, t, e = x.shape
        q, k, v = self.qkv(x).split(e, dim=2)
        q, k, v = (z.reshape(b, t, self.heads, e // self.heads).transpose(1, 2) for z in (q, k, v))
        p = self.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        return self.resid_dropout(self.proj(y.transpose(1, 2).reshape(b, t, e)))


class Block(nn.Module):
    """A pre-LayerNorm transformer block: ``x + attention(ln(x))`` then ``x + mlp(ln(x))``."""

    def __init__(self, embed: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(embed)
        self.attention = CausalSelfAttention(embed, heads, dropout)
        self.ln2 = nn.LayerNorm(embed)
        self.mlp = nn.Sequential(
            nn.Linear(embed, 4 * embed),
            nn.GELU(approximate="tanh"),  # GPT-2's form of GELU, cheaper than erf
            nn.Linear(4 * embed, embed),
            nn.Dropout(dropout),
        )

    def forward(self, x: rg.Tensor) -> rg.Tensor:
        """One block over ``x`` ``(batch, time, embed)``."""
        x = x + self.attention(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class CharTransformer(nn.Module):
    """Token and position embeddings, ``layers`` blocks, a final LayerNorm and an output layer
    tied to the token embedding (one ``(vocab, embed)`` matrix serves both)."""

    def __init__(
        self, vocab: int, context: int, embed: int, heads: int, layers: int, dropout: float
    ) -> None:
        super().__init__()
        self.context = context
        self.token_embedding = nn.Embedding(vocab, embed)
        self.position_embedding = nn.Embedding(context, embed)
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.Sequential(*(Block(embed, heads, dropout) for _ in range(layers)))
        self.ln_f = nn.LayerNorm(embed)
        self.head = nn.Linear(embed, vocab, bias=False)
        self.head.weight = self.token_embedding.weight  # weight tying
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        # GPT-2's initialisation: N(0, 0.02) for matrices and embeddings, zero biases
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, ids: rg.Tensor) -> rg.Tensor:
        """Logits ``(batch, time, vocab)`` for the next character after each of ``ids``
        ``(batch, time)``, ``time <= context``."""
        t = ids.shape[1]
        if t > self.context:
            raise ValueError(
                f"sequence of {t} characters is longer than the context {self.context}"
            )
        positions = rg.arange(t, device=ids.device)
        x = self.dropout(self.token_embedding(ids) + self.position_embedding(positions))
        return self.head(self.ln_f(self.blocks(x)))


def make_optimizer(model: nn.Module, lr: float, weight_decay: float) -> rg.optim.Optimizer:
    """AdamW that decays the matrices (linear weights, embeddings) but not biases or
    LayerNorm parameters."""
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    groups = [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    return rg.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))


def make_scheduler(optimizer: rg.optim.Optimizer, warmup: int, total: int) -> Any:
    """A linear warmup from a tenth of the learning rate over ``warmup`` steps, then a cosine
    down to a tenth of it at step ``total`` (``SequentialLR`` of ``LinearLR`` and
    ``CosineAnnealingLR``, stepped once per optimizer step)."""
    peak = optimizer.param_groups[0]["lr"]
    cosine = lr_scheduler.CosineAnnealingLR(
        optimizer, T_max=max(1, total - warmup), eta_min=0.1 * peak
    )
    if warmup == 0:
        return cosine
    linear = lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=warmup)
    return lr_scheduler.SequentialLR(optimizer, [linear, cosine], milestones=[warmup])


def random_batch(
    data: np.ndarray, context: int, batch_size: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``batch_size`` windows of ``context`` characters and the same windows shifted by one
    (the targets)."""
    starts = rng.integers(0, len(data) - context, size=batch_size)
    x = np.stack([data[s : s + context] for s in starts])
    y = np.stack([data[s + 1 : s + 1 + context] for s in starts])
    return x, y


def evaluate(model: nn.Module, data: np.ndarray, context: int, device: str) -> float:
    """Mean next-character cross-entropy over ``data`` cut into consecutive windows."""
    windows = (len(data) - 1) // context
    x = data[: windows * context].reshape(windows, context)
    y = data[1 : windows * context + 1].reshape(windows, context)
    model.eval()
    with rg.no_grad():
        logits = model(rg.tensor(x, device=device))
        loss = F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), rg.tensor(y.reshape(-1), device=device)
        )
    model.train()
    return loss.item()


def sample(
    model: CharTransformer,
    tokenizer: CharTokenizer,
    prompt: str,
    length: int,
    temperature: float,
    seed: int,
    device: str,
) -> str:
    """``prompt`` followed by ``length`` characters drawn one at a time from the model's
    next-character distribution at ``temperature`` (``rg.multinomial``, seeded)."""
    generator = rg.Generator(device=device).manual_seed(seed)
    ids = [int(i) for i in tokenizer.encode(prompt)]
    model.eval()
    with rg.no_grad():
        for _ in range(length):
            window = rg.tensor([ids[-model.context :]], device=device)
            logits = model(window)[0, -1] / temperature
            probs = F.softmax(logits, dim=-1)
            ids.append(int(rg.multinomial(probs, 1, generator=generator).item()))
    model.train()
    return prompt + tokenizer.decode(ids[len(prompt) :])


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Run the whole example; returns the numbers it printed (the tests read them)."""
    check_device(args.device)
    text = args.corpus.read_text(encoding="utf-8")
    tokenizer = CharTokenizer(text)
    data = tokenizer.encode(text)
    split = int(0.9 * len(data))
    train_data, val_data = data[:split], data[split:]
    if len(val_data) <= args.context + 1:
        raise SystemExit(f"the corpus is too short for a context of {args.context} characters")
    entropy = unigram_entropy(train_data, len(tokenizer.alphabet))
    try:
        tokenizer.encode(args.prompt)
    except ValueError as exc:
        raise SystemExit(f"--prompt {args.prompt!r}: {exc}") from exc

    rg.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = CharTransformer(
        len(tokenizer.alphabet), args.context, args.embed, args.heads, args.layers, args.dropout
    )
    model.to(args.device)
    optimizer = make_optimizer(model, args.lr, args.weight_decay)
    scheduler = make_scheduler(optimizer, args.warmup, args.steps)
    losses: list[float] = []
    start = time.perf_counter()
    with progress_bar(args.steps, not args.no_progress, digits=3) as update:
        for _ in range(args.steps):
            x, y = random_batch(train_data, args.context, args.batch_size, rng)
            logits = model(rg.tensor(x, device=args.device))
            loss = F.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), rg.tensor(y.reshape(-1), device=args.device)
            )
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            scheduler.step()
            value = loss.item()
            losses.append(value)
            update(value)
    seconds = time.perf_counter() - start
    val_loss = evaluate(model, val_data, args.context, args.device)
    print(
        f"{args.steps} steps in {seconds:.1f} s on {args.device}: validation loss "
        f"{val_loss:.3f} nats/char (unigram entropy {entropy:.3f})"
    )
    if args.save is not None:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        rg.save(model.state_dict(), args.save)
        print(f"state_dict saved to {args.save}")
    text_out = sample(
        model, tokenizer, args.prompt, args.sample_length, args.temperature, args.seed, args.device
    )
    print(f"--- sample (temperature {args.temperature}) ---")
    print(text_out)
    return {
        "losses": losses,
        "val_loss": val_loss,
        "unigram_entropy": entropy,
        "seconds": seconds,
        "sample": text_out,
        "alphabet": tokenizer.alphabet,
        "model": model,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    train(parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
