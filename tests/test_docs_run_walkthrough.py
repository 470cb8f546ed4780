"""Every command of walkthrough.md runs, section by section (no Go twin): tests/test_docs_run.py's twin for the other document."""

from __future__ import annotations

import pytest

from docs_session import sections, run_section

RUN = [s for s in sections("walkthrough.md") if any(b.not_run is None for b in s.blocks)]


@pytest.mark.parametrize("section", RUN, ids=[s.id for s in RUN])
def test_the_section_s_commands_run(section, tmp_path, monkeypatch):
    assert run_section(section, tmp_path, monkeypatch)
