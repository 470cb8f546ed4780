"""``python -m genericserver.labs.forkrun DIR FILE LAB...``: one pytest run of FILE per lab's bug (no Go twin).

``genericserver lab check`` runs a learner's test file with the lab's bug, without it, and then
with every other lab's bug. Each run must be a fresh pytest session in a process of its own
(the plugin switches the bug in before the file is imported), but starting Python, pytest and
genericserver a dozen times costs a dozen half-seconds. So this process imports them once and
forks a child per run: the child names its lab in :data:`~genericserver.labs.state.LAB_ENV`
(an empty name: no bug), runs pytest on FILE from DIR with the lab plugin, and exits with
pytest's status. The output is one JSON line: for each lab, pytest's exit status and output.
A child that outlives ``--timeout`` seconds is killed (status -14, SIGALRM).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import signal
import sys
import tempfile

import pytest
from _pytest.config import default_plugins

# warm in the parent, so each child starts from here: what the plugin and a lab's test import (not
# the plugin module itself, which pytest wants to import, and rewrite, in the child)
import genericserver.testing.scenario  # noqa: F401
from genericserver.labs.state import LAB_ENV

# and pytest's own plugins, which every session imports (the installed ones it loads by itself
# are left to the child: pytest rewrites their asserts, and warns if they are already imported)
for _name in default_plugins:
    importlib.import_module(f"_pytest.{_name}")


def run_one(where: str, path: str, lab: str, timeout: int) -> tuple[int, str]:
    """pytest on ``path`` with ``lab``'s bug switched in, in a forked child; (status, output)."""
    with tempfile.TemporaryFile(mode="w+") as out:
        sys.stdout.flush()
        # what the parent holds moves out of the collector's sight: the child's collections
        # (pytest runs two at its end) then neither scan it nor copy every page they touch
        gc.freeze()
        pid = os.fork()
        if pid == 0:  # the child: its output goes to the file, its status is pytest's
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
            os.environ[LAB_ENV] = lab
            signal.alarm(timeout)
            code = pytest.main(["-q", "--tb=line", "-p", "no:cacheprovider", "-p", "genericserver.labs.pytest_plugin",
                                "--rootdir", where, path])
            sys.stdout.flush()
            os._exit(int(code))
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        return os.waitstatus_to_exitcode(status), out.read()


def main(argv: list[str]) -> int:
    timeout = 300
    if argv[:1] == ["--timeout"]:
        timeout, argv = int(float(argv[1])), argv[2:]
    where, path, labs = argv[0], argv[1], argv[2:]
    os.chdir(where)
    results = [dict(zip(("status", "output"), run_one(where, path, lab, timeout)), lab=lab) for lab in labs]
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
