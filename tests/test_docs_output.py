"""Every expected output in docs/workshop.md and walkthrough.md is checked, or says why not (no Go twin).

The checks themselves live beside the tests that already produce each output (a debugger
session, the demo's tables, ``lab check``, the cluster's timeline, kubectl's watch, lincheck's
failure), through :mod:`docs_output`; this file makes sure that none is forgotten: a block of
output without a marker, or a marked block that no test reads, fails here. A block is output when
none of its lines is a command (``genericserver``, ``kubectl``, ``make``...).
"""

from __future__ import annotations

import pathlib
import re

import pytest

from docs_output import DOCS, ROOT, assert_shows, blocks

COMMAND = re.compile(r"^(genericserver|kubectl|make|export|\.venv/|pytest|git|kind|cd|python|docker|curl|COLUMNS=)\b")
TESTS = pathlib.Path(__file__).resolve().parent
OUTPUT_BLOCKS = [(doc, line, name, reason) for doc in DOCS for line, name, reason, lines in blocks(doc)
                 if len(lines) > 1 and not any(COMMAND.match(x.strip()) for x in lines)]


def test_the_docs_show_outputs():
    assert len([b for b in OUTPUT_BLOCKS if b[2]]) >= 8


@pytest.mark.parametrize("doc,line,name,reason", OUTPUT_BLOCKS, ids=[f"{d}:{n}" for d, n, _, _ in OUTPUT_BLOCKS])
def test_each_output_block_is_checked_or_says_why_not(doc, line, name, reason):
    assert name or reason, f"{doc}:{line}: an output block with no marker (<!-- output: NAME --> or <!-- output not checked: REASON -->)"
    if name:
        users = [p.name for p in TESTS.glob("test_*.py") if f'expected("{name}")' in p.read_text()]
        assert users, f"{doc}:{line}: no test checks the block marked {name!r}"


def test_the_comparison_tolerates_numbers_borders_and_wrapping_but_not_words():
    output = "│ 2.607s │ InFlightRequestsDrained │ every tracked request │\n-- 280 decisions, 151 with a choice; simulation ended: cleanly\n"
    assert_shows(["│ 2.5s │ InFlightRequestsDrained │ every tracked", "-- 9 decisions, 1 with a choice; simulation", "ended: cleanly"], output)
    assert_shows(["...", "-- ... simulation ended: cleanly"], output)
    with pytest.raises(AssertionError):
        assert_shows(["InFlightRequestsDrained", "NotAcceptingNewRequest"], output)
    with pytest.raises(AssertionError):  # the docs' order is the output's
        assert_shows(["ended: cleanly", "InFlightRequestsDrained"], output)
