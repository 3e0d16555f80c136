"""General-purpose helpers that sit beside the autodiff engine rather than inside it.

``retrograd.utils.data`` is PyTorch's ``torch.utils.data``: datasets, samplers and the
``DataLoader`` that turns them into batches of tensors."""

from . import data

__all__ = ["data"]
