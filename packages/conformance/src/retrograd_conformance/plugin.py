"""The pytest plugin (entry point ``pytest11``): ``python -m pytest --pyargs
retrograd_conformance --backend NAME``.

``python -m pytest`` runs the pytest of the interpreter that has retrograd-conformance
installed (a bare ``pytest`` may be another environment's, without the plugin).

Options: ``--backend NAME`` or ``--backend MODULE:ATTR`` (a Backend object, class or factory,
tested without an entry point; repeatable; default every backend of the entry-point group),
``--oracle torch|none``, ``--fuzz N`` and ``--conformance-seed S`` for the generated programs,
``--xfails-file`` / ``--skips-file`` (test-id substrings, ``#`` comments; an entry that matches
no collected test is reported with a warning).

This module is imported by every pytest run in an environment where the package is installed,
so it imports nothing heavy and adds nothing unless asked: the xfail/skip files apply only when
given, and the ``conformance_*`` fixtures only exist for tests that request them.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

_OPTIONS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (("--backend",), {"action": "append", "default": None, "metavar": "NAME|MODULE:ATTR",
                      "help": "retrograd backend under test (repeatable): a name, or "
                              "MODULE:ATTR naming a Backend object; default: all installed "
                              "(entry-point group retrograd.backends)"}),
    (("--oracle",), {"default": "torch", "choices": ("torch", "none"),
                     "help": "conformance oracle (default torch)"}),
    (("--fuzz",), {"type": int, "default": None, "metavar": "N",
                   "help": "generated programs per backend (default 500)"}),
    (("--conformance-seed",), {"type": int, "default": None, "metavar": "S",
                               "help": "hypothesis seed of the generated programs"}),
    (("--xfails-file",), {"default": None, "metavar": "PATH",
                          "help": "test-id substrings expected to fail (# comments)"}),
    (("--skips-file",), {"default": None, "metavar": "PATH",
                         "help": "test-id substrings to skip (# comments)"}),
]


_UNMATCHED = pytest.StashKey[list]()


class ExpectationFileWarning(UserWarning):
    """An ``--xfails-file`` / ``--skips-file`` entry matched no collected test."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("retrograd-conformance")
    for names, kwargs in _OPTIONS:
        try:
            group.addoption(*names, dest=names[0].lstrip("-").replace("-", "_"), **kwargs)
        except ValueError:  # another plugin or conftest owns the name: share it
            pass


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance: a retrograd-conformance check")


def _backends(config: pytest.Config) -> list[str]:
    names = config.getoption("backend", None)
    if names:
        from .subjects import resolve_backends

        return resolve_backends(list(names))  # MODULE:ATTR loaded and registered once
    from .subjects import backend_names

    return backend_names()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "conformance_backend" in metafunc.fixturenames:
        names = _backends(metafunc.config)
        metafunc.parametrize("conformance_backend", names, ids=names, scope="session")


@pytest.fixture(scope="session")
def conformance_subject(conformance_backend: str) -> Any:
    """The :class:`~retrograd_conformance.subjects.Subject`; unavailable ones are skipped with
    the reason (a skip, never a pass)."""
    from .subjects import retrograd_subject

    subject = retrograd_subject(conformance_backend)
    if not subject.available:
        pytest.skip(f"unavailable: {subject.reason}")
    return subject


@pytest.fixture(scope="session")
def conformance_oracle(request: pytest.FixtureRequest) -> str | None:
    """The oracle subject name (``torch``), or None with ``--oracle none``."""
    if request.config.getoption("oracle", "torch") == "none":
        return None
    from .subjects import torch_subjects

    oracles = torch_subjects()
    if not oracles[0].available:
        pytest.fail(f"the torch oracle is unavailable: {oracles[0].reason}")
    return oracles[0].name


@pytest.fixture(scope="session")
def conformance_fuzz(request: pytest.FixtureRequest) -> tuple[int, int]:
    from .programs.check import DEFAULT_COUNT, DEFAULT_SEED

    count = request.config.getoption("fuzz", None)
    seed = request.config.getoption("conformance_seed", None)
    return (DEFAULT_COUNT if count is None else count, DEFAULT_SEED if seed is None else seed)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from .runner import read_id_file

    xfails_path = config.getoption("xfails_file", None)
    skips_path = config.getoption("skips_file", None)
    if not (xfails_path or skips_path):
        return
    xfails = read_id_file(xfails_path) if xfails_path else []
    skips = read_id_file(skips_path) if skips_path else []
    used: set[str] = set()
    for item in items:
        for entry in skips:
            if entry in item.nodeid:
                used.add(entry)
                item.add_marker(pytest.mark.skip(reason=f"listed in {skips_path}: {entry}"))
                break
        for entry in xfails:
            if entry in item.nodeid:
                used.add(entry)
                item.add_marker(pytest.mark.xfail(
                    reason=f"listed in {xfails_path}: {entry}", strict=True))
                break
    unmatched = [f"{path}: entry {entry!r} matches no collected test id"
                 for path, entries in ((xfails_path, xfails), (skips_path, skips))
                 for entry in entries if entry not in used]
    config.stash[_UNMATCHED] = unmatched
    for message in unmatched:
        warnings.warn(ExpectationFileWarning(message), stacklevel=1)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    unmatched = config.stash.get(_UNMATCHED, [])
    if unmatched:
        terminalreporter.section("retrograd-conformance: stale expectation entries")
        for message in unmatched:
            terminalreporter.line(f"warning: {message}")
