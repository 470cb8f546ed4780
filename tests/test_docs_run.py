"""Every command of docs/workshop.md, walkthrough.md and README.md runs, section by section, as a room types it (no Go twin).

This file runs the workshop's sections and README's; tests/test_docs_run_walkthrough.py the walkthrough's
(two files, so that two workers share them).

tests/docs_session.py runs them (and says what it changes: time, ports, placeholders); a block
of commands that cannot run here carries ``<!-- commands not run: REASON -->``. Each
``genericserver`` command must end without a usage error or a traceback, each ``kubectl`` with
exit 0, each server with exit 0 on SIGTERM and each watch by itself once its server has gone.
What the commands print is compared with the docs by the tests tests/test_docs_output.py names.
"""

from __future__ import annotations

import re

import pytest

from docs_session import DOCS, ROOT, Block, Command, Section, fit, run_section, sections

SECTIONS = [s for doc in DOCS for s in sections(doc)]
RUN = [s for s in SECTIONS if any(b.not_run is None for b in s.blocks)]


def test_the_docs_have_sessions_to_run_and_every_block_that_is_not_run_says_why():
    assert {s.doc for s in RUN} == set(DOCS)
    assert sum(len(b.commands) for s in RUN for b in s.blocks if b.not_run is None) >= 40
    for s in SECTIONS:
        for b in s.blocks:
            assert b.not_run is None or len(b.not_run) > 20, f"{b.doc}:{b.line}: say why the block is not run"


def test_the_runner_fits_commands_to_a_test_machine():
    assert fit(["cluster", "--manifest", "rollout.yaml", "--roll", "--time-scale", "0.2"]) == [
        "cluster", "--manifest", "rollout.yaml", "--roll", "--time-scale", "0.05", "--workers", "1", "--interval", "0.05"]
    assert fit(["cluster", "--serve-api", "--bind-address", "0.0.0.0", "--secure-port", "6443", "--request-timeout", "1m"]) == [
        "cluster", "--serve-api", "--bind-address", "127.0.0.1", "--secure-port", "0", "--request-timeout", "1m", "--time-scale", "0.05", "--workers", "1", "--interval", "0.05"]
    assert fit(["serve", "--v=1"]) == ["serve", "--v=1", "--request-timeout", "1s"]
    assert fit(["serve", "--shutdown-watch-termination-grace-period", "5s", "--shutdown-delay-duration", "2s"]) == [
        "serve", "--shutdown-watch-termination-grace-period", "0.25s", "--shutdown-delay-duration", "0.1s"]
    assert fit(["demo"]) == ["demo", "--shutdown-delay", "0.4"]


def test_each_pytest_line_the_walkthrough_shows_selects_a_test():
    # `make test` is not run from the docs (it is this run); its narrower lines must still select
    shown = [c.text for s in SECTIONS for b in s.blocks for c in b.commands if " -m pytest tests/" in c.text]
    assert len(shown) >= 2
    for text in shown:
        path, expr = re.search(r"(tests/\S+\.py) -k (\w+)", text).groups()
        names = re.findall(r"^def (test_\w+)|^    def (test_\w+)", (ROOT / path).read_text(), re.M)
        assert any(expr in (a or b) for a, b in names), f"`{text}` selects no test"


def test_a_stale_command_fails_the_run(tmp_path, monkeypatch):
    def section(*lines: str) -> Section:
        return Section("x.md", "x", [Block("x.md", 1, None, [Command("x.md", 2 + i, t) for i, t in enumerate(lines)])])

    with pytest.raises(AssertionError, match=r"x.md:2: `genericserver cluster --pre-stop nap` exited 2: .*--pre-stop"):
        run_section(section("genericserver cluster --pre-stop nap"), tmp_path / "a", monkeypatch)
    with pytest.raises(AssertionError, match="exited 1"):  # kubectl must succeed: here no server answers
        run_section(section("kubectl --server http://127.0.0.1:1 get cm"), tmp_path / "b", monkeypatch)
    with pytest.raises(AssertionError, match="does not know 'helm'"):
        run_section(section("helm install web"), tmp_path / "c", monkeypatch)


WORKSHOP = [s for s in RUN if s.doc in ("docs/workshop.md", "README.md")]  # (README's one section rides along)


@pytest.mark.parametrize("section", WORKSHOP, ids=[s.id for s in WORKSHOP])
def test_the_section_s_commands_run(section, tmp_path, monkeypatch):
    assert run_section(section, tmp_path, monkeypatch)
