"""``python -m genericserver`` and the ``genericserver`` console script (no Go twin)."""

import sys

from genericserver.cmd import main

if __name__ == "__main__":
    sys.exit(main())
