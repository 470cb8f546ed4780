"""Port of k8s.io/apiserver/pkg/server/options/server_run_options.go (v1.36.0).

:class:`ServerRunOptions` holds the kube-apiserver flags the shutdown depends on, with the
defaults Go takes from ``server.NewConfig`` (400 / 200 in flight, a 60 s request timeout, an
1800 s minimum request timeout, no shutdown delay, no watch grace period). ``validate()``
collects every problem (it does not stop at the first) with Go's texts; ``apply_to(config)``
copies the values onto a :class:`genericserver.config.Config`.

``add_universal_flags(parser)`` registers the flags on an ``argparse`` parser and, like pflag's
``IntVar``/``DurationVar``, *binds* them: parsing a flag writes the value straight onto this
options object (and onto the namespace too). Values are read the way pflag reads them:
durations in Go syntax (``70s``, ``1m10s``, ``100ms``), integers with Go's base prefixes
(``0x1f``, ``0o17``, a leading ``0`` for octal), booleans with Go's spellings (``true``,
``1``, ``F``...), and a bad value fails with pflag's one-line text, e.g.
``invalid argument "abc" for "--shutdown-delay-duration" flag: time: invalid duration "abc"``.
The flag helpers here are shared by :mod:`genericserver.serving_options`.

Durations are float seconds here (Go: int64 nanoseconds), so help texts format them back with
``Duration.String`` (``1m0s``). Left out of Go's options: the advertise address, the external
hostname, the emulation-version registry and its two forward-compatibility switches (nothing
here has API versions to emulate). Kept but without effect, because :class:`Config` has nothing
for them: ``hsts_directives``,
``storage_initialization_timeout`` (no storage), ``json_patch_max_copy_bytes`` and
``max_request_body_bytes``. Go checks CORS entries with Go's regexp syntax, Python's ``re``
here, so a compile error reads differently. A boolean flag takes its value after ``=`` as in
pflag (``--shutdown-send-retry-after=false``); argparse would also take a separate next word.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from genericserver import klog
from genericserver.apimachinery import errors
from genericserver.godur import format_go_duration, parse_go_duration

MIB = 1024 * 1024
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1

# Kept word for word: Go appends this text to the two --cors-allowed-origins validation errors,
# and error texts are facts clients and tests match on (design.md section 3).
CORS_ALLOWED_ORIGINS_HELP_TEXT = (
    "List of allowed origins for CORS, comma separated. An allowed origin can be a regular "
    "expression to support subdomain matching. If this list is empty CORS will not be enabled. "
    "Please ensure each expression matches the entire hostname by anchoring to the start with '^' "
    "or including the '//' prefix, and by anchoring to the end with '$' or including the ':' port "
    "separator suffix. Examples of valid expressions are '//example\\.com(:|$)' and "
    "'^https://example\\.com(:|$)'"
)


# -- reading flag values the way pflag does ------------------------------------------------------


def go_quote(s: str) -> str:
    """``%q`` for the flag values and names in error texts (``strconv.Quote``)."""
    return klog.go_quote(s)


def _invalid(value: str, flag: str, err: str) -> argparse.ArgumentTypeError:
    # pflag wraps every Value.Set error in this one line, naming the flag
    return argparse.ArgumentTypeError(f"invalid argument {go_quote(value)} for {go_quote(flag)} flag: {err}")


# Go integer literals as strconv.ParseInt(s, 0, 64) accepts them: base prefixes, a leading 0 for
# octal, underscores only between digits or right after a prefix
_GO_INT = re.compile(
    r"[+-]?(?:0[xX](?:_?[0-9a-fA-F])+|0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|0(?:_?[0-7])*|[1-9](?:_?[0-9])*)\Z"
)


def parse_go_int(s: str) -> int:
    """``strconv.ParseInt(s, 0, 64)``; raises ValueError with Go's text."""
    if not _GO_INT.match(s):
        raise ValueError(f"strconv.ParseInt: parsing {go_quote(s)}: invalid syntax")
    sign = -1 if s[0] == "-" else 1
    body = s.lstrip("+-").replace("_", "")
    if len(body) > 1 and body[0] == "0" and body[1] in "xXbBoO":
        v = int(body[2:], {"x": 16, "b": 2, "o": 8}[body[1].lower()])
    elif len(body) > 1 and body[0] == "0":
        v = int(body[1:], 8)
    else:
        v = int(body)
    v *= sign
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise ValueError(f"strconv.ParseInt: parsing {go_quote(s)}: value out of range")
    return v


_GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
             "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def parse_go_bool(s: str) -> bool:
    """``strconv.ParseBool``; raises ValueError with Go's text."""
    try:
        return _GO_BOOLS[s]
    except KeyError:
        raise ValueError(f"strconv.ParseBool: parsing {go_quote(s)}: invalid syntax") from None


def parse_go_float(s: str) -> float:
    """``strconv.ParseFloat(s, 64)`` for decimal text; raises ValueError with Go's text."""
    try:
        if "_" in s:
            raise ValueError
        v = float(s)
    except ValueError:
        raise ValueError(f"strconv.ParseFloat: parsing {go_quote(s)}: invalid syntax") from None
    if math.isinf(v) and "inf" not in s.lower():
        raise ValueError(f"strconv.ParseFloat: parsing {go_quote(s)}: value out of range")
    return v


def parse_go_string_slice(s: str) -> list[str]:
    """pflag's ``StringSlice``: one CSV record; an empty value is an empty list."""
    if s == "":
        return []
    try:
        return next(csv.reader([s]))
    except csv.Error as err:
        raise ValueError(str(err)) from None


def _flag_type(flag: str, parse: Callable[[str], Any]) -> Callable[[str], Any]:
    def convert(value: str) -> Any:
        try:
            return parse(value)
        except ValueError as err:
            raise _invalid(value, flag, str(err)) from None

    convert.__name__ = parse.__name__  # argparse names the type in some messages
    return convert


def duration_flag(flag: str) -> Callable[[str], float]:
    """An argparse ``type=`` reading a Go duration into float seconds."""

    def parse_duration(value: str) -> float:
        seconds, err = parse_go_duration(value)
        if err is not None:
            raise err
        return seconds

    return _flag_type(flag, parse_duration)


def int_flag(flag: str) -> Callable[[str], int]:
    return _flag_type(flag, parse_go_int)


def float_flag(flag: str) -> Callable[[str], float]:
    return _flag_type(flag, parse_go_float)


def parse_go_uint32(s: str) -> int:
    """``strconv.ParseUint(s, 10, 32)`` (klog's ``-v`` level); raises ValueError with Go's text."""
    if not s.isascii() or not s.isdigit():
        raise ValueError(f"strconv.ParseUint: parsing {go_quote(s)}: invalid syntax")
    v = int(s)
    if v >= 1 << 32:
        raise ValueError(f"strconv.ParseUint: parsing {go_quote(s)}: value out of range")
    return v


def uint32_flag(flag: str) -> Callable[[str], int]:
    return _flag_type(flag, parse_go_uint32)


def bool_flag(flag: str) -> Callable[[str], bool]:
    return _flag_type(flag, parse_go_bool)


def string_slice_flag(flag: str) -> Callable[[str], list[str]]:
    return _flag_type(flag, parse_go_string_slice)


class _Bind(argparse.Action):
    """Write the parsed value onto ``target.<field>`` too, as pflag writes through a pointer.

    A string-slice flag given twice accumulates (the first use replaces the default), as pflag's.
    """

    def __init__(self, option_strings: list[str], dest: str, *, target: Any, field: str,
                 accumulate: bool = False, **kwargs: Any):
        super().__init__(option_strings, dest, **kwargs)
        self.target, self.field, self.accumulate = target, field, accumulate

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: Optional[str] = None) -> None:
        if self.accumulate:
            seen = f"_{self.dest}_seen"
            if getattr(namespace, seen, False):
                values = list(getattr(namespace, self.dest)) + list(values)
            setattr(namespace, seen, True)
        setattr(namespace, self.dest, values)
        setattr(self.target, self.field, values)


_KINDS: dict[str, tuple[Callable[[str], Callable[[str], Any]], str]] = {
    "int": (int_flag, "int"),
    "duration": (duration_flag, "duration"),
    "float": (float_flag, "float"),
    "bool": (bool_flag, "bool"),
    "strings": (string_slice_flag, "strings"),
    "string": (lambda flag: str, "string"),
}


def _show_default(kind: str, value: Any) -> Optional[str]:
    # pflag leaves the default out of the help when it is the type's zero value
    if kind == "duration":
        return None if value == 0 else format_go_duration(value)
    if kind == "strings":
        return None if not value else "[" + ",".join(value) + "]"
    if kind == "string":
        return None if value in ("", None) else go_quote(value)
    if kind == "bool":
        return "true" if value else None
    return None if value == 0 else str(value)


def add_bound_flag(parser: Any, target: Any, field_name: str, name: str, kind: str, help_text: str) -> None:
    """Register ``--name`` reading a ``kind`` value into ``target.field_name`` (its current value is the default)."""
    flag = "--" + name
    make_type, metavar = _KINDS[kind]
    default = getattr(target, field_name)
    shown = _show_default(kind, default)
    if shown is not None:
        help_text += f" (default {shown})"
    kwargs: dict[str, Any] = {
        "action": _Bind, "target": target, "field": field_name, "type": make_type(flag),
        "default": default, "help": help_text.replace("%", "%%"), "metavar": metavar,
    }
    if kind == "bool":
        kwargs.update(nargs="?", const=True)
    if kind == "strings":
        kwargs["accumulate"] = True
    parser.add_argument(flag, **kwargs)


# -- the options --------------------------------------------------------------------------------


@dataclass
class ServerRunOptions:
    """The generic apiserver's run options; durations are float seconds."""

    cors_allowed_origin_list: list[str] = field(default_factory=list)
    hsts_directives: list[str] = field(default_factory=list)
    max_requests_in_flight: int = 400
    max_mutating_requests_in_flight: int = 200
    request_timeout: float = 60.0
    goaway_chance: float = 0.0
    livez_grace_period: float = 0.0
    min_request_timeout: int = 1800
    storage_initialization_timeout: float = 60.0
    shutdown_delay_duration: float = 0.0
    # no flags for these two in Go either: a library user wires them up
    json_patch_max_copy_bytes: int = 3 * MIB
    max_request_body_bytes: int = 3 * MIB
    # False: stop listening once the delay is over; True: keep listening (answering 429) until
    # the non-long-running requests drained
    shutdown_send_retry_after: bool = False
    # > 0: count watches and give them at most this long to drain, rate-limited
    shutdown_watch_termination_grace_period: float = 0.0

    def apply_to(self, c: Any) -> None:
        """Copy the options onto ``c`` (a :class:`genericserver.config.Config`)."""
        c.cors_allowed_origin_list = list(self.cors_allowed_origin_list)
        c.max_requests_in_flight = self.max_requests_in_flight
        c.max_mutating_requests_in_flight = self.max_mutating_requests_in_flight
        c.livez_grace_period = self.livez_grace_period
        c.request_timeout = self.request_timeout
        c.min_request_timeout = self.min_request_timeout
        c.shutdown_delay_duration = self.shutdown_delay_duration
        c.shutdown_send_retry_after = self.shutdown_send_retry_after
        c.goaway_chance = self.goaway_chance
        c.shutdown_watch_termination_grace_period = self.shutdown_watch_termination_grace_period

    def validate(self) -> list[str]:
        """Every problem with the options, in Go's order and words (empty: all good)."""
        errs: list[str] = []
        if self.livez_grace_period < 0:
            errs.append("--livez-grace-period can not be a negative value")
        if self.max_requests_in_flight < 0:
            errs.append("--max-requests-inflight can not be negative value")
        if self.max_mutating_requests_in_flight < 0:
            errs.append("--max-mutating-requests-inflight can not be negative value")
        if self.request_timeout < 0:
            errs.append("--request-timeout can not be negative value")
        if self.goaway_chance < 0 or self.goaway_chance > 0.02:
            errs.append("--goaway-chance can not be less than 0 or greater than 0.02")
        if self.min_request_timeout < 0:
            errs.append("--min-request-timeout can not be negative value")
        if self.storage_initialization_timeout < 0:
            errs.append("--storage-initialization-timeout can not be negative value")
        if self.shutdown_delay_duration < 0:
            errs.append("--shutdown-delay-duration can not be negative value")
        if self.shutdown_watch_termination_grace_period < 0:
            # sic: Go's text has no leading dashes here
            errs.append("shutdown-watch-termination-grace-period, if provided, can not be a negative value")
        if self.json_patch_max_copy_bytes < 0:
            errs.append("ServerRunOptions.JSONPatchMaxCopyBytes can not be negative value")
        if self.max_request_body_bytes < 0:
            errs.append("ServerRunOptions.MaxRequestBodyBytes can not be negative value")
        err = validate_hsts_directives(self.hsts_directives)
        if err:
            errs.append(err)
        err = validate_cors_allowed_origin_list(self.cors_allowed_origin_list)
        if err:
            errs.append(err)
        return errs

    def add_universal_flags(self, parser: Any) -> None:
        """Register the run flags on ``parser`` (an ``argparse`` parser or group), bound to self."""
        add = lambda fld, name, kind, text: add_bound_flag(parser, self, fld, name, kind, text)  # noqa: E731
        add("cors_allowed_origin_list", "cors-allowed-origins", "strings", CORS_ALLOWED_ORIGINS_HELP_TEXT)
        add("max_requests_in_flight", "max-requests-inflight", "int",
            "The most non-mutating requests (get, list, watch) served at once; more are refused "
            "with 429. Zero disables the limit. (With priority and fairness, which is not built "
            "here, this and --max-mutating-requests-inflight add up to the total concurrency.)")
        add("max_mutating_requests_in_flight", "max-mutating-requests-inflight", "int",
            "The most mutating requests served at once; more are refused with 429. Zero disables "
            "the limit.")
        add("request_timeout", "request-timeout", "duration",
            "How long a handler may keep a request open before it is timed out. The default for "
            "all requests; some kinds of request use other flags such as --min-request-timeout.")
        add("min_request_timeout", "min-request-timeout", "int",
            "The least number of seconds a handler keeps a request open before timing it out. "
            "Only the watch handler honours it, picking a random timeout between this and twice "
            "this, so that watches do not all end at once.")
        add("goaway_chance", "goaway-chance", "float",
            "The fraction of HTTP/2 requests answered with GOAWAY so that clients spread over "
            "several apiservers behind a load balancer; 0 (off) to .02. Set it to .001 "
            "when the apiservers sit behind a load balancer.")
        add("livez_grace_period", "livez-grace-period", "duration",
            "How long the server may take to start up and become live: until then /livez counts "
            "unfinished post-start hooks as successful.")
        add("shutdown_delay_duration", "shutdown-delay-duration", "duration",
            "How long to delay the termination. Meanwhile requests are served as usual and "
            "/healthz and /livez succeed, but /readyz fails at once, so that load balancers stop "
            "sending traffic here. The graceful termination begins after this delay.")
        add("shutdown_send_retry_after", "shutdown-send-retry-after", "bool",
            "If true, the HTTP server keeps listening until every non-long-running request in "
            "flight has drained, answering new requests meanwhile with 429, a 'Retry-After' "
            "header and 'Connection: close' so that idle connections are torn down.")
        add("shutdown_watch_termination_grace_period", "shutdown-watch-termination-grace-period", "duration",
            "If set, the longest the server waits for active watch requests to drain during the "
            "graceful shutdown.")


@dataclass
class LogsOptions:
    """component-base's logging flags (``logsapi.AddFlags``), the parts this server honours:
    ``-v``/``--v`` (klog's verbosity, 0 by default) and ``--logging-format`` (``text``, ``json``)."""

    verbosity: int = 0
    format: str = "text"

    def add_flags(self, parser: Any) -> None:
        parser.add_argument("-v", "--v", dest="verbosity", type=uint32_flag("-v, --v"), default=0, metavar="Level",
                            help="number for the log level verbosity")
        parser.add_argument("--logging-format", dest="logging_format", choices=klog.FORMATS, default="text", metavar="string",
                            help='Sets the log format. Permitted formats: "json" (gated by LoggingBetaOptions), "text". (default "text")')

    def read(self, args: argparse.Namespace) -> None:
        """Take the parsed values (argparse's namespace)."""
        self.verbosity, self.format = args.verbosity, args.logging_format

    def validate(self) -> list[str]:
        return []  # argparse has checked both values

    def apply(self, stream: Any = None) -> None:
        """Log to ``stream`` (stderr) in the format and at the verbosity asked for."""
        klog.setup(stream, self.format, self.verbosity)


def new_server_run_options() -> ServerRunOptions:
    """``NewServerRunOptions``: the defaults come from ``new_config()``, as Go's come from NewConfig."""
    from genericserver.config import new_config  # config pulls in the whole server

    d = new_config()
    return ServerRunOptions(
        max_requests_in_flight=d.max_requests_in_flight,
        max_mutating_requests_in_flight=d.max_mutating_requests_in_flight,
        request_timeout=d.request_timeout,
        livez_grace_period=d.livez_grace_period,
        min_request_timeout=d.min_request_timeout,
        shutdown_delay_duration=d.shutdown_delay_duration,
        shutdown_watch_termination_grace_period=d.shutdown_watch_termination_grace_period,
        shutdown_send_retry_after=False,
    )


def validate_hsts_directives(directives: list[str]) -> Optional[str]:
    """``max-age=<n>``, ``includeSubDomains`` and ``preload`` only (RFC 6797 6.1); errors joined."""
    errs: list[str] = []
    for d in directives:
        if not d.strip():
            errs.append("empty value in strict-transport-security-directives")
            continue
        if d not in ("includeSubDomains", "preload"):
            parts = d.split("=")
            if len(parts) != 2 or parts[0] != "max-age":
                errs.append(
                    "--strict-transport-security-directives invalid, allowed values: max-age=expireTime, "
                    "includeSubDomains, preload. see https://tools.ietf.org/html/rfc6797#section-6.1 for more information"
                )
    return _aggregate(errs)


def _pins_host(expr: str) -> Optional[str]:
    try:
        re.compile(expr)
    except re.error as err:
        return f"error parsing regexp: {err}"
    # an origin pattern must be anchored at both ends of the host (CVE-2022-1996): the start by
    # '^' or the '//' after the scheme, the end by '$' or the ':' before a port
    pin_start = any(p in expr for p in ("^", "//"))
    pin_end = any(s in expr for s in ("$", ":"))
    if not (pin_start and pin_end):
        return "regular expression does not pin to start/end of host in the origin header"
    return None


def validate_cors_allowed_origin_list(origins: list[str]) -> Optional[str]:
    errs: list[str] = []
    for expr in origins:
        if not expr:
            errs.append(f"empty value in --cors-allowed-origins, help: {CORS_ALLOWED_ORIGINS_HELP_TEXT}")
            continue
        problem = _pins_host(expr)
        if problem is not None:
            errs.append(f"--cors-allowed-origins has an invalid regular expression: {problem}, help: {CORS_ALLOWED_ORIGINS_HELP_TEXT}")
    return _aggregate(errs)


def _aggregate(errs: list[str]) -> Optional[str]:
    # utilerrors.NewAggregate(...).Error(): one error as is, several as "[a, b]", repeats once
    agg = errors.new_aggregate([ValueError(e) for e in errs])
    return None if agg is None else str(agg)
