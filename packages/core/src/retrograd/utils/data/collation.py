"""Turning samples into batches: ``default_collate`` (a list of samples -> one batched
sample, tensors stacked along a new dimension 0) and ``default_convert`` (one sample's
NumPy arrays -> tensors, what the loader applies when it does not batch).

Both recurse through mappings, named tuples and sequences, keeping the container type
where they can, exactly as PyTorch's do; ``default_collate_fn_map`` is the per-type table
``collate`` consults first, which users may extend."""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ...dtypes import float64
from ...ops import as_tensor, stack, tensor
from ...tensor import Tensor

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

#: NumPy dtype strings (``arr.dtype.str``) of bytes, unicode and object arrays, which have
#: no tensor form and are left as they are.
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, "
    "dicts or lists; found {}"
)

CollateFnMap = dict[type | tuple[type, ...], Callable[..., Any]]


def default_convert(data: Any) -> Any:
    """``data`` with every NumPy array and NumPy scalar inside it made a tensor.

    Mappings, named tuples and sequences are rebuilt around their converted elements (a
    plain tuple becomes a list, as in PyTorch); string/object arrays, tensors and anything
    else are returned unchanged."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if (elem_type.__module__ == "numpy" and elem_type.__name__ != "str_"
            and elem_type.__name__ != "string_"):
        if (elem_type.__name__ == "ndarray"
                and np_str_obj_array_pattern.search(data.dtype.str) is not None):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # PyTorch's backwards compatibility
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(like: Any, values: dict[Any, Any]) -> Any:
    """A mapping of ``like``'s type holding ``values``: a copy updated in place when it is
    mutable, else the type called on a dict; a plain dict when the type refuses."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(values)
            return clone
        return type(like)(values)
    except TypeError:
        return values


def _rebuild_sequence(like: Any, items: list[Any]) -> Any:
    """A sequence of ``like``'s type holding ``items`` (as ``_rebuild_mapping``)."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(like)(items)
    except TypeError:
        return items


def collate(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Collate a list of samples that share one structure into one batched sample.

    The first sample's type picks the rule: an exact entry of ``collate_fn_map``, else the
    first entry it is an instance of; else mappings are collated key by key, named tuples
    field by field, sequences position by position (all of one length, else
    ``RuntimeError``). Any other type raises ``TypeError``."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {
            key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
            for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        elem_size = len(elem)
        if not all(len(e) == elem_size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # PyTorch's backwards compatibility: tuples collate to lists
        return _rebuild_sequence(elem, columns)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Tensors: stacked along a new dimension 0 (so all of one shape)."""
    return stack(list(batch), 0)


def collate_numpy_array_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """NumPy arrays: made tensors, then collated as tensors; string and object arrays
    raise ``TypeError``."""
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """NumPy scalars: one tensor of their dtype."""
    return as_tensor(batch)


def collate_float_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Python floats: a float64 tensor (a float has double precision)."""
    return tensor(batch, dtype=float64)


def collate_int_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Python ints (and bools): ``tensor(batch)``, so int64 (bool for bools; float32 if a
    later element is a float)."""
    return tensor(batch)


def collate_str_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Strings and bytes: kept, as the list they came in."""
    return batch


default_collate_fn_map: CollateFnMap = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: Any) -> Any:
    """Collate a list of samples into one batch, as PyTorch's ``default_collate``:

    tensors -> stacked along a new dimension 0; NumPy arrays and scalars -> tensors;
    ``int`` -> int64 tensor, ``float`` -> float64 tensor, ``bool`` -> bool tensor;
    ``str``/``bytes`` -> the list unchanged; dicts, named tuples, lists -> the same
    container of collated fields (tuples -> lists)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
