"""``python -m genericserver.labs.forkrun DIR FILE < NAMES``: one pytest run of FILE per lab's bug named on stdin (no Go twin).

``genericserver lab check`` runs a learner's test file with the lab's bug, without it, and then
with every other lab's bug. Each run must be a fresh pytest session in a process of its own,
but starting Python, pytest and genericserver a dozen times costs a dozen half-seconds. So this
process imports them once and forks a child per run; each child runs pytest on FILE from DIR
and exits with pytest's status. stdin holds the runs' lab names, one a line (an empty line: no
bug; ``recompiled:NAME``: no bug, but the functions NAME's bug replaces compiled again with other
bytecode); the output is one JSON line per run: pytest's exit status and output. A child that
outlives ``--timeout`` seconds is killed (status -14, SIGALRM).

The test must not be able to tell which run it is in, but by the behaviour:

* this process never reads a name: each child reads its own line from stdin, then puts
  ``/dev/null`` in its place (the names of the runs after it stay unread). Every child is forked
  from the same frames with the same locals, so no variable, frame or argument it inherits
  says which run it is, and ``sys.argv`` is the same for all;
* the child switches its bug in for good, disguised as what it replaces
  (:func:`genericserver.labs.disguise.switch_in_for_good`), and keeps nothing that names it;
  no plugin is loaded, no variable is set, and the directory holds no lab state file.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import signal
import sys
import tempfile
from typing import Optional

import pytest
from _pytest.config import default_plugins

# warm here, so each child starts from there: what a lab's test imports, and what switching a
# bug in needs
import genericserver.testing.scenario  # noqa: F401
from genericserver.labs.disguise import RECOMPILED, recompile_for_good, switch_in_for_good
from genericserver.labs.state import bug_of

# and pytest's own plugins, which every session imports (the installed ones it loads by itself
# are left to the child: pytest rewrites their asserts, and warns if they are already imported)
for _name in default_plugins:
    importlib.import_module(f"_pytest.{_name}")

NO_MORE_RUNS = 120  # a child's status when stdin had no name left for it


def one_run(where: str, path: str, timeout: int) -> bool:
    """Fork a child that runs pytest on ``path`` with the next bug named on stdin, and print
    its status and output as a JSON line; False once stdin is at its end."""
    with tempfile.TemporaryFile(mode="w+") as out:
        sys.stdout.flush()
        # what this process holds moves out of the collector's sight: the child's collections
        # (pytest runs two at its end) then neither scan it nor copy every page they touch
        gc.freeze()
        pid = os.fork()
        if pid == 0:  # the child: its output goes to the file, its status is pytest's
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
            if not switch_in_the_next_bug():
                os._exit(NO_MORE_RUNS)
            signal.alarm(timeout)
            code = pytest.main(["-q", "--tb=line", "-p", "no:cacheprovider", "--rootdir", where, path])
            sys.stdout.flush()
            os._exit(int(code))
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code == NO_MORE_RUNS:
            return False
        out.seek(0)
        print(json.dumps({"status": code, "output": out.read()}), flush=True)
        return True


def switch_in_the_next_bug() -> bool:
    """In a child: read this run's lab name from stdin and switch its bug in; False at the end."""
    name = read_line(0)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the next runs' names are not for this one
    if name is None:
        return False
    if name.startswith(RECOMPILED):
        recompile_for_good(bug_of(name[len(RECOMPILED):]))
    elif name:
        switch_in_for_good(bug_of(name))
    return True


def read_line(fd: int) -> Optional[str]:
    """One line from ``fd``, read a byte at a time so that nothing after it is taken."""
    data = b""
    while not data.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte:
            return data.decode() if data else None
        data += byte
    return data[:-1].decode()


def main(argv: list[str]) -> int:
    timeout = 300
    if argv[:1] == ["--timeout"]:
        timeout, argv = int(float(argv[1])), argv[2:]
    where, path = argv[0], argv[1]
    os.chdir(where)
    while one_run(where, path, timeout):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
