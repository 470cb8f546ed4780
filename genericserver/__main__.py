"""``python -m genericserver`` and the ``genericserver`` console script (no Go twin)."""

import os
import signal
import sys

from genericserver import cmd


def main() -> int:
    """``genericserver.cmd.main``, quiet when its reader goes away (``genericserver lab list | head``)
    and when Ctrl-C stops it (a run, a hunt, a lab check)."""
    try:
        code = cmd.main()
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # the pipe's reader closed it: stop without a traceback; stdout goes nowhere from now on,
        # so the interpreter's own flush at exit does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        # as a Go program without a handler (kubectl) ends at ^C: at once, no message, and
        # killed by SIGINT as the shell sees it; what was printed so far is flushed first
        # (serve handles SIGINT itself: its graceful shutdown)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        return 130  # not reached: the signal ended the process


if __name__ == "__main__":
    sys.exit(main())
