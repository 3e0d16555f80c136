"""Op-database entries of the products ops (``retrograd/ops/products.py``): the entries, their
``<op>/sizes`` sweep rows and their kernels rows.

The norms' samples keep clear of their kinks (values at least 0.05 from zero, distinct, so
the inf-norm has no ties)."""

from __future__ import annotations

from typing import Any

from .base import OpInfo, Sample

__all__ = ["ENTRIES", "KERNEL_ROWS", "SIZES_ROWS", "sizes_rows"]

INF = float("inf")


def _vector_norm(lib: Any, *args: Any, **kwargs: Any) -> Any:
    """``lib.linalg.vector_norm`` (the submodule imported first where the package does not)."""
    linalg = getattr(lib, "linalg", None)
    if linalg is None:
        import importlib

        linalg = importlib.import_module(f"{lib.__name__}.linalg")
    return linalg.vector_norm(*args, **kwargs)

ENTRIES: tuple[OpInfo, ...] = (
    OpInfo("bmm", (
        Sample("(2, 3, 4) @ (2, 4, 2)", ((2, 3, 4), (2, 4, 2)), lambda lib, a, b: lib.bmm(a, b)),
        Sample("method", ((1, 2, 3), (1, 3, 1)), lambda lib, a, b: a.bmm(b)),
        Sample("transposed operand", ((2, 4, 3), (2, 4, 2)),
               lambda lib, a, b: lib.bmm(a.transpose(1, 2), b)),
    )),
    OpInfo("addmm", (
        Sample("bias (2,)", ((2,), (3, 4), (4, 2)), lambda lib, i, a, b: lib.addmm(i, a, b)),
        Sample("beta,alpha", ((3, 2), (3, 4), (4, 2)),
               lambda lib, i, a, b: lib.addmm(i, a, b, beta=0.5, alpha=-2.0)),
        Sample("method,0-d input", ((), (2, 3), (3, 2)), lambda lib, i, a, b: i.addmm(a, b)),
        Sample("column input", ((3, 1), (3, 2), (2, 2)),
               lambda lib, i, a, b: lib.addmm(i, a, b, alpha=3)),
    )),
    OpInfo("baddbmm", (
        Sample("full input", ((2, 3, 2), (2, 3, 4), (2, 4, 2)),
               lambda lib, i, a, b: lib.baddbmm(i, a, b)),
        Sample("broadcast input,beta,alpha", ((2,), (2, 3, 4), (2, 4, 2)),
               lambda lib, i, a, b: lib.baddbmm(i, a, b, beta=2.0, alpha=0.5)),
        Sample("method", ((1, 2, 1), (1, 2, 3), (1, 3, 2)), lambda lib, i, a, b: i.baddbmm(a, b)),
    )),
    OpInfo("einsum", (
        Sample("ij,jk->ik", ((2, 3), (3, 4)), lambda lib, a, b: lib.einsum("ij,jk->ik", a, b)),
        Sample("batched implicit", ((2, 2, 3), (2, 3, 2)),
               lambda lib, a, b: lib.einsum("bij,bjk", a, b)),
        Sample("trace", ((3, 3),), lambda lib, a: lib.einsum("ii", a)),
        Sample("diagonal", ((3, 3),), lambda lib, a: lib.einsum("ii->i", a)),
        Sample("sum out", ((2, 3),), lambda lib, a: lib.einsum("ij->j", a)),
        Sample("outer", ((2,), (3,)), lambda lib, a, b: lib.einsum("i,j->ij", a, b)),
        Sample("ellipsis", ((2, 2, 3), (3,)), lambda lib, a, b: lib.einsum("...j,j->...", a, b)),
        Sample("ellipsis broadcast", ((2, 1, 3), (4, 3)),
               lambda lib, a, b: lib.einsum("...ij,...ij->...i", a, b)),
        Sample("three operands,list", ((2, 3), (3,), (3, 2)),
               lambda lib, a, b, c: lib.einsum("ij,j,jk->ik", [a, b, c])),
        Sample("transpose", ((2, 3),), lambda lib, a: lib.einsum("ij->ji", a)),
    )),
    OpInfo("tensordot", (
        Sample("dims=1", ((2, 3), (3, 4)), lambda lib, a, b: lib.tensordot(a, b, 1)),
        Sample("dims=2", ((2, 3, 4), (3, 4, 2)), lambda lib, a, b: lib.tensordot(a, b)),
        Sample("dims lists", ((2, 3, 4), (4, 2, 3)),
               lambda lib, a, b: lib.tensordot(a, b, ([1, 2], [2, 0]))),
        Sample("dims=0", ((2,), (3,)), lambda lib, a, b: lib.tensordot(a, b, 0)),
    )),
    OpInfo("kron", (
        Sample("2-d", ((2, 3), (2, 2)), lambda lib, a, b: lib.kron(a, b)),
        Sample("1-d and 2-d", ((3,), (2, 2)), lambda lib, a, b: a.kron(b)),
        Sample("0-d", ((), (3,)), lambda lib, a, b: lib.kron(a, b)),
    )),
    OpInfo("norm", (
        Sample("fro", ((2, 3),), lambda lib, a: lib.norm(a)),
        Sample("p=1,dim=1", ((2, 3),), lambda lib, a: lib.norm(a, 1, dim=1)),
        Sample("p=inf,keepdim", ((2, 3),), lambda lib, a: a.norm(INF, 0, keepdim=True)),
        Sample("p=-inf", ((4,),), lambda lib, a: lib.norm(a, -INF)),
        Sample("p=0", ((2, 2),), lambda lib, a: lib.norm(a, 0) * a.sum()),
        Sample("p=3,dims", ((2, 3, 2),), lambda lib, a: lib.norm(a, 3, dim=(0, 2))),
        Sample("p=2,0-d", ((),), lambda lib, a: lib.norm(a, 2)),
        Sample("linalg.vector_norm", ((2, 3),),
               lambda lib, a: _vector_norm(lib, a, dim=-1)),
        Sample("linalg.vector_norm,ord=1,keepdim", ((2, 3),),
               lambda lib, a: _vector_norm(lib, a, 1, dim=0, keepdim=True)),
    )),
)


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` rows of these ops: a contraction or a norm over ``n`` elements at
    every size of ``SIZES``."""
    from .sweeps import SIZES, SweepSample, _pool, _row  # the sweeps import the entries

    calls: dict[str, tuple[Any, Any]] = {
        "bmm": (lambda n: ((1, 1, n), (1, n, 2)), lambda lib, a, b: lib.bmm(a, b)),
        "addmm": (lambda n: ((2,), (1, n), (n, 2)), lambda lib, i, a, b: lib.addmm(i, a, b)),
        "baddbmm": (lambda n: ((2,), (1, 1, n), (1, n, 2)),
                    lambda lib, i, a, b: lib.baddbmm(i, a, b, alpha=0.5)),
        "einsum": (lambda n: ((n,), (n, 2)), lambda lib, a, b: lib.einsum("i,ij->j", a, b)),
        "tensordot": (lambda n: ((n,), (n, 2)), lambda lib, a, b: lib.tensordot(a, b, 1)),
        "kron": (lambda n: ((n,), (2,)), lambda lib, a, b: lib.kron(a, b)),
        "norm": (lambda n: ((n,),), lambda lib, a: lib.norm(a) + lib.norm(a, 1)),
    }
    rows = []
    for name, (shapes, fn) in calls.items():
        samples = [SweepSample(f"n={n}", _pool(*shapes(n)), fn, n=n) for n in SIZES]
        rows.append(_row(name, "sizes", samples))
    return rows


#: The rows' builder, under the name the sweeps merge.
SIZES_ROWS = sizes_rows

#: op -> (forward kernels, backward kernels), merged into opdb.kernels.KERNEL_ROWS
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "bmm": (("matmul",), ("matmul", "matrix_transpose")),
    "addmm": (("matmul", "mul", "add"), ("matmul", "matrix_transpose", "reduce_to", "mul")),
    "baddbmm": (("matmul", "mul", "add", "expand"),
                ("matmul", "matrix_transpose", "reduce_to", "mul")),
    "einsum": (("einsum",), ("einsum", "eye_like", "ones_vector_like")),
    "tensordot": (("einsum",), ("einsum",)),
    "kron": (("mul",), ("mul", "reduce_to")),
    "norm": (("sqrt", "sum", "mul", "abs", "amax", "neg", "ne", "where", "pow"),
             ("where", "eq", "div", "mul", "sign", "abs", "sum", "pow")),
}
