"""``retrograd.nn``: modules (``Linear``, ``Sequential`` ...) and ``functional``."""

from . import functional, init, parallel, utils

try:
    from .modules import *  # noqa: F403
    from .modules import __all__ as _modules_all
except ImportError:  # pragma: no cover - only while modules.py is being written
    _modules_all = []

__all__ = ["functional", "init", "parallel", "utils", *_modules_all]
