"""Which lab is active, and switching its bug in for a whole process (no Go twin).

``genericserver lab start NAME`` writes :data:`STATE_FILE` (``.genericserver-lab``, a line of
JSON) into the current directory; ``genericserver lab stop`` removes it. Whatever starts from that
directory afterwards reads it once at start-up and runs with the lab's bug switched in for its
whole life:

* the ``genericserver`` command (``serve``, ``demo``, ``cluster``, ``load``:
  :func:`genericserver.cmd.main`; ``fuzz`` hunts the bug, switching it in run by run; ``replay``
  and ``python -m genericserver.testing.replay`` play it for a file of the server as it is, a
  file's own variant otherwise, and ``--variant NAME`` when given);
* pytest with the plugin ``-p genericserver.labs.pytest_plugin``.

The environment variable :data:`LAB_ENV` overrides the file: set to a lab's name it activates
that lab, set to the empty string it activates none. ``genericserver lab check`` uses it to run
the learner's file once with the bug and once without, whatever the directory says.

The bug is a :class:`genericserver.testing.variants.Variant`: switching it in swaps a method or a
module attribute through a seam the code already has; no file is ever edited.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import pathlib
import sys
from typing import Iterator, Optional

from genericserver.labs.registry import lab
from genericserver.testing.variants import Variant, variant

STATE_FILE = ".genericserver-lab"
LAB_ENV = "GENERICSERVER_LAB"


class LabStateError(Exception):
    """A state file that cannot be read, or names a lab that does not exist."""


def state_path(directory: Optional[os.PathLike | str] = None) -> pathlib.Path:
    return pathlib.Path(directory if directory is not None else os.getcwd()) / STATE_FILE


def write(name: str, directory: Optional[os.PathLike | str] = None) -> pathlib.Path:
    """Make ``name`` the active lab of ``directory`` (the current one by default)."""
    path = state_path(directory)
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    path.write_text(json.dumps({"lab": name, "started": started}) + "\n")
    return path


def remove(directory: Optional[os.PathLike | str] = None) -> Optional[str]:
    """End the active lab of ``directory``: the name it had, None if there was none, or ""
    if the file could not be read (it is removed all the same)."""
    path = state_path(directory)
    try:
        name = read_file(path)
    except LabStateError:
        name = ""
    path.unlink(missing_ok=True)
    return name


def read_file(path: pathlib.Path) -> Optional[str]:
    """The lab named in a state file; None if there is no file."""
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        raise LabStateError(f"{path}: not a lab state file ({err}); remove it or run 'genericserver lab stop'") from err
    if not isinstance(doc, dict) or not isinstance(doc.get("lab"), str):
        raise LabStateError(f"{path}: not a lab state file; remove it or run 'genericserver lab stop'")
    return doc["lab"]


def active_lab(directory: Optional[os.PathLike | str] = None) -> Optional[str]:
    """The active lab's name: :data:`LAB_ENV` if set (empty: none), else the state file's."""
    if LAB_ENV in os.environ:
        return os.environ[LAB_ENV] or None
    return read_file(state_path(directory))


def bug_of(name: str) -> Variant:
    """The variant a lab switches in (the server as it is for a what-if lab)."""
    return variant(lab(name).variant)


def banner(name: str) -> str:
    """What an active lab changes: a bug hunt switches its bug in, a what-if lab nothing."""
    return "its bug is switched in" if lab(name).variant else "nothing is switched in (a what-if exercise)"


def active_bug(directory: Optional[os.PathLike | str] = None, *, announce: bool = True) -> tuple[Optional[str], Variant]:
    """The active lab's name and its bug (None and the server as it is when no lab is active).

    ``announce`` prints one line on stderr when a lab is active, so nobody forgets it is on.
    Raises :class:`LabStateError` for a state file naming no known lab.
    """
    name = active_lab(directory)
    if name is None:
        return None, Variant()
    try:
        bug = bug_of(name)
    except KeyError:
        raise LabStateError(f"the active lab {name!r} does not exist; run 'genericserver lab stop'") from None
    if announce:
        print(f"genericserver: lab {name} is active: {banner(name)} ('genericserver lab stop' ends it)", file=sys.stderr)
    return name, bug


@contextlib.contextmanager
def activated(directory: Optional[os.PathLike | str] = None, *, announce: bool = True) -> Iterator[Optional[str]]:
    """Switch the active lab's bug in for the block (nothing if no lab is active); yields its name."""
    name, bug = active_bug(directory, announce=announce)
    with bug.switched_in():
        yield name
