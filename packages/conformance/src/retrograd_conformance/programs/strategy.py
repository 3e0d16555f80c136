"""The hypothesis strategy: leaves, a DAG of steps, then one way of differentiating it.

Every choice is a bounded integer drawn from hypothesis, with the simplest option first, so a
failing program shrinks towards few leaves, few steps, smooth ops and a plain ``backward()``.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
from hypothesis import strategies as st

from .builder import ALL_KINDS, TEMPLATE_BY_NAME, TEMPLATES, Builder, Program, Val, _lit

BASE_SHAPES: tuple[tuple[int, ...], ...] = ((3,), (2, 3), (3, 2), (2, 2, 3), ())
MODES = ("backward", "backward-seed", "multi-root", "grad", "create-graph", "inplace")


class RandomChooser:
    """Choices from a NumPy generator (the kind-coverage programs, outside hypothesis)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return lo if lo >= hi else int(self.rng.integers(lo, hi + 1))


class DrawChooser:
    """Adapts hypothesis' ``draw`` to the builder's :class:`Chooser`."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return lo if lo >= hi else self.draw(st.integers(lo, hi))


def _variant(b: Builder, base: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts with ``base``: itself, a suffix, or with some dims set to 1."""
    kind = b.c.integer(0, 3)
    if kind == 0 or not base:
        return base
    if kind == 1:
        return base[b.c.integer(1, len(base)) :]
    return tuple(1 if b.flip() else d for d in base)


def _weighted_templates() -> list[Any]:
    out = []
    for template, weight in TEMPLATES:
        out.extend([template] * weight)
    return out


WEIGHTED = _weighted_templates()


def _seed_for(b: Builder, v: Val) -> str:
    return f"lib.tensor({_lit(b.data(v.shape, 0.1, 1.5))})"


@st.composite
def programs(draw: Any, max_steps: int = 8, modes: tuple[str, ...] = MODES) -> Program:
    """A random program (see :mod:`.builder`) as a :class:`Program`."""
    c = DrawChooser(draw)
    dtype = ("float64", "float32")[c.integer(0, 1)]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    b = Builder(c, dtype, rng)
    base = BASE_SHAPES[c.integer(0, len(BASE_SHAPES) - 1)]
    for i in range(c.integer(1, 3)):
        b.leaf(_variant(b, base), requires_grad=(i == 0 or b.flip()))
    retained: list[str] = []
    for _ in range(c.integer(1, max_steps)):
        for _attempt in range(8):
            template = b.pick_kind(WEIGHTED)
            a = b.vals[-1 - c.integer(0, len(b.vals) - 1)]
            b.untag()
            v = template(b, a)
            if v is not None:
                break
        else:
            continue
        if v.grad and c.integer(0, 5) == 5:
            b.lines.append(f"{v.name}.retain_grad()")
            retained.append(v.name)
            b.features.add("retain_grad")
    return _finish(b, c, retained, modes)


def kind_program(kind: str, modes: tuple[str, ...] = MODES, attempts: int = 64
                 ) -> Program | None:
    """A program with one step of ``kind`` (``shape/permute``): leaves, up to two random
    steps, then the template of ``kind`` forced to it, then a random way to differentiate.
    Deterministic (seeded by the kind); None when no attempt could apply the kind -- the
    generator can no longer produce it."""
    template_name = kind.split("/", 1)[0]
    wanted = kind.split("/", 1)[1]
    template = TEMPLATE_BY_NAME[template_name]
    for attempt in range(attempts):
        rng = np.random.default_rng(zlib.crc32(f"{kind}/{attempt}".encode()))
        c = RandomChooser(rng)
        b = Builder(c, ("float64", "float32")[attempt % 2], rng)
        base = BASE_SHAPES[c.integer(0, len(BASE_SHAPES) - 1)]
        for i in range(c.integer(1, 3)):
            b.leaf(_variant(b, base), requires_grad=(i == 0 or b.flip()))
        for _ in range(c.integer(0, 2)):
            b.untag()
            TEMPLATES[c.integer(0, len(TEMPLATES) - 1)][0](b, b.vals[-1])
        b.untag()
        b.force = wanted
        operands = [v for v in b.vals if v.grad] or b.vals
        v = template(b, operands[-1 - c.integer(0, len(operands) - 1)])
        b.force = None
        if v is None or not v.grad or kind not in b.kinds:
            continue
        return _finish(b, c, [], modes, root=v)
    return None


def kind_programs(modes: tuple[str, ...] = MODES) -> dict[str, Program | None]:
    """:func:`kind_program` of every kind."""
    return {kind: kind_program(kind, modes) for kind in ALL_KINDS}


def _finish(b: Builder, c: Any, retained: list[str], modes: tuple[str, ...],
            root: Val | None = None) -> Program:
    b.untag()
    interior = [v for v in b.vals if v.grad and not v.leaf]
    grad_leaves = [v for v in b.vals if v.leaf and v.grad]
    if not interior:
        modes = ("backward", "backward-seed")
    mode = modes[c.integer(0, len(modes) - 1)]
    pool = interior or grad_leaves
    if root is None or root not in pool:
        root = pool[-1 - c.integer(0, len(pool) - 1)]
    out: list[tuple[str, str]] = []
    lines = b.lines
    expects_error = False

    if mode == "inplace":
        victims = [leaf for m, leaf in b.saved_leaves if m in root.anc]
        if not victims:
            # make one: x*x saves x in every implementation, and it feeds the root
            sq = grad_leaves[c.integer(0, len(grad_leaves) - 1)]
            root = b.emit("mul", f"{root.name} * ({sq.name} * {sq.name}).sum()", root.shape,
                          [root, sq])
            victims = [sq.name]
        leaf = victims[c.integer(0, len(victims) - 1)]
        change = ("add_(0.25)", "mul_(1.5)", "sub_(0.5)", "div_(2.0)", "zero_()",
                  "fill_(0.5)")[c.integer(0, 5)]
        lines.append("with lib.no_grad():")
        lines.append(f"    {leaf}.{change}")
        call = f"{root.name}.sum().backward()" if root.ndim else f"{root.name}.backward()"
        out.append(("backward", f"lib.capture(lambda: {call})"))
        expects_error = True
        b.features.add("inplace-no_grad")

    if mode in ("backward", "backward-seed"):
        if mode == "backward-seed" or root.leaf:
            lines.append(f"{root.name}.backward({_seed_for(b, root)})")
            b.features.add("nonscalar-seed" if root.ndim else "explicit-seed")
        elif root.ndim:
            lines.append(f"{root.name}.sum().backward()")
        else:
            lines.append(f"{root.name}.backward()")
    elif mode == "multi-root":
        others = [v for v in pool if v is not root]
        if not others:
            lines.append(f"{root.name}.backward({_seed_for(b, root)})")
        else:
            second = others[-1 - c.integer(0, len(others) - 1)]
            s1, s2 = _seed_for(b, root), _seed_for(b, second)
            if c.integer(0, 1) == 0:
                lines.append(f"lib.autograd.backward([{root.name}, {second.name}], [{s1}, {s2}])")
            else:
                lines.append(f"{root.name}.backward({s1}, retain_graph=True)")
                lines.append(f"{second.name}.backward({s2})")
            b.features.add("several-roots")
    elif mode == "grad":
        inputs = [v.name for v in grad_leaves]
        captures = [v for v in interior if v is not root and v.name in root.anc]
        if captures and c.integer(0, 1):
            inputs.append(captures[c.integer(0, len(captures) - 1)].name)
            b.features.add("interior-capture")
        seed = _seed_for(b, root)
        lines.append(f"gs = lib.autograd.grad({root.name}, [{', '.join(inputs)}], "
                     f"grad_outputs={seed}, allow_unused=True)")
        out.append(("grad", "list(gs)"))
    elif mode == "create-graph":
        names = [v.name for v in grad_leaves]
        seed = _seed_for(b, root)
        lines.append(f"gs = lib.autograd.grad({root.name}, [{', '.join(names)}], "
                     f"grad_outputs={seed}, create_graph=True, allow_unused=True)")
        lines.append("s = " + " + ".join(f"({n} * 0.0).sum()" for n in names))
        for i, v in enumerate(grad_leaves):
            lines.append(f"if gs[{i}] is not None:")
            lines.append(f"    s = s + (gs[{i}] * {_seed_for(b, v)}).sum()")
        lines.append(f"hs = lib.autograd.grad(s, [{', '.join(names)}], allow_unused=True, "
                     "materialize_grads=True)")
        out += [("first derivatives", "list(gs)"), ("second derivatives", "list(hs)")]
        b.features.add("create_graph")

    if mode in ("backward", "backward-seed", "multi-root"):
        out += [(f"{v.name}.grad", f"{v.name}.grad") for v in grad_leaves]
        out += [(f"{n}.grad", f"{n}.grad") for n in retained]
    if not expects_error:
        out.insert(0, (root.name, root.name))
    body = ["def program(lib):"] + [f"    {line}" for line in lines]
    body.append("    return {")
    body += [f"        {key!r}: {expr}," for key, expr in out]
    body.append("    }")
    return Program("\n".join(body) + "\n", b.dtype, mode, tuple(b.ops), expects_error,
                   tuple(sorted(b.features)), tuple(b.kinds))
