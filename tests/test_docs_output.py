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


def test_the_docs_show_outputs_and_check_their_numbers():
    assert len([b for b in OUTPUT_BLOCKS if b[2]]) >= 8
    exact = [m for _, _, _, lines in CHECKED for text in lines for m in NUMBER.finditer(text)]
    assert len(exact) >= 40, "the checked blocks' numbers are compared exactly, unless marked ~"


@pytest.mark.parametrize("doc,line,name,reason", OUTPUT_BLOCKS, ids=[f"{d}:{n}" for d, n, _, _ in OUTPUT_BLOCKS])
def test_each_output_block_is_checked_or_says_why_not(doc, line, name, reason):
    assert name or reason, f"{doc}:{line}: an output block with no marker (<!-- output: NAME --> or <!-- output not checked: REASON -->)"
    if name:
        users = [p.name for p in TESTS.glob("test_*.py") if f'expected("{name}")' in p.read_text()]
        assert users, f"{doc}:{line}: no test checks the block marked {name!r}"


def test_the_comparison_tolerates_borders_wrapping_and_marked_numbers_but_not_words_or_numbers():
    output = "│ 2.607s │ InFlightRequestsDrained │ every tracked request │\n-- 280 decisions, 151 with a choice; simulation ended: cleanly\n"
    assert_shows(["│ ~2.5s │ InFlightRequestsDrained │ every tracked", "-- 280 decisions, 151 with a choice; simulation", "ended: cleanly"], output)
    assert_shows(["...", "-- ... simulation ended: cleanly"], output)
    assert_shows(["-- ~9 decisions, ~1 with a choice"], output)
    with pytest.raises(AssertionError):
        assert_shows(["InFlightRequestsDrained", "NotAcceptingNewRequest"], output)
    with pytest.raises(AssertionError):  # the docs' order is the output's
        assert_shows(["ended: cleanly", "InFlightRequestsDrained"], output)
    for changed in ("│ 2.5s │", "-- 28 decisions", "-- 2800 decisions", "-- 280 decisions, 15 with", "│ 2.60s", "│ 607s", "│ .607s"):
        with pytest.raises(AssertionError):  # an unmarked number is exact, and whole
            assert_shows([changed], output)
    # a marked number is any number, but a whole one where the docs have one
    assert_shows(["refused x~1 "], "refused x11 and")
    with pytest.raises(AssertionError):
        assert_shows(["refused x1 "], "refused x11 and")


CHECKED = [(doc, line, name, lines) for doc in DOCS for line, name, _, lines in blocks(doc) if name]
NUMBER = re.compile(r"(?<![~\w.])\d+")


def as_printed(lines: list[str]) -> str:
    """The block as a run that printed exactly it would have: marks dropped, skipped lines gone."""
    return "\n".join(line.replace("~", "") for line in lines if line.strip() != "...")


@pytest.mark.parametrize("doc,line,name,lines", CHECKED, ids=[name for _, _, name, _ in CHECKED])
def test_a_changed_number_in_a_checked_block_fails(doc, line, name, lines):
    """Every unmarked number of every checked block counts: the block matches a run that printed
    it, and no longer once any one of its numbers is changed (``~N`` marks one that varies)."""
    output = as_printed(lines)
    assert_shows(lines, output)
    for i, text in enumerate(lines):
        for m in NUMBER.finditer(text):
            digits = m.group()
            flipped = digits[:-1] + str((int(digits[-1]) + 1) % 10)
            changed = lines[:i] + [text[:m.start()] + flipped + text[m.end():]] + lines[i + 1:]
            with pytest.raises(AssertionError):
                assert_shows(changed, output)
