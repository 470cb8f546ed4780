"""Ports of k8s.io/apimachinery/pkg/api/validate/content/{kube,dns,path,errors}.go (v1.36.0): what a label, a DNS name and a path segment may hold.

Each check returns the list of what is wrong with a value, in Go's words (empty: the value is
fine), which the validation of object metadata turns into field errors:

* :func:`is_label_key` (``IsLabelKey``, also ``IsQualifiedName``): an optional DNS-1123 subdomain
  prefix and ``/``, then a name of at most 63 letters, digits, ``-``, ``_`` or ``.``, starting and
  ending with a letter or digit. Each message names the part it is about (``prefix part ...``,
  ``name part ...``); more than one ``/`` is one message about the whole key;
* :func:`is_label_value` (``IsLabelValue``): empty, or a name as above, at most 63 bytes;
* :func:`is_dns1123_label` and :func:`is_dns1123_subdomain` as this package words them (its
  length message says *bytes*; util/validation's own copies say *characters*:
  :mod:`genericserver.apimachinery.validation`);
* :func:`is_path_segment_name` and :func:`is_path_segment_prefix`: what every object's name must
  be to sit in a URL path (not ``.`` or ``..``, no ``/`` or ``%``).

Lengths are counted in bytes of UTF-8, as Go's ``len`` of a string counts them.
"""

from __future__ import annotations

import re

# -- errors.go ----------------------------------------------------------------------------------


def max_len_error(length: int) -> str:
    """``MaxLenError`` of this package (bytes)."""
    return f"must be no more than {length} bytes"


def empty_error() -> str:
    return "must be non-empty"


def regex_error(msg: str, regex: str, *examples: str) -> str:
    """``RegexError``: the message, the examples each quoted and followed by a comma, the regex."""
    if not examples:
        return f"{msg} (regex used for validation is '{regex}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{regex}')"


# -- dns.go -------------------------------------------------------------------------------------

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL_ERR_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                         "start and end with an alphanumeric character")
DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1123_SUBDOMAIN_ERROR_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                               "and must start and end with an alphanumeric character")
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
_DNS1123_LABEL = re.compile(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN = re.compile(DNS1123_SUBDOMAIN_FMT)


def _len(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if _len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL.fullmatch(value):
        if _DNS1123_SUBDOMAIN.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(DNS1123_LABEL_ERR_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if _len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errs.append(regex_error(DNS1123_SUBDOMAIN_ERROR_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


# -- kube.go ------------------------------------------------------------------------------------

LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_KEY_ERR_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
LABEL_KEY_MAX_LENGTH = 63
LABEL_VALUE_FMT = "(" + LABEL_KEY_FMT + ")?"
LABEL_VALUE_ERR_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                       "must start and end with an alphanumeric character")
LABEL_VALUE_MAX_LENGTH = 63
_LABEL_KEY = re.compile(LABEL_KEY_FMT)
_LABEL_VALUE = re.compile(LABEL_VALUE_FMT)


def is_label_key(value: str) -> list[str]:
    """``IsLabelKey`` (``IsQualifiedName``)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return ["a valid label key " + regex_error(LABEL_KEY_ERR_MSG, LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part " + empty_error())
    elif _len(name) > LABEL_KEY_MAX_LENGTH:
        errs.append("name part " + max_len_error(LABEL_KEY_MAX_LENGTH))
    if not _LABEL_KEY.fullmatch(name):
        errs.append("name part " + regex_error(LABEL_KEY_ERR_MSG, LABEL_KEY_FMT, "MyName", "my.name", "123-abc"))
    return errs


is_qualified_name = is_label_key


def is_label_value(value: str) -> list[str]:
    errs = []
    if _len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(regex_error(LABEL_VALUE_ERR_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


# -- path.go ------------------------------------------------------------------------------------


def is_path_segment_name(name: str) -> list[str]:
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return is_path_segment_prefix(name)


def is_path_segment_prefix(name: str) -> list[str]:
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]
