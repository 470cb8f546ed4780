"""The expected outputs the docs show, checked against what the commands print (no Go twin).

A fenced block of output in docs/workshop.md, walkthrough.md or README.md is preceded by a marker: either
``<!-- output: NAME -->``, and a test that produces that output (with the same command, or the
same run the test already makes) calls :func:`assert_shows` with ``expected("NAME")``; or
``<!-- output not checked: REASON -->``. tests/test_docs_output.py fails on a block with no
marker and on a NAME no test uses, so a changed program cannot leave its picture in the docs.

Numbers are compared exactly, digit for digit (``refused x1`` does not match ``refused x11``),
except those the docs mark as varying from run to run: a ``~`` right before a number (``~1.501s``,
``x~15``, ``+~2.006``, ``127.0.0.1:~6443``) matches any number there - a timing, a count of a
load, an age, a port. The docs say so where they explain their blocks (docs/workshop.md's
introduction, walkthrough.md sections 2 and 5). Otherwise the comparison tolerates only layout: table
borders and line ends and runs of spaces count as one space (so a line the docs wrap for a
60-column projector still matches the output's longer one), a line of ``...`` in the docs skips
any lines, and ``...`` inside a line matches anything. Each shown line must appear in the
output, in the docs' order; the output may have more between them.
"""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ("docs/workshop.md", "walkthrough.md", "README.md")
MARKER = re.compile(r"^<!-- output(?:: (\S+)| not checked: (.+)) -->$")
BORDERS = re.compile(r"[│┃┏┓┗┛━─┳┻╇┡┩┯┷╭╮╰╯┼├┤┬┴└┘┌┐═║╔╗╚╝]+")
# a number the docs mark as varying, and any number (what the mark matches in the output)
VARYING = re.compile(r"~(\d+(?:\.\d+)?)")
ANY_NUMBER = r"(?<![\d.])\d+(?:\.\d+)?(?![\d])"


def blocks(doc: str) -> list[tuple[int, str | None, str | None, list[str]]]:
    """(line, NAME, REASON, the block's lines) of every fenced block; NAME and REASON from the
    marker right above it, if there is one."""
    lines = (ROOT / doc).read_text().splitlines()
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            j = next(k for k in range(i + 1, len(lines)) if lines[k].startswith("```"))
            above = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            m = MARKER.match(above)
            out.append((i + 1, m and m.group(1), m and m.group(2), lines[i + 1:j]))
            i = j
        i += 1
    return out


def expected(name: str) -> list[str]:
    """The lines of the block marked ``<!-- output: NAME -->``."""
    for doc in DOCS:
        for _, n, _, lines in blocks(doc):
            if n == name:
                return lines
    raise KeyError(f"no block marked 'output: {name}' in {DOCS}")


def normalise(line: str) -> str:
    return " ".join(BORDERS.sub(" ", line).split())


def _literal(text: str) -> str:
    """``text`` as a regular expression; a number in it is whole: no digit just before or after."""
    out, at = [], 0
    for m in re.finditer(r"\d+", text):
        out.append(re.escape(text[at:m.start()]))
        whole_before = not text[max(0, m.start() - 2):m.start()].endswith((tuple(f"{d}." for d in "0123456789")))  # not decimals
        out.append((r"(?<!\d)(?<!\d\.)" if whole_before else "") + m.group() + ("" if m.end() < len(text) else r"(?!\.?\d)"))
        at = m.end()
    out.append(re.escape(text[at:]))
    return "".join(out)


def _part(text: str) -> str:
    """A part of a shown line between two ``...``: literal, but a ``~N`` is any number."""
    pieces = VARYING.split(text)  # literal, number, literal, number, ...
    return "".join(ANY_NUMBER if i % 2 else _literal(piece) for i, piece in enumerate(pieces))


def _pattern(line: str) -> re.Pattern:
    return re.compile(".*?".join(_part(part) for part in normalise(line).split("...")))


def varying(line: str) -> list[str]:
    """The numbers ``line`` marks as varying (``~N``), without their marks."""
    return VARYING.findall(line)


def assert_shows(shown: list[str], output: str) -> None:
    """Each shown line (normalised) appears in ``output`` (normalised and flowed into one line),
    in order; see the module docstring."""
    flowed = " ".join(n for n in map(normalise, output.splitlines()) if n)
    at = 0
    for line in shown:
        if normalise(line) in ("", "..."):
            continue
        m = _pattern(line).search(flowed, at)
        assert m is not None, f"the docs show {line!r}, which the output does not have (after {flowed[:at][-80:]!r}):\n{output}"
        at = m.end()
