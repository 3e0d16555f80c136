"""The model examples run: examples/train_digits_cnn.py (a CNN on scikit-learn's digits) and
examples/char_transformer.py (a character-level transformer on examples/data/tiny_corpus.txt).

Quick runs check the output, the files written and the command line; one run checks the
digits CNN's accuracy claim; the saved state dicts are loaded into the same architectures
written with ``torch.nn``, which must compute the same logits."""

from __future__ import annotations

import ast
import importlib.util
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch

import retrograd as rg

ROOT = Path(__file__).resolve().parents[3]
DIGITS_CNN = ROOT / "examples" / "train_digits_cnn.py"
CHAR_TRANSFORMER = ROOT / "examples" / "char_transformer.py"
CORPUS = ROOT / "examples" / "data" / "tiny_corpus.txt"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# a transformer small enough that a few steps take a second or two
TINY_TRANSFORMER = ["--embed", "16", "--heads", "2", "--layers", "1", "--context", "16"]


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_script(path: Path, args: list[str], cwd: Path, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, str(path), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
        env={**os.environ, "MPLBACKEND": "Agg"} if env is None else env,
    )


# --------------------------------------------------------------------------- digits CNN


def torch_digits_cnn(channels: int) -> torch.nn.Sequential:
    """build_model's architecture written with torch.nn."""
    tnn = torch.nn
    wide = 2 * channels
    return tnn.Sequential(
        tnn.Conv2d(1, channels, kernel_size=3, padding=1),
        tnn.BatchNorm2d(channels),
        tnn.ReLU(),
        tnn.Conv2d(channels, wide, kernel_size=3, padding=1),
        tnn.BatchNorm2d(wide),
        tnn.ReLU(),
        tnn.MaxPool2d(2),
        tnn.Flatten(),
        tnn.Dropout(0.3),
        tnn.Linear(wide * 4 * 4, 10),
    )


def test_digits_cnn_one_epoch_writes_the_plot_and_a_state_dict_torch_reads(tmp_path):
    pytest.importorskip("sklearn", reason="the digits example needs scikit-learn")
    pytest.importorskip("matplotlib", reason="the curves need matplotlib")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    example = load(DIGITS_CNN)
    plot, saved = tmp_path / "curves.png", tmp_path / "cnn.safetensors"
    args = ["--epochs", "1", "--channels", "8", "--plot", str(plot), "--save", str(saved)]
    result = example.train(example.parse_args([*args, "--no-progress"]))

    x_train, x_test, _, y_test = example.load_digits_split(0)
    assert x_train.shape[1:] == (1, 8, 8) and x_train.dtype == np.float32
    assert len(result["losses"]) == math.ceil(len(x_train) / 64)
    assert all(math.isfinite(v) for v in result["losses"])
    assert result["losses"][0] > 1.5  # ~log(10) at random initialisation
    assert len(result["accuracies"]) == 1 and result["accuracies"][0] == result["test_accuracy"]
    assert plot.read_bytes()[:8] == PNG_MAGIC

    model = result["model"]
    model.eval()
    with rg.no_grad():
        ours = model(rg.tensor(x_test)).numpy()
    assert float((ours.argmax(1) == y_test).mean()) == result["test_accuracy"]

    again = example.build_model(8, 0.3)
    again.load_state_dict(rg.load(saved))
    again.eval()
    with rg.no_grad():
        np.testing.assert_array_equal(again(rg.tensor(x_test)).numpy(), ours)

    theirs = torch_digits_cnn(8)
    theirs.load_state_dict(safetensors_torch.load_file(str(saved)))  # strict: same names
    theirs.eval()
    with torch.no_grad():
        torch_logits = theirs(torch.from_numpy(x_test)).numpy()
    np.testing.assert_allclose(torch_logits, ours, rtol=1e-4, atol=1e-4)


def test_digits_cnn_command_line(tmp_path):
    pytest.importorskip("sklearn", reason="the digits example needs scikit-learn")
    done = run_script(
        DIGITS_CNN, ["--epochs", "1", "--channels", "8", "--no-plot", "--no-progress"], tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"1 epochs \(23 steps\) in [\d.]+ s on cpu: ", done.stdout)
    assert "test accuracy" in done.stdout
    assert not list(tmp_path.iterdir())  # --no-plot and no --save: nothing written


@pytest.mark.parametrize(
    ("args", "phrase"),
    [
        (["--epochs", "0"], "--epochs must be at least 1"),
        (["--batch-size", "0"], "--batch-size must be at least 1"),
        (["--dropout", "1.0"], "--dropout must be in [0, 1)"),
    ],
)
def test_digits_cnn_refuses_bad_options(args, phrase, capsys):
    example = load(DIGITS_CNN)
    with pytest.raises(SystemExit) as raised:
        example.parse_args(args)
    assert raised.value.code == 2
    assert phrase in capsys.readouterr().err


def test_digits_cnn_refuses_an_unusable_device():
    example = load(DIGITS_CNN)
    with pytest.raises(SystemExit, match="not usable"):
        example.train(example.parse_args(["--device", "no-such-device", "--epochs", "1"]))


def test_digits_cnn_reaches_98_percent(tmp_path):
    """The accuracy the example claims, with its default options (about 15 s of CPU)."""
    pytest.importorskip("sklearn", reason="the digits example needs scikit-learn")
    plot = tmp_path / "curves.png"
    done = run_script(
        DIGITS_CNN, ["--no-progress", "--min-accuracy", "0.98", "--plot", str(plot)], tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    accuracy = float(re.search(r"test accuracy ([\d.]+)%", done.stdout).group(1))
    assert accuracy >= 98.0
    if importlib.util.find_spec("matplotlib") is not None:
        assert plot.read_bytes()[:8] == PNG_MAGIC


# ------------------------------------------------------------------- char transformer


class TorchCausalSelfAttention(torch.nn.Module):
    def __init__(self, embed: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(embed, 3 * embed)
        self.proj = torch.nn.Linear(embed, embed)
        self.resid_dropout = torch.nn.Dropout(0.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, e = x.shape
        q, k, v = self.qkv(x).split(e, dim=2)
        q, k, v = (z.reshape(b, t, self.heads, e // self.heads).transpose(1, 2) for z in (q, k, v))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, e))


class TorchBlock(torch.nn.Module):
    def __init__(self, embed: int, heads: int) -> None:
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(embed)
        self.attention = TorchCausalSelfAttention(embed, heads)
        self.ln2 = torch.nn.LayerNorm(embed)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(embed, 4 * embed),
            torch.nn.GELU(approximate="tanh"),
            torch.nn.Linear(4 * embed, embed),
            torch.nn.Dropout(0.0),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TorchCharTransformer(torch.nn.Module):
    """The example's CharTransformer written with torch.nn (same parameter names)."""

    def __init__(self, vocab: int, context: int, embed: int, heads: int, layers: int) -> None:
        super().__init__()
        self.token_embedding = torch.nn.Embedding(vocab, embed)
        self.position_embedding = torch.nn.Embedding(context, embed)
        self.blocks = torch.nn.Sequential(*(TorchBlock(embed, heads) for _ in range(layers)))
        self.ln_f = torch.nn.LayerNorm(embed)
        self.head = torch.nn.Linear(embed, vocab, bias=False)
        self.head.weight = self.token_embedding.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[1])
        x = self.token_embedding(ids) + self.position_embedding(positions)
        return self.head(self.ln_f(self.blocks(x)))


def corpus_alphabet() -> set[str]:
    return set(CORPUS.read_text(encoding="utf-8"))


def test_the_corpus_is_a_few_pages_of_plain_text():
    text = CORPUS.read_text(encoding="utf-8")
    assert 20_000 <= len(text.encode("utf-8")) <= 40_000
    assert text.isascii() and len(set(text)) < 80
    assert len(text.split()) > 3_000


def test_char_transformer_loss_falls_well_below_the_unigram_entropy():
    """200 steps at a 32-character context (about 20 s of CPU): the validation loss ends at
    least 0.4 nats per character below the unigram entropy, which no model blind to order
    can beat."""
    example = load(CHAR_TRANSFORMER)
    args = ["--steps", "200", "--context", "32", "--warmup", "20", "--sample-length", "0"]
    result = example.train(example.parse_args([*args, "--no-progress"]))
    losses, entropy = result["losses"], result["unigram_entropy"]
    assert len(losses) == 200 and all(math.isfinite(v) for v in losses)
    vocab = len(result["alphabet"])
    assert abs(losses[0] - math.log(vocab)) < 0.1  # N(0, 0.02) weights: nearly uniform at first
    assert result["val_loss"] < entropy - 0.4
    assert float(np.mean(losses[-20:])) < entropy - 0.4


def test_unigram_entropy_is_torchs_categorical_entropy():
    example = load(CHAR_TRANSFORMER)
    ids = np.array([0, 1, 1, 2, 2, 2, 2, 4], dtype=np.int64)
    counts = torch.tensor(np.bincount(ids, minlength=5), dtype=torch.float64)
    expected = torch.distributions.Categorical(probs=counts / counts.sum()).entropy().item()
    assert example.unigram_entropy(ids, 5) == pytest.approx(expected, rel=1e-12)


def test_char_transformer_samples_text_of_the_requested_length(tmp_path):
    done = run_script(
        CHAR_TRANSFORMER,
        [*TINY_TRANSFORMER, "--steps", "3", "--sample-length", "60", "--prompt", "The fox"],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"3 steps in [\d.]+ s on cpu: validation loss [\d.]+ nats/char", done.stdout)
    sample = done.stdout.split("--- sample (temperature 0.8) ---\n", 1)[1]
    assert sample.endswith("\n")
    sample = sample[:-1]  # print's newline
    assert len(sample) == len("The fox") + 60
    assert sample.startswith("The fox")
    assert set(sample) <= corpus_alphabet()
    assert not list(tmp_path.iterdir())  # no --save: nothing written


def test_char_transformer_sampling_follows_the_seed():
    example = load(CHAR_TRANSFORMER)

    def sample(seed: str, temperature: str = "1.0") -> str:
        args = [*TINY_TRANSFORMER, "--steps", "2", "--sample-length", "40", "--seed", seed]
        return example.train(
            example.parse_args([*args, "--temperature", temperature, "--no-progress"])
        )["sample"]

    first = sample("1")
    assert sample("1") == first
    assert sample("2") != first
    assert len(first) == len("The ") + 40 and set(first) <= corpus_alphabet()


def test_char_transformer_is_causal():
    example = load(CHAR_TRANSFORMER)
    rg.manual_seed(0)
    model = example.CharTransformer(vocab=10, context=8, embed=16, heads=2, layers=2, dropout=0.1)
    model.eval()
    ids = rg.tensor([[1, 2, 3, 4, 5, 6, 7, 8]])
    changed = rg.tensor([[1, 2, 3, 4, 5, 6, 7, 0]])
    with rg.no_grad():
        before, after = model(ids).numpy(), model(changed).numpy()
    np.testing.assert_array_equal(before[:, :-1], after[:, :-1])  # the past ignores the future
    assert not np.array_equal(before[:, -1], after[:, -1])
    with pytest.raises(ValueError, match="longer than the context 8"):
        model(rg.tensor([list(range(9))]))


def test_char_transformer_ties_the_output_layer_to_the_token_embedding():
    example = load(CHAR_TRANSFORMER)
    model = example.CharTransformer(vocab=10, context=8, embed=16, heads=2, layers=1, dropout=0.0)
    assert model.head.weight is model.token_embedding.weight
    names = [name for name, _ in model.named_parameters()]
    assert "token_embedding.weight" in names and "head.weight" not in names  # counted once
    assert "head.weight" in model.state_dict()  # but saved under both names, as torch does


def test_char_transformer_state_dict_round_trips_and_torch_computes_the_same(tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    example = load(CHAR_TRANSFORMER)
    saved = tmp_path / "model.safetensors"
    args = [*TINY_TRANSFORMER, "--steps", "3", "--sample-length", "5", "--save", str(saved)]
    result = example.train(example.parse_args([*args, "--no-progress"]))
    vocab = len(result["alphabet"])
    ids = np.random.default_rng(0).integers(0, vocab, size=(3, 16))
    model = result["model"]
    model.eval()
    with rg.no_grad():
        ours = model(rg.tensor(ids)).numpy()

    again = example.CharTransformer(vocab, 16, 16, 2, 1, 0.1)
    again.load_state_dict(rg.load(saved))
    again.eval()
    with rg.no_grad():
        np.testing.assert_array_equal(again(rg.tensor(ids)).numpy(), ours)

    theirs = TorchCharTransformer(vocab, 16, 16, 2, 1)
    theirs.load_state_dict(safetensors_torch.load_file(str(saved)))  # strict: same names
    theirs.eval()
    with torch.no_grad():
        torch_logits = theirs(torch.from_numpy(ids)).numpy()
    np.testing.assert_allclose(torch_logits, ours, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("args", "phrase"),
    [
        (["--embed", "30", "--heads", "4"], "--embed (30) must be divisible by --heads (4)"),
        (["--temperature", "0"], "--temperature must be positive"),
        (["--steps", "0"], "--steps must be at least 1"),
        (["--prompt", ""], "--prompt cannot be empty"),
    ],
)
def test_char_transformer_refuses_bad_options(args, phrase, capsys):
    example = load(CHAR_TRANSFORMER)
    with pytest.raises(SystemExit) as raised:
        example.parse_args(args)
    assert raised.value.code == 2
    assert phrase in capsys.readouterr().err


def test_char_transformer_refuses_a_prompt_outside_the_alphabet():
    example = load(CHAR_TRANSFORMER)
    args = example.parse_args([*TINY_TRANSFORMER, "--steps", "1", "--prompt", "Zebra"])
    with pytest.raises(SystemExit, match=r"--prompt 'Zebra': characters not in .*\['Z'\]"):
        example.train(args)


def test_char_transformer_refuses_an_unusable_device():
    example = load(CHAR_TRANSFORMER)
    with pytest.raises(SystemExit, match="not usable"):
        example.train(example.parse_args(["--device", "no-such-device", "--steps", "1"]))


# ------------------------------------------------------------------------- both examples


THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@pytest.mark.parametrize("script", [DIGITS_CNN, CHAR_TRANSFORMER], ids=lambda p: p.stem)
@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({}, ["1", "1", "1"]),  # nothing set: one thread
        ({"OPENBLAS_NUM_THREADS": "3"}, ["3", None, None]),  # the user's choice stands
        ({"OMP_NUM_THREADS": "2"}, [None, "2", None]),  # ... whichever variable says it
    ],
    ids=["unset", "openblas-set", "omp-set"],
)
def test_examples_use_one_blas_thread_unless_told_otherwise(script, given, expected):
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    env.update(given)
    probe = (
        "import importlib.util, os\n"
        f"spec = importlib.util.spec_from_file_location('example', {str(script)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        f"print([os.environ.get(name) for name in {THREAD_VARIABLES!r}])\n"
        "try:\n"
        "    from threadpoolctl import threadpool_info\n"
        "except ImportError:\n"
        "    threadpool_info = list\n"
        "print([p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    variables, blas_threads = done.stdout.splitlines()
    assert ast.literal_eval(variables) == expected
    if not given:  # set before NumPy loaded its BLAS, so the BLAS itself runs one thread
        assert set(ast.literal_eval(blas_threads)) <= {1}


def usable_cuda() -> None:
    try:
        rg.zeros(1, device="cuda")
    except Exception as exc:
        pytest.skip(f"no usable cuda device: {exc}")


@pytest.mark.gpu
def test_digits_cnn_on_cuda():
    pytest.importorskip("sklearn", reason="the digits example needs scikit-learn")
    usable_cuda()
    example = load(DIGITS_CNN)
    args = ["--device", "cuda", "--epochs", "3", "--no-progress", "--no-plot"]
    assert example.train(example.parse_args(args))["test_accuracy"] >= 0.95


@pytest.mark.gpu
def test_char_transformer_on_cuda():
    usable_cuda()
    example = load(CHAR_TRANSFORMER)
    args = ["--device", "cuda", "--steps", "100", "--context", "32", "--sample-length", "30"]
    result = example.train(example.parse_args([*args, "--no-progress"]))
    assert result["val_loss"] < result["unigram_entropy"]
    assert len(result["sample"]) == len("The ") + 30 and set(result["sample"]) <= corpus_alphabet()
