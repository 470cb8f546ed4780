"""tests/lazy.py: a module named through Lazy is imported on first use, not at collection (no Go twin)."""

from __future__ import annotations

import sys

import pytest
from lazy import Lazy


@pytest.mark.parametrize("probe", ["__test__", "__wrapped__", "__bases__", "_mock_name"])
def test_the_names_pytests_collector_probes_do_not_import_the_module(probe):
    json_tool = Lazy("json.tool")  # a standard module no test file imports
    sys.modules.pop("json.tool", None)
    assert not hasattr(json_tool, probe)
    assert "json.tool" not in sys.modules  # before the fix, each probe imported kubernetes (0.9 s a worker)


def test_a_public_name_imports_the_module():
    assert Lazy("json.tool").main is sys.modules["json.tool"].main
