"""A module imported on its first use, not when the test file is collected.

Every test worker collects every test file; ``kubernetes`` costs half a second each time it is
imported, so the files that use it name it through :class:`Lazy` and only the worker that runs
their tests pays for the import (tests/test_lazy.py).
"""

from __future__ import annotations

import importlib
from typing import Any


class Lazy:
    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        # pytest's collector probes every module-level object for private names (``__test__``,
        # ``__wrapped__``, ``_mock_name``...): answering those would import the module at
        # collection in every worker, which is what this class is for avoiding
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(importlib.import_module(self._name), attr)
