"""Port of k8s.io/apimachinery/pkg/util/validation/validation.go (v1.36.0): DNS-1123 names and config keys.

Most object names are DNS-1123 subdomains (lower-case letters, digits, ``-`` and ``.``, starting
and ending with a letter or digit, at most 253 characters); a namespace's is a DNS-1123 label (no
dots, at most 63). Go's checks return the list of what is wrong (empty: fine):
:func:`dns1123_subdomain_errors` (``IsDNS1123Subdomain``), :func:`dns1123_label_errors`
(``IsDNS1123Label``) and :func:`config_map_key_errors` (``IsConfigMapKey``: a ConfigMap's or a
Secret's key, letters, digits, ``-``, ``_`` and ``.``, at most 253, and neither ``.``, ``..``
nor starting with ``..``). :func:`is_dns1123_subdomain` and :func:`is_dns1123_label` answer the
same as yes or no. This file's ``MaxLenError`` says *characters* (it counts bytes, as Go's
``len`` does); the label checks (``IsQualifiedName``, ``IsValidLabelValue``) are
pkg/api/validate/content's, whose words say *bytes* (:mod:`genericserver.apimachinery.api.validate.content`).
"""

from __future__ import annotations

import re

from genericserver.apimachinery.api.validate.content import is_label_value, is_qualified_name, regex_error

__all__ = ["DNS1123_SUBDOMAIN_MSG", "config_map_key_errors", "dns1123_label_errors", "dns1123_subdomain_errors",
           "is_dns1123_label", "is_dns1123_subdomain", "is_qualified_name", "is_valid_label_value", "max_len_error"]

DNS1123_LABEL_MAX_LENGTH, DNS1123_SUBDOMAIN_MAX_LENGTH = 63, 253
DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1123_LABEL = re.compile(DNS1123_LABEL_FMT)
DNS1123_SUBDOMAIN = re.compile(DNS1123_SUBDOMAIN_FMT)
DNS1123_LABEL_ERR_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                         "start and end with an alphanumeric character")
DNS1123_SUBDOMAIN_ERROR_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                               "and must start and end with an alphanumeric character")
DNS1123_SUBDOMAIN_MSG = regex_error(DNS1123_SUBDOMAIN_ERROR_MSG, DNS1123_SUBDOMAIN_FMT, "example.com")
CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"
CONFIG_MAP_KEY_ERR_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
_CONFIG_MAP_KEY = re.compile(CONFIG_MAP_KEY_FMT)

is_valid_label_value = is_label_value  # IsValidLabelValue = content.IsLabelValue


def _len(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


def max_len_error(length: int) -> str:
    """``MaxLenError`` of this file (characters)."""
    return f"must be no more than {length} characters"


def dns1123_label_errors(value: str) -> list[str]:
    errs = []
    if _len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not DNS1123_LABEL.fullmatch(value):
        if DNS1123_SUBDOMAIN.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(DNS1123_LABEL_ERR_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def dns1123_subdomain_errors(value: str) -> list[str]:
    errs = []
    if _len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not DNS1123_SUBDOMAIN.fullmatch(value):
        errs.append(DNS1123_SUBDOMAIN_MSG)
    return errs


def config_map_key_errors(value: str) -> list[str]:
    errs = []
    if _len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _CONFIG_MAP_KEY.fullmatch(value):
        errs.append(regex_error(CONFIG_MAP_KEY_ERR_MSG, CONFIG_MAP_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    # hasChDirPrefix
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def is_dns1123_subdomain(value: str) -> bool:
    return not dns1123_subdomain_errors(value)


def is_dns1123_label(value: str) -> bool:
    return not dns1123_label_errors(value)
