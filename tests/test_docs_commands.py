"""Every ``genericserver`` command the docs show parses with today's command line (no Go twin).

The commands in the fenced blocks of README.md, walkthrough.md, docs/workshop.md and the pages README.md
moved to docs/project.md are read as
a shell would split them (a ``VAR=value`` prefix, ``\\`` continuations, a trailing comment, a
pipe or a redirection cut off) and handed to the real parser, so a renamed or removed flag fails
here before a room types it. tests/test_docs_run.py then runs the commands of the workshop and
the walkthrough; the outputs the docs show are checked against what the programs print by
tests/test_docs_output.py and the tests it names.
"""

from __future__ import annotations

import pathlib
import re
import shlex

import pytest

from genericserver.cmd import build_parser

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ("README.md", "walkthrough.md", "docs/workshop.md", "docs/project.md")


def commands(doc: str) -> list[tuple[int, str]]:
    """(line, command) of each ``genericserver ...`` line in the document's fenced blocks."""
    out, block, pending = [], False, ""
    for n, line in enumerate((ROOT / doc).read_text().splitlines(), 1):
        if line.startswith("```"):
            block, pending = not block, ""
            continue
        if not block:
            continue
        text = pending + line.strip()
        if text.endswith("\\"):
            pending = text[:-1] + " "
            continue
        pending = ""
        if not re.match(r"(?:[A-Z_]+=\S*\s+)*genericserver\s", text + " "):
            continue  # output, or another program's command
        words = shlex.split(text, comments=True)
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
            words = words[1:]  # COLUMNS=60 genericserver ...
        if words and words[0] == "genericserver":
            cut = next((i for i, w in enumerate(words) if w in ("|", ">", ">>", "&&", ";")), len(words))
            out.append((n, " ".join(words[:cut])))
    return out


CASES = [(doc, n, cmd) for doc in DOCS for n, cmd in commands(doc)]


def test_the_docs_show_commands():
    assert len(CASES) > 30
    assert {doc for doc, _, _ in CASES} == set(DOCS)


@pytest.mark.parametrize("doc,line,command", CASES, ids=[f"{doc}:{n}" for doc, n, _ in CASES])
def test_each_documented_command_parses(doc, line, command, capsys):
    argv = shlex.split(command)[1:]
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        if exc.code == 0:  # --help, --version: they print and exit 0
            return
        pytest.fail(f"{doc}:{line}: `{command}` does not parse: {capsys.readouterr().err.strip()}")
    assert getattr(args, "command", None), f"{doc}:{line}: `{command}` names no command"


NUMBERS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
           "sixteen seventeen eighteen nineteen twenty").split()


def test_the_workshops_lab_table_has_a_row_per_lab_that_lab_list_lists():
    # the table once had 13 rows and said "all fourteen"
    from genericserver.labs.registry import LABS

    text = (ROOT / "docs/workshop.md").read_text()
    intro = re.search(r"Which lab for which pair \(all (\w+) are listed by `genericserver lab list`\):\n\n((?:\|.*\n)+)", text)
    assert intro, "the workshop's lab table and its sentence"
    rows = [line.split("|")[1].strip() for line in intro[2].splitlines()[2:]]
    assert rows and sorted(rows) == sorted(lab.name for lab in LABS)
    assert NUMBERS.index(intro[1]) == len(LABS)


def test_the_workshop_puts_an_absolute_venv_on_the_path_before_it_leaves_the_clone():
    # "type .venv/bin/genericserver", then "mkdir lab && cd lab": the relative path broke there
    text = (ROOT / "docs/workshop.md").read_text()
    leaves = text.index("mkdir -p ~/shutdown-lab && cd")
    assert 0 <= text.find('export PATH="$PWD/.venv/bin:$PATH"') < leaves
    assert "type `.venv/bin/genericserver`" not in text
    fenced = re.findall(r"^```\n(.*?)^```", text, re.S | re.M)
    typed = [line for block in fenced for line in block.splitlines() if line.lstrip().startswith(".venv/")]
    assert typed == [], typed  # no step types the relative path


def test_readmes_make_test_line_carries_one_number_and_the_rest_are_bench_notes():
    # it carried five measurements; they live in bench/README.md, which README.md links
    readme = (ROOT / "README.md").read_text()
    line = next(x for x in readme.splitlines() if x.startswith("make test   #"))
    assert len(re.findall(r"\d+(?:\.\d+)?", line.replace("2 cores", ""))) == 1, line
    assert "[bench/README.md](bench/README.md)" in readme
    notes = (ROOT / "bench/README.md").read_text()
    assert "two suites at once" in notes and "fresh clone" in notes and "busy core" in notes
