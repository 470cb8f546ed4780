"""Where genericserver's HTTP/1 server answers a parity case differently from Go, on purpose (no Go twin).

Case id -> why the difference is deliberate and safe. ``tests/test_parity.py`` takes the table
from ``genericserver.http1.KNOWN_DIFFERENCES`` when that exists, else from here. A case listed
here must still differ from Go (the replay says when one no longer does), and any difference not
listed fails the replay. Differences that are simply not ported yet do not belong here.
"""

from __future__ import annotations

KNOWN_DIFFERENCES: dict[str, str] = {
    "name-underscore": (
        "WSGI (CGI) spells header names with '_' for '-', so X_Forwarded_For would pass for "
        "X-Forwarded-For; names with '_' are dropped from the environ, as werkzeug and gunicorn do"
    ),
    "sniff-content-type": (
        "no Content-Type sniffing: a WSGI app names its content type (http1's docstring), where "
        "Go sniffs the first 512 bytes of a response that has none"
    ),
}
