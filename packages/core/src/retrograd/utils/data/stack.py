"""``StackDataset``: several equal-length datasets read side by side, each sample a tuple
(or a dict) of theirs."""

from __future__ import annotations

from typing import Any

from .dataset import Dataset

__all__ = ["StackDataset"]


class StackDataset(Dataset[Any]):
    """Item ``i`` is ``tuple(d[i] for d in args)`` or ``{k: d[i] for k, d in kwargs}``.

    Useful to assemble the parts of one sample (an image dataset and a label dataset) kept
    in separate datasets; they must all have the same length."""

    datasets: tuple[Any, ...] | dict[str, Any]

    def __init__(self, *args: Dataset[Any], **kwargs: Dataset[Any]) -> None:
        if args:
            if kwargs:
                raise ValueError(
                    "Supported either ``tuple``- (via ``args``) or"
                    "``dict``- (via ``kwargs``) like input/output, but both types are given.")
            self._length = len(args[0])  # type: ignore[arg-type]
            if any(self._length != len(dataset) for dataset in args):  # type: ignore[arg-type]
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            parts = list(kwargs.values())
            self._length = len(parts[0])  # type: ignore[arg-type]
            if any(self._length != len(dataset) for dataset in parts):  # type: ignore[arg-type]
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices: list[Any]) -> list[Any]:
        """A batch of samples, each part read with its dataset's own ``__getitems__`` when it
        has one."""
        parts = (self.datasets.items() if isinstance(self.datasets, dict)
                 else enumerate(self.datasets))
        columns = {key: _read_batch(dataset, indices) for key, dataset in parts}
        if isinstance(self.datasets, dict):
            return [{k: columns[k][row] for k in columns} for row in range(len(indices))]
        return [tuple(columns[k][row] for k in columns) for row in range(len(indices))]

    def __len__(self) -> int:
        return self._length


def _read_batch(dataset: Any, indices: list[Any]) -> list[Any]:
    """``[dataset[i] for i in indices]``, through ``__getitems__`` when the dataset has it
    (whose answer must have one sample per index)."""
    if callable(getattr(dataset, "__getitems__", None)):
        items = dataset.__getitems__(indices)
        if len(items) != len(indices):
            raise ValueError("Nested dataset's output size mismatch."
                             f" Expected {len(indices)}, got {len(items)}")
        return list(items)
    return [dataset[i] for i in indices]
