"""Port of k8s.io/apiserver/pkg/endpoints/filters/impersonation/impersonation.go (v1.36.0), with pkg/authentication/serviceaccount/util.go's names: acting as another user.

A request may carry ``Impersonate-User``, ``Impersonate-Group`` (repeatable),
``Impersonate-Uid`` and ``Impersonate-Extra-<key>`` headers. :func:`with_impersonation` asks the
authorizer, for each of them, whether the authenticated user may ``impersonate`` that user
(resource ``users``, or ``serviceaccounts`` for ``system:serviceaccount:<ns>:<name>``), group
(``groups``), uid (``uids``, group ``authentication.k8s.io``) or extra value (``userextras/<key>``).
Any refusal is a 403 with Go's Status (negotiated: JSON unless the client prefers protobuf); groups, extras or a uid without a user are a 400
(``requested [...] without impersonating a user``). On success the request continues as the
impersonated user, with ``system:authenticated`` added (``system:unauthenticated`` for
``system:anonymous``) unless given explicitly, the event records the impersonated user, and the
impersonation headers are removed.

WSGI joins repeated headers with commas (``a, b``), so repeated ``Impersonate-Group`` and
``Impersonate-Extra-*`` values are split on commas here: a group name that itself contains a
comma cannot be impersonated. WSGI header names are upper-cased with ``-`` made ``_``, so an
extra key reads back lower-cased with ``_`` as ``-``. The constrained-impersonation variant
(feature gate ``ConstrainedImpersonation``) is not ported.

serviceaccount/util.go's part is the service account user names the filter parses
(``system:serviceaccount:<ns>:<name>``), nothing more.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Optional
from urllib.parse import unquote_to_bytes

from genericserver import request, responsewriters
from genericserver.audit.request import log_impersonated_user
from genericserver.authn import ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS
from genericserver.apimachinery.validation import is_dns1123_label, is_dns1123_subdomain
from genericserver.authz import AttributesRecord, Authorizer, Decision
from genericserver.responsewriters import error_negotiated, forbidden

log = logging.getLogger("genericserver.endpoints.filters")

IMPERSONATE_USER_HEADER = "Impersonate-User"
IMPERSONATE_UID_HEADER = "Impersonate-Uid"
IMPERSONATE_GROUP_HEADER = "Impersonate-Group"
IMPERSONATE_USER_EXTRA_HEADER_PREFIX = "Impersonate-Extra-"

_USER_KEY = "HTTP_IMPERSONATE_USER"
_UID_KEY = "HTTP_IMPERSONATE_UID"
_GROUP_KEY = "HTTP_IMPERSONATE_GROUP"
_EXTRA_PREFIX_KEY = "HTTP_IMPERSONATE_EXTRA_"

AUTHENTICATION_GROUP_VERSION = "authentication.k8s.io/v1"

# pkg/authentication/serviceaccount/util.go
SERVICE_ACCOUNT_USERNAME_PREFIX = "system:serviceaccount:"
SERVICE_ACCOUNT_GROUP_PREFIX = "system:serviceaccounts:"
ALL_SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"



@dataclass(frozen=True)
class ObjectReference:
    """``core/v1.ObjectReference``, as Go uses it to describe one thing to impersonate."""

    kind: str = ""
    namespace: str = ""
    name: str = ""
    uid: str = ""
    api_version: str = ""
    resource_version: str = ""
    field_path: str = ""

    def go_string(self) -> str:
        # Go's %v of the struct: the field values separated by spaces, in braces
        return "{" + " ".join([self.kind, self.namespace, self.name, self.uid, self.api_version, self.resource_version, self.field_path]) + "}"

    def group_version(self) -> tuple[str, str]:
        if "/" in self.api_version:
            g, v = self.api_version.split("/", 1)
            return g, v
        return "", self.api_version


def make_username(namespace: str, name: str) -> str:
    return SERVICE_ACCOUNT_USERNAME_PREFIX + namespace + ":" + name


def make_group_names(namespace: str) -> list[str]:
    return [ALL_SERVICE_ACCOUNTS_GROUP, SERVICE_ACCOUNT_GROUP_PREFIX + namespace]


def split_username(username: str) -> Optional[tuple[str, str]]:
    """``(namespace, name)`` of a service account user name, or None if it is not one."""
    if not username.startswith(SERVICE_ACCOUNT_USERNAME_PREFIX):
        return None
    parts = username[len(SERVICE_ACCOUNT_USERNAME_PREFIX):].split(":")
    if len(parts) != 2:
        return None
    namespace, name = parts
    if not is_dns1123_label(namespace) or not is_dns1123_subdomain(name):
        return None
    return namespace, name


def _values(environ: dict, key: str) -> list[str]:
    raw = environ.get(key)
    if raw is None:
        return []
    return [v.strip() for v in raw.split(",")]


def _unescape_extra_key(encoded: str) -> str:
    # percent-decoding; a key that does not decode is kept as it came
    if re.search(r"%(?![0-9a-fA-F]{2})", encoded):
        return encoded
    try:
        return unquote_to_bytes(encoded).decode("utf-8")
    except UnicodeDecodeError:
        return encoded


def build_impersonation_requests(environ: dict) -> tuple[list[ObjectReference], Optional[dict]]:
    """What the headers ask to impersonate, or a 400 Status when they make no sense."""
    requests: list[ObjectReference] = []
    requested_user = environ.get(_USER_KEY, "")
    has_user = len(requested_user) > 0
    if has_user:
        sa = split_username(requested_user)
        if sa is not None:
            requests.append(ObjectReference(kind="ServiceAccount", namespace=sa[0], name=sa[1]))
        else:
            requests.append(ObjectReference(kind="User", name=requested_user))

    groups = _values(environ, _GROUP_KEY)
    for group in groups:
        requests.append(ObjectReference(kind="Group", name=group))

    # one scan in C over all the key names first: almost no request carries an extra
    extra_keys = []
    if _EXTRA_PREFIX_KEY in "\n".join(environ):
        extra_keys = [key for key in environ if key.startswith(_EXTRA_PREFIX_KEY)]
    has_extra = bool(extra_keys)
    for key in extra_keys:
        extra_key = _unescape_extra_key(key[len(_EXTRA_PREFIX_KEY):].lower().replace("_", "-"))
        for value in _values(environ, key):
            requests.append(ObjectReference(kind="UserExtra", api_version=AUTHENTICATION_GROUP_VERSION, name=value, field_path=extra_key))

    requested_uid = environ.get(_UID_KEY, "")
    has_uid = len(requested_uid) > 0
    if has_uid:
        requests.append(ObjectReference(kind="UID", name=requested_uid, api_version=AUTHENTICATION_GROUP_VERSION))

    if (groups or has_extra or has_uid) and not has_user:
        listed = "[" + " ".join(r.go_string() for r in requests) + "]"
        return [], responsewriters.status(400, "BadRequest", f"requested {listed} without impersonating a user")
    return requests, None


def user_string(u: Optional[request.UserInfo]) -> str:
    if u is None:
        return "<none>"
    out = u.name or "<empty>"
    if u.groups:
        out += "[" + ",".join(u.groups) + "]"
    return out


def with_impersonation(app: Callable, a: Authorizer) -> Callable:
    def impersonation(environ: dict, start_response: Callable) -> Iterable[bytes]:
        requests, bad = build_impersonation_requests(environ)
        if bad is not None:
            log.debug("%s", bad["message"])
            return error_negotiated(start_response, bad, nosniff=True, environ=environ)
        if not requests:
            return app(environ, start_response)

        requestor = request.user_from(environ)
        if requestor is None:
            return responsewriters.internal_error(start_response, environ, "no user found for request")

        # explicit groups are the authority; otherwise a service account's groups are implied
        groups_specified = environ.get(_GROUP_KEY) is not None
        username = ""
        groups: list[str] = []
        extra: dict[str, list[str]] = {}
        uid = ""
        ctx = request.context_from(environ)
        for r in requests:
            group, version = r.group_version()
            fields = dict(user=requestor, verb="impersonate", api_group=group, api_version=version,
                          namespace=r.namespace, name=r.name, resource_request=True)
            if (group, r.kind) == ("", "ServiceAccount"):
                fields["resource"] = "serviceaccounts"
                username = make_username(r.namespace, r.name)
                if not groups_specified:
                    groups = make_group_names(r.namespace)
            elif (group, r.kind) == ("", "User"):
                fields["resource"] = "users"
                username = r.name
            elif (group, r.kind) == ("", "Group"):
                fields["resource"] = "groups"
                groups.append(r.name)
            elif (group, r.kind) == ("authentication.k8s.io", "UserExtra"):
                fields["resource"] = "userextras"
                fields["subresource"] = r.field_path
                extra.setdefault(r.field_path, []).append(r.name)
            elif (group, r.kind) == ("authentication.k8s.io", "UID"):
                fields["resource"] = "uids"
                uid = r.name
            else:
                attrs = AttributesRecord(**fields)
                return forbidden(attrs, environ, start_response, f"unknown impersonation request type: {r.go_string()}")
            attrs = AttributesRecord(**fields)
            decision, reason, err = a.authorize(ctx, attrs)
            if err is not None or decision != Decision.ALLOW:
                log.debug("Forbidden URI=%s reason=%s err=%s", responsewriters.request_uri(environ), reason, err)
                return forbidden(attrs, environ, start_response, reason)

        if username != ANONYMOUS:
            # an impersonated user is authenticated, unless the caller said otherwise
            if not any(g in (ALL_AUTHENTICATED, ALL_UNAUTHENTICATED) for g in groups):
                groups.append(ALL_AUTHENTICATED)
        elif ALL_UNAUTHENTICATED not in groups:
            groups.append(ALL_UNAUTHENTICATED)

        new_user = request.UserInfo(name=username, uid=uid, groups=tuple(groups), extra={k: tuple(v) for k, v in extra.items()})
        request.with_user(environ, new_user)
        log.info("%s is impersonating %s", user_string(requestor), user_string(new_user))
        log_impersonated_user(environ, new_user)

        for key in [k for k in environ if k in (_USER_KEY, _GROUP_KEY, _UID_KEY) or k.startswith(_EXTRA_PREFIX_KEY)]:
            del environ[key]
        return app(environ, start_response)

    return impersonation
