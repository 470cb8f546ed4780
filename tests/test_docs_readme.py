"""README.md is a front door a learner reads in two minutes, and what it shows is what the programs print (no Go twin).

Its commands run in tests/test_docs_run.py (README's section rides with the workshop's) and parse
in tests/test_docs_commands.py; the log it shows is checked here, against the server its first
"try this first" command starts.
"""

from __future__ import annotations

import re
import signal

from docs_output import ROOT, assert_shows, expected
from docs_session import fit, sections
from serverprocess import ServerProcess

README = (ROOT / "README.md").read_text()


def test_the_readme_is_short_and_has_its_parts():
    assert len(README.splitlines()) < 100
    headings = re.findall(r"^## (.+)$", README, re.M)
    assert headings == ["The two commands", "Try this first", "Where to read", "Other targets"]
    assert "![" in README and "(docs/demo.svg)" in README
    paragraph = README.split("\n\n")[1]  # what the project is, in one paragraph
    assert paragraph.count("\n") < 10 and "kube-apiserver" in paragraph


def test_every_link_of_the_readme_names_a_file_here():
    links = re.findall(r"\]\(([^)#]+)\)", README)
    assert len(links) >= 8
    assert [link for link in links if not (ROOT / link).exists()] == []


def test_try_this_first_is_three_commands_and_each_other_target_is_the_makefiles():
    (section,) = [s for s in sections("README.md") if s.heading == "Try this first"]
    assert [c.text.split()[:2] for b in section.blocks for c in b.commands] == [
        ["genericserver", "serve"], ["genericserver", "cluster"], ["genericserver", "lab"]]
    makefile = (ROOT / "Makefile").read_text()
    other = README[README.index("## Other targets"):]
    targets = re.findall(r"`make ([\w-]+)`", other)
    assert len(targets) >= 9 and [t for t in targets if not re.search(rf"^{t}:", makefile, re.M)] == []


def test_the_log_the_readme_shows_is_what_its_serve_command_prints():
    # it said secure_serving.py:80 where the program prints :98
    (section,) = [s for s in sections("README.md") if s.heading == "Try this first"]
    argv = fit(section.blocks[0].commands[0].text.split()[1:])
    assert argv[0] == "serve"
    server = ServerProcess(*argv[1:])
    try:
        server.signal(signal.SIGINT)  # Ctrl-C
        assert server.wait() == 0
    finally:
        server.kill()
    assert_shows(expected("readme-serve"), "\n".join(server.seen))


def test_the_pages_the_readme_moved_to_docs_link_to_files_here():
    for page in ("docs/project.md", "docs/targets.md"):
        links = re.findall(r"\]\(([^)#:]+)\)", (ROOT / page).read_text())
        assert [link for link in links if not (ROOT / page).parent.joinpath(link).exists()] == [], page
