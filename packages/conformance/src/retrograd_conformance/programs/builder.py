"""Writing one random program: a DAG of ops over a few leaves, then one way to differentiate it.

The builder tracks, for every value, what the generator must know to keep programs
meaningful on both libraries:

- ``shape`` (every op is only applied where its shapes are valid);
- ``grad``: depends on a leaf that requires grad (only such values can be roots);
- ``exact``: may hold exact zeros or ties (a ReLU output, a clamp bound). Kinked ops
  (relu, abs, clamp, maximum, minimum, amax, where) are never applied to such values, because
  the derivative at a kink is a convention, not a property of the program;
- ``contiguous``: ``view`` is only used where PyTorch allows it;
- ``bound``: a rough bound on magnitudes, so deep programs neither overflow nor lose float32.

Choices come from a :class:`Chooser` (hypothesis in practice), so programs shrink.

Every template draws a *kind* (``shape/permute``, ``binary/where``...; :data:`ALL_KINDS`) and
returns None where the kind does not apply to its operand -- ``permute`` and ``transpose`` need
a rank of at least 2, ``T`` exactly 2 --, and a program records the kinds it emitted
(:attr:`Program.kinds`), so that a run can report how often each appeared and fail on one that
never did (:mod:`.check`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

MAX_BOUND = 60.0

# The kinds each template draws from (repeats weight a kind; the order is part of the seeded
# generation: append, never reorder).
SMOOTH_KINDS = ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "neg", "pow2", "pow3",
                "rpow", "scalar", "reciprocal", "method")
KINKED_KINDS = ("relu", "relu-f", "abs", "clamp", "clamp-min")
REDUCTION_KINDS = ("sum", "sum", "mean", "amax", "logsumexp", "softmax", "log_softmax")
SHAPE_KINDS = ("reshape", "view", "flatten", "permute", "transpose", "T", "unsqueeze",
               "squeeze", "expand", "index", "slice", "none", "ellipsis", "int-array", "mask")
BINARY_KINDS = ("add", "sub", "mul", "mul", "div", "pow", "maximum", "minimum", "where")
MATMUL_KINDS = ("pair", "self-vector", "self-transpose")
JOIN_KINDS = ("stack", "cat")
NN_KINDS = ("linear", "mse_loss", "cross_entropy")

#: template -> the kinds it can emit
TEMPLATE_KINDS: dict[str, tuple[str, ...]] = {
    "unary": SMOOTH_KINDS, "kinked": KINKED_KINDS, "reduction": REDUCTION_KINDS,
    "shape": SHAPE_KINDS, "binary": BINARY_KINDS, "matmul": MATMUL_KINDS, "join": JOIN_KINDS,
    "nn": NN_KINDS,
}
#: every kind a program can contain, as ``template/kind``
ALL_KINDS: tuple[str, ...] = tuple(dict.fromkeys(
    f"{t}/{k}" for t, kinds in TEMPLATE_KINDS.items() for k in kinds))
#: kinds that rearrange their operand's axes: emitted only on operands of rank >= 2
AXIS_KINDS = ("shape/permute", "shape/transpose", "shape/T", "matmul/self-transpose")


class Chooser(Protocol):
    def integer(self, lo: int, hi: int) -> int: ...


@dataclass
class Val:
    name: str
    shape: tuple[int, ...]
    grad: bool
    exact: bool = False
    contiguous: bool = True
    bound: float = 2.0
    leaf: bool = False
    deps: frozenset[str] = frozenset()
    anc: frozenset[str] = frozenset()  # names of every value this one is computed from, itself too

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


@dataclass
class Program:
    """A generated program: its source, dtype and a few facts for the report."""

    source: str
    dtype: str
    mode: str
    ops: tuple[str, ...]
    expects_error: bool = False
    features: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()  # the template kinds emitted, in order (``shape/permute``)

    def reproducer(self, subject: str) -> str:
        """Standalone Python that runs this program on ``subject`` and on torch and diffs them."""
        return REPRO_TEMPLATE.format(source=self.source.rstrip(), subject=subject,
                                     dtype=self.dtype)


REPRO_TEMPLATE = '''\
# Reproducer written by retrograd-conformance. Run: python this_file.py
# It runs `program` on the subject and on torch (float64), prints both and the verdict (and,
# on a mismatch, the first differing digit), and exits 1 on a mismatch.
from retrograd_conformance.programs.check import run_program_source


{source}


if __name__ == "__main__":
    raise SystemExit(0 if run_program_source(program, subject={subject!r}, dtype={dtype!r},
                                             verbose=True) else 1)
'''


def _lit(arr: np.ndarray) -> str:
    """A Python literal for ``arr`` (nested lists of short floats)."""
    if arr.ndim == 0:
        return repr(float(arr))
    return repr(arr.tolist())


@dataclass
class Builder:
    """Accumulates lines of a program while tracking the values it defines."""

    c: Chooser
    dtype: str
    rng: np.random.Generator
    lines: list[str] = field(default_factory=list)
    vals: list[Val] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)
    features: set[str] = field(default_factory=set)
    # mul steps whose operands are grad-requiring leaves: (output, leaf) candidates for the
    # in-place-under-no_grad check (both libraries must have saved the leaf).
    saved_leaves: list[tuple[str, str]] = field(default_factory=list)
    used_values: set[float] = field(default_factory=set)
    counter: int = 0
    # the template kinds emitted, and for each the rank of its first operand
    kinds: list[str] = field(default_factory=list)
    kind_ranks: list[tuple[str, int]] = field(default_factory=list)
    _pending: tuple[str, int] | None = None
    _rotation: int | None = None
    force: str | None = None  # a kind the next template must take where it applies

    def tag(self, template: str, kind: str, a: Val) -> str:
        """Note that the next value emitted is of ``template/kind`` applied to ``a``."""
        self._pending = (f"{template}/{kind}", a.ndim)
        return kind

    def pick_kind(self, options: Sequence[Any]) -> Any:
        """One of a template's kinds. hypothesis draws an index, as for any choice, but the
        index is read in a rotation of the list that the program's own random generator
        fixes: hypothesis reuses and mutates the choices of earlier examples, so left to
        itself it keeps drawing the same few kinds (in 500 programs some kinds never came up);
        rotated, every kind is about as likely in every program, and a shrunk program still
        has as few steps as hypothesis can find."""
        if self.force is not None and self.force in options:
            return self.force
        if self._rotation is None:
            self._rotation = int(self.rng.integers(0, 2**16))
        i = self.c.integer(0, len(options) - 1)
        return options[(i + self._rotation) % len(options)]

    def untag(self) -> None:
        """Forget a kind noted by a template that emitted nothing."""
        self._pending = None

    # ---- choices ------------------------------------------------------------------------------
    def pick(self, options: Sequence[Any]) -> Any:
        return options[self.c.integer(0, len(options) - 1)]

    def flip(self) -> bool:
        return self.c.integer(0, 1) == 1

    def fresh(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # ---- data ---------------------------------------------------------------------------------
    def data(self, shape: tuple[int, ...], lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
        """Distinct three-decimal values away from 0, so leaves never tie or sit on a kink."""
        out = np.empty(math.prod(shape))
        for i in range(out.size):
            while True:
                v = round(float(self.rng.uniform(lo, hi)), 3)
                if abs(v) >= 0.05 and v not in self.used_values:
                    self.used_values.add(v)
                    out[i] = v
                    break
        return out.reshape(shape)

    def leaf(self, shape: tuple[int, ...], requires_grad: bool) -> Val:
        name = self.fresh("x")
        rg = ", requires_grad=True" if requires_grad else ""
        self.lines.append(f"{name} = lib.tensor({_lit(self.data(shape))}{rg})")
        v = Val(name, shape, requires_grad, leaf=True,
                deps=frozenset({name}) if requires_grad else frozenset(), anc=frozenset({name}))
        self.vals.append(v)
        return v

    # ---- emitting -----------------------------------------------------------------------------
    def emit(self, op: str, expr: str, shape: tuple[int, ...], srcs: Sequence[Val], *,
             exact: bool | None = None, contiguous: bool = True, bound: float | None = None) -> Val:
        name = self.fresh()
        self.lines.append(f"{name} = {expr}")
        self.ops.append(op)
        if self._pending is not None:
            self.kinds.append(self._pending[0])
            self.kind_ranks.append(self._pending)
            self._pending = None
        v = Val(
            name, tuple(shape), any(s.grad for s in srcs),
            exact=any(s.exact for s in srcs) if exact is None else exact,
            contiguous=contiguous,
            bound=max((s.bound for s in srcs), default=1.0) if bound is None else bound,
            deps=frozenset().union(*(s.deps for s in srcs)),
            anc=frozenset({name}).union(*(s.anc for s in srcs)),
        )
        self.vals.append(v)
        return v


# ---- op templates ---------------------------------------------------------------------------
# Each template takes the builder and a first operand, and returns the new value, or None when
# it does not apply (then the caller tries another).

Template = Callable[[Builder, Val], "Val | None"]


def _smooth_unary(b: Builder, a: Val) -> Val | None:
    kind = b.tag("unary", b.pick_kind([k for k in SMOOTH_KINDS if not (
        (k == "pow2" and a.bound**2 > MAX_BOUND) or (k == "pow3" and a.bound**3 > MAX_BOUND))]),
        a)
    n = a.name
    if kind == "exp":
        return b.emit("exp", f"lib.exp(lib.tanh({n}))", a.shape, [a], bound=math.e)
    if kind == "log":
        return b.emit("log", f"lib.log({n} * {n} + 1.0)", a.shape, [a],
                      bound=math.log(a.bound**2 + 1) + 1)
    if kind == "sqrt":
        return b.emit("sqrt", f"lib.sqrt({n} * {n} + 0.5)", a.shape, [a],
                      bound=math.sqrt(a.bound**2 + 0.5))
    if kind in ("sin", "cos", "tanh", "sigmoid"):
        return b.emit(kind, f"lib.{kind}({n})", a.shape, [a], bound=1.0)
    if kind == "neg":
        return b.emit("neg", b.pick([f"-{n}", f"lib.neg({n})"]), a.shape, [a])
    if kind == "pow2":
        if a.bound**2 > MAX_BOUND:
            return None
        return b.emit("pow", f"{n} ** 2", a.shape, [a], bound=a.bound**2)
    if kind == "pow3":
        if a.bound**3 > MAX_BOUND:
            return None
        return b.emit("pow", f"{n} ** 3", a.shape, [a], bound=a.bound**3)
    if kind == "rpow":
        return b.emit("rpow", f"1.5 ** lib.tanh({n})", a.shape, [a], bound=1.5)
    if kind == "scalar":
        expr, bound = b.pick([(f"{n} * 1.5", 1.5 * a.bound), (f"2.0 - {n}", a.bound + 2),
                              (f"{n} / 2.0", a.bound / 2), (f"0.5 + {n}", a.bound + 0.5),
                              (f"-0.75 * {n}", 0.75 * a.bound)])
        if bound > MAX_BOUND:
            return None
        return b.emit("scalar-arith", expr, a.shape, [a], bound=bound)
    if kind == "reciprocal":
        return b.emit("div", f"1.0 / ({n} * {n} + 1.0)", a.shape, [a], bound=1.0)
    fn = b.pick(["exp", "tanh", "sigmoid", "sin", "cos"])
    expr = f"{n}.tanh().exp()" if fn == "exp" else f"{n}.{fn}()"
    return b.emit(fn, expr, a.shape, [a], bound=math.e if fn == "exp" else 1.0)


def _kinked_unary(b: Builder, a: Val) -> Val | None:
    if a.exact:
        return None
    kind = b.tag("kinked", b.pick_kind(KINKED_KINDS), a)
    n = a.name
    if kind == "relu":
        return b.emit("relu", f"lib.relu({n})", a.shape, [a], exact=True)
    if kind == "relu-f":
        return b.emit("relu", f"lib.nn.functional.relu({n})", a.shape, [a], exact=True)
    if kind == "abs":
        return b.emit("abs", f"lib.abs({n})", a.shape, [a])
    if kind == "clamp":
        return b.emit("clamp", f"lib.clamp({n}, min=-0.5, max=0.75)", a.shape, [a], exact=True,
                      bound=0.75)
    return b.emit("clamp", f"{n}.clamp(min=0.25)", a.shape, [a], exact=True)


def _reduction(b: Builder, a: Val) -> Val | None:
    if a.ndim == 0:
        return None
    kind = b.tag("reduction", b.pick_kind([k for k in REDUCTION_KINDS if not (
        (k == "amax" and a.exact) or (k in ("logsumexp", "softmax", "log_softmax")
                                      and a.bound > 20))]), a)
    d = b.c.integer(-a.ndim, a.ndim - 1)
    keep = b.flip()
    reduced = list(a.shape)
    if keep:
        reduced[d] = 1
    else:
        del reduced[d]
    n = a.name
    kw = ", keepdim=True" if keep else ""
    if kind == "sum":
        if b.flip():
            return b.emit("sum", f"{n}.sum()", (), [a], bound=a.bound * a.numel)
        form = b.pick([f"{n}.sum(dim={d}{kw})", f"lib.sum({n}, dim={d}{kw})"])
        return b.emit("sum", form, reduced, [a], bound=a.bound * a.shape[d])
    if kind == "mean":
        if b.flip():
            return b.emit("mean", f"{n}.mean()", (), [a])
        return b.emit("mean", f"lib.mean({n}, dim={d}{kw})", reduced, [a])
    if kind == "amax":
        if a.exact:
            return None
        return b.emit("amax", f"lib.amax({n}, dim={d}{kw})", reduced, [a])
    if kind == "logsumexp":
        if a.bound > 20:
            return None
        return b.emit("logsumexp", f"lib.logsumexp({n}, dim={d}{kw})", reduced, [a],
                      bound=a.bound + math.log(a.shape[d]) + 1)
    if a.bound > 20:
        return None
    return b.emit(kind, f"lib.nn.functional.{kind}({n}, dim={d})", a.shape, [a],
                  bound=1.0 if kind == "softmax" else 2 * a.bound + 3)


def _shape_applies(kind: str, a: Val) -> bool:
    """Whether shape kind ``kind`` can be applied to ``a``."""
    if kind == "view":
        return a.contiguous
    if kind in ("permute", "transpose"):
        return a.ndim >= 2
    if kind == "T":
        return a.ndim == 2
    if kind == "expand":
        return a.ndim <= 2
    if kind in ("index", "ellipsis", "int-array"):
        return a.ndim >= 1
    if kind == "slice":
        return a.ndim >= 1 and a.shape[0] >= 2
    if kind == "mask":
        return a.ndim >= 1 and a.numel <= 24
    return True


def _shape_op(b: Builder, a: Val) -> Val | None:
    # only the kinds that apply to ``a``: axis rearrangements only on rank >= 2 (T on rank 2)
    kind = b.tag("shape", b.pick_kind([k for k in SHAPE_KINDS if _shape_applies(k, a)]), a)
    n, s = a.name, a.shape
    if kind == "reshape":
        if a.numel % 2 or a.ndim == 0:
            return b.emit("reshape", f"{n}.reshape(-1)", (a.numel,), [a])
        new = (2, a.numel // 2)
        return b.emit("reshape", b.pick([f"{n}.reshape{new}", f"lib.reshape({n}, {new})"]),
                      new, [a], contiguous=a.contiguous)
    if kind == "view":
        if not a.contiguous:
            return None
        return b.emit("view", f"{n}.view(-1)", (a.numel,), [a])
    if kind == "flatten":
        return b.emit("flatten", b.pick([f"{n}.flatten()", f"lib.flatten({n})"]), (a.numel,), [a])
    if kind == "permute":
        if a.ndim < 2:
            return None
        perm = tuple(reversed(range(a.ndim)))
        form = b.pick([f"{n}.permute{perm}", f"lib.permute({n}, {perm})"])
        return b.emit("permute", form, tuple(s[i] for i in perm), [a], contiguous=False)
    if kind == "transpose":
        if a.ndim < 2:
            return None
        new = (s[-1],) + s[1:-1] + (s[0],)
        form = b.pick([f"{n}.transpose(0, -1)", f"lib.transpose({n}, 0, -1)"])
        return b.emit("transpose", form, new, [a], contiguous=False)
    if kind == "T":
        if a.ndim != 2:
            return None
        return b.emit("T", f"{n}.T", (s[1], s[0]), [a], contiguous=False)
    if kind == "unsqueeze":
        d = b.c.integer(0, a.ndim)
        new = s[:d] + (1,) + s[d:]
        form = b.pick([f"{n}.unsqueeze({d})", f"lib.unsqueeze({n}, {d})"])
        return b.emit("unsqueeze", form, new, [a], contiguous=a.contiguous)
    if kind == "squeeze":
        ones = [i for i, k in enumerate(s) if k == 1]
        if not ones:  # a size-1 axis made for the purpose: unsqueeze(d), then squeeze(d)
            d = b.c.integer(0, a.ndim)
            n = f"{n}.unsqueeze({d})"
        else:
            d = b.pick(ones)
            s = s[:d] + s[d + 1:]
        form = b.pick([f"{n}.squeeze({d})", f"lib.squeeze({n}, {d})"])
        return b.emit("squeeze", form, s, [a], contiguous=a.contiguous)
    if kind == "expand":
        if a.ndim > 2:
            return None
        new = (2,) + s
        return b.emit("expand", f"{n}.expand{new}", new, [a], contiguous=False,
                      exact=a.exact)
    if kind == "index":
        if a.ndim == 0:
            return None
        i = b.c.integer(-s[0], s[0] - 1)
        return b.emit("getitem", f"{n}[{i}]", s[1:], [a], contiguous=a.contiguous)
    if kind == "slice":
        if a.ndim == 0 or s[0] < 2:
            return None
        return b.emit("getitem", f"{n}[1:]", (s[0] - 1,) + s[1:], [a], contiguous=a.contiguous)
    if kind == "none":
        return b.emit("getitem", f"{n}[None]", (1,) + s, [a], contiguous=a.contiguous)
    if kind == "ellipsis":
        if a.ndim == 0:
            return None
        return b.emit("getitem", f"{n}[..., 0]", s[:-1], [a], contiguous=False)
    if kind == "int-array":
        if a.ndim == 0:
            return None
        idx = [b.c.integer(0, s[0] - 1) for _ in range(3)]
        b.features.add("int-array-index")
        return b.emit("getitem", f"{n}[lib.int_tensor({idx})]", (3,) + s[1:], [a])
    if a.ndim == 0 or a.numel > 24:
        return None
    mask = np.array([b.flip() for _ in range(a.numel)]).reshape(s)
    if not mask.any():
        return None
    b.features.add("bool-mask-index")
    return b.emit("getitem", f"{n}[lib.tensor({mask.tolist()!r}, dtype=lib.bool)]",
                  (int(mask.sum()),), [a])


def _partners(b: Builder, a: Val, ok: Callable[[Val], bool]) -> list[Val]:
    return [v for v in b.vals if ok(v)]


def _broadcast(s1: tuple[int, ...], s2: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(np.broadcast_shapes(s1, s2))
    except ValueError:
        return None


def _binary(b: Builder, a: Val) -> Val | None:
    cands = _partners(b, a, lambda v: _broadcast(a.shape, v.shape) is not None)
    other = b.pick(cands)  # may be ``a`` itself: repeated operands
    shape = _broadcast(a.shape, other.shape)
    assert shape is not None
    same = other is a
    if same:
        b.features.add("repeated-operand")
    if shape not in (a.shape, other.shape) or a.shape != other.shape:
        b.features.add("broadcasting")
    kind = b.tag("binary", b.pick_kind(BINARY_KINDS), a)
    x, y = a.name, other.name
    if kind == "add":
        return b.emit("add", f"{x} + {y}", shape, [a, other], bound=a.bound + other.bound,
                      exact=a.exact and other.exact)
    if kind == "sub":
        if same:
            return None
        return b.emit("sub", f"{x} - {y}", shape, [a, other], bound=a.bound + other.bound,
                      exact=a.exact and other.exact)
    if kind == "mul":
        if a.bound * other.bound > MAX_BOUND:
            return None
        out = b.emit("mul", f"{x} * {y}", shape, [a, other], bound=a.bound * other.bound,
                     exact=a.exact or other.exact)
        for leaf in {a.name: a, other.name: other}.values():
            if leaf.leaf and leaf.grad and (same or (a.grad and other.grad)):
                b.saved_leaves.append((out.name, leaf.name))
        return out
    if kind == "div":
        return b.emit("div", f"{x} / ({y} * {y} + 1.0)", shape, [a, other], bound=a.bound)
    if kind == "pow":
        if other.bound > 3 or (a.bound**2 + 1) ** other.bound > MAX_BOUND:
            return None
        return b.emit("pow", f"({x} * {x} + 1.0) ** {y}", shape, [a, other],
                      bound=(a.bound**2 + 1) ** other.bound)
    if same or a.exact or other.exact:
        return None
    if kind in ("maximum", "minimum"):
        return b.emit(kind, f"lib.{kind}({x}, {y})", shape, [a, other],
                      bound=max(a.bound, other.bound))
    return b.emit("where", f"lib.where({x} > 0.1, {x}, {y})", shape, [a, other],
                  bound=max(a.bound, other.bound))


def _matmul(b: Builder, a: Val) -> Val | None:
    if a.ndim == 0:
        return None
    s = a.shape
    k = s[-1]

    def fits(v: Val) -> bool:
        if v.ndim == 0:
            return False
        if v.ndim == 1:
            return v.shape[0] == k
        return v.shape[-2] == k and (v.ndim == 2 or a.ndim <= 2 or v.shape[:-2] == s[:-2])

    cands = _partners(b, a, fits)
    if cands and b.c.integer(0, 2) > 0:
        other = b.pick(cands)
        left, right = a, other
        b.tag("matmul", "pair", a)
    elif a.ndim == 1:
        left, right = a, a
        b.tag("matmul", "self-vector", a)
    else:
        b.tag("matmul", "self-transpose", a)
        name = a.name
        expr = b.pick([f"{name} @ {name}.transpose(-1, -2)", f"{name}.transpose(-1, -2) @ {name}"])
        new = s[:-1] + (s[-2],) if expr.startswith(f"{name} @") else s[:-2] + (s[-1], s[-1])
        bound = a.bound**2 * (s[-1] if expr.startswith(f"{name} @") else s[-2])
        if bound > MAX_BOUND:
            return None
        b.features.add("repeated-operand")
        return b.emit("matmul", expr, new, [a], bound=bound, exact=a.exact)
    shape = tuple(np.matmul(np.zeros(left.shape), np.zeros(right.shape)).shape)
    bound = left.bound * right.bound * k
    if bound > MAX_BOUND:
        return None
    form = b.pick([f"{left.name} @ {right.name}", f"lib.matmul({left.name}, {right.name})"])
    if len(shape) >= 3:
        b.features.add("batched-matmul")
    return b.emit("matmul", form, shape, [left, right], bound=bound,
                  exact=left.exact or right.exact)


def _join(b: Builder, a: Val) -> Val | None:
    if b.flip():
        b.tag("join", "stack", a)
        cands = _partners(b, a, lambda v: v.shape == a.shape)
        other = b.pick(cands)
        d = b.c.integer(0, a.ndim)
        form = b.pick([f"lib.stack([{a.name}, {other.name}], dim={d})",
                       f"lib.stack(({a.name}, {other.name}), {d})"])
        new = a.shape[:d] + (2,) + a.shape[d:]
        return b.emit("stack", form, new, [a, other], bound=max(a.bound, other.bound))
    if a.ndim == 0:
        return None
    b.tag("join", "cat", a)
    cands = _partners(b, a, lambda v: v.ndim == a.ndim and v.shape[1:] == a.shape[1:])
    other = b.pick(cands)
    new = (a.shape[0] + other.shape[0],) + a.shape[1:]
    return b.emit("cat", f"lib.cat([{a.name}, {other.name}], dim=0)", new, [a, other],
                  bound=max(a.bound, other.bound))


def _nn_applies(b: Builder, kind: str, a: Val) -> bool:
    if kind == "linear":
        return a.ndim in (1, 2) and a.bound <= 10
    if kind == "mse_loss":
        return any(v.shape == a.shape and v is not a for v in b.vals)
    return a.ndim == 2 and a.bound <= 20


def _nn(b: Builder, a: Val) -> Val | None:
    options = [k for k in NN_KINDS if _nn_applies(b, k, a)]
    if not options:
        return None
    kind = b.tag("nn", b.pick_kind(options), a)
    F = "lib.nn.functional"
    if kind == "linear":
        if a.ndim not in (1, 2) or a.bound > 10:
            return None
        fan_in = a.shape[-1]
        out = b.pick([2, 3])
        w = b.leaf((out, fan_in), True)
        if b.flip():
            bias = b.leaf((out,), b.flip())
            expr = f"{F}.linear({a.name}, {w.name}, {bias.name})"
            srcs = [a, w, bias]
        else:
            expr = f"{F}.linear({a.name}, {w.name})"
            srcs = [a, w]
        shape = a.shape[:-1] + (out,)
        return b.emit("linear", expr, shape, srcs, bound=a.bound * 2 * fan_in + 2)
    if kind == "mse_loss":
        cands = _partners(b, a, lambda v: v.shape == a.shape and v is not a)
        if not cands:
            return None
        other = b.pick(cands)
        return b.emit("mse_loss", f"{F}.mse_loss({a.name}, {other.name})", (), [a, other],
                      bound=(a.bound + other.bound) ** 2)
    if a.ndim != 2 or a.bound > 20:
        return None
    n, classes = a.shape
    target = [b.c.integer(0, classes - 1) for _ in range(n)]
    reduction = b.pick(["mean", "sum", "none"])
    shape = (n,) if reduction == "none" else ()
    return b.emit("cross_entropy",
                  f"{F}.cross_entropy({a.name}, lib.int_tensor({target}), "
                  f"reduction={reduction!r})", shape, [a], bound=2 * a.bound + 3)


#: template name (as in the kinds) -> template
TEMPLATE_BY_NAME: dict[str, Template] = {}

TEMPLATES: tuple[tuple[Template, int], ...] = (
    (_smooth_unary, 5),
    (_kinked_unary, 2),
    (_binary, 6),
    (_reduction, 3),
    (_shape_op, 6),
    (_matmul, 2),
    (_join, 1),
    (_nn, 2),
)

TEMPLATE_BY_NAME.update({
    "unary": _smooth_unary, "kinked": _kinked_unary, "reduction": _reduction,
    "shape": _shape_op, "binary": _binary, "matmul": _matmul, "join": _join, "nn": _nn,
})
