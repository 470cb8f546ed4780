"""Port of k8s.io/apimachinery/pkg/util/validation/validation.go (v1.36.0): DNS-1123 names.

Most object names are DNS-1123 subdomains (lower-case letters, digits, ``-`` and ``.``, starting
and ending with a letter or digit, at most 253 characters); a namespace's is a DNS-1123 label (no
dots, at most 63). :func:`is_dns1123_subdomain` and :func:`is_dns1123_label` answer Go's
``IsDNS1123Subdomain`` and ``IsDNS1123Label`` as yes or no; :data:`DNS1123_SUBDOMAIN_MSG` is
the message Go's ``RegexError`` builds for a subdomain that does not match.
"""

from __future__ import annotations

import re

DNS1123_LABEL_MAX_LENGTH, DNS1123_SUBDOMAIN_MAX_LENGTH = 63, 253
DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def is_dns1123_subdomain(value: str) -> bool:
    return len(value) <= DNS1123_SUBDOMAIN_MAX_LENGTH and DNS1123_SUBDOMAIN.fullmatch(value) is not None


def is_dns1123_label(value: str) -> bool:
    return len(value) <= DNS1123_LABEL_MAX_LENGTH and DNS1123_LABEL.fullmatch(value) is not None
