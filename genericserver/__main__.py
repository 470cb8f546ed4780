"""``python -m genericserver`` and the ``genericserver`` console script (no Go twin)."""

import os
import sys

from genericserver import cmd


def main() -> int:
    """``genericserver.cmd.main``, quiet when its reader goes away (``genericserver lab list | head``)."""
    try:
        code = cmd.main()
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # the pipe's reader closed it: stop without a traceback; stdout goes nowhere from now on,
        # so the interpreter's own flush at exit does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
