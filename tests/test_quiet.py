"""Tests of genericserver.testing.quiet: the two "disabled" warnings are dropped, and only they.

The filter is attached to the loggers by name, so a module that moves (issue 50 moved the
endpoints filters to ``genericserver/endpoints/filters/``) must take the names along.
"""

from __future__ import annotations

import logging

from genericserver.endpoints.filters.authentication import unauthorized, with_authentication
from genericserver.endpoints.filters.authorization import with_authorization
from genericserver.testing.quiet import without_disabled_auth_warnings


def app(environ, start_response):
    start_response("200 OK", [])
    return [b""]


def test_without_authn_and_authz_the_server_warns_twice(caplog):
    caplog.set_level(logging.WARNING)
    with_authorization(with_authentication(app, None, unauthorized()), None)
    assert sorted(r.getMessage() for r in caplog.records) == ["Authentication is disabled", "Authorization is disabled"]


def test_the_quiet_tools_drop_both_warnings(caplog):
    caplog.set_level(logging.WARNING)
    with without_disabled_auth_warnings():
        with_authorization(with_authentication(app, None, unauthorized()), None)
        logging.getLogger("genericserver.endpoints.filters").warning("something else")
    assert [r.getMessage() for r in caplog.records] == ["something else"]
