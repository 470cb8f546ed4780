"""Tests of genericserver.options: the cases of pkg/server/options/server_run_options_test.go, and the flags."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from genericserver.apimachinery import errors
from genericserver.config import new_config
from genericserver.godur import format_go_duration_ns
from genericserver.options import (
    ServerRunOptions,
    new_server_run_options,
    parse_go_bool,
    parse_go_float,
    parse_go_int,
)

MIB = 1024 * 1024


def base(**overrides) -> ServerRunOptions:
    """The fields every case of TestServerRunOptionsValidate sets (the advertise address and the
    component registry aside, which are not ported)."""
    fields = dict(
        cors_allowed_origin_list=["10.10.10.100", "10.10.10.200"],
        max_requests_in_flight=400,
        max_mutating_requests_in_flight=200,
        request_timeout=120.0,
        min_request_timeout=1800,
        json_patch_max_copy_bytes=10 * MIB,
        max_request_body_bytes=10 * MIB,
    )
    fields.update(overrides)
    return ServerRunOptions(**fields)


VALID_CORS = ["^10.10.10.100$", "^10.10.10.200$"]
VALID_HSTS = ["max-age=31536000", "includeSubDomains", "preload"]

# TestServerRunOptionsValidate; the four emulation-version cases are not ported (no component
# version registry here)
VALIDATE_CASES = [
    ("Test when MaxRequestsInFlight is negative value", base(max_requests_in_flight=-400),
     "--max-requests-inflight can not be negative value"),
    ("Test when MaxMutatingRequestsInFlight is negative value", base(max_mutating_requests_in_flight=-200),
     "--max-mutating-requests-inflight can not be negative value"),
    ("Test when RequestTimeout is negative value", base(request_timeout=-120.0),
     "--request-timeout can not be negative value"),
    ("Test when MinRequestTimeout is negative value", base(min_request_timeout=-1800),
     "--min-request-timeout can not be negative value"),
    ("Test when JSONPatchMaxCopyBytes is negative value", base(json_patch_max_copy_bytes=-10 * MIB),
     "ServerRunOptions.JSONPatchMaxCopyBytes can not be negative value"),
    ("Test when MaxRequestBodyBytes is negative value", base(max_request_body_bytes=-10 * MIB),
     "ServerRunOptions.MaxRequestBodyBytes can not be negative value"),
    ("Test when LivezGracePeriod is negative value", base(livez_grace_period=-1.0),
     "--livez-grace-period can not be a negative value"),
    ("Test when MinimalShutdownDuration is negative value", base(shutdown_delay_duration=-1.0),
     "--shutdown-delay-duration can not be negative value"),
    ("Test when HSTSHeaders is valid", base(hsts_directives=["fakevalue", "includeSubDomains", "preload"]),
     "--strict-transport-security-directives invalid, allowed values: max-age=expireTime, includeSubDomains, "
     "preload. see https://tools.ietf.org/html/rfc6797#section-6.1 for more information"),
    ("Test when ServerRunOptions is valid", base(cors_allowed_origin_list=VALID_CORS, hsts_directives=VALID_HSTS), ""),
]


def aggregate_text(errs: list[str]) -> str:
    agg = errors.new_aggregate([ValueError(e) for e in errs])
    return "" if agg is None else str(agg)


@pytest.mark.parametrize("opts,expect_err", [c[1:] for c in VALIDATE_CASES], ids=[c[0] for c in VALIDATE_CASES])
def test_server_run_options_validate(opts: ServerRunOptions, expect_err: str):
    errs = opts.validate()
    if expect_err:
        assert expect_err in aggregate_text(errs)
    else:
        assert errs == []


# TestValidateCorsAllowedOriginList
CORS_CASES = [
    ([], ""),
    (["^http://foo.com$"], ""),
    (["^http://foo.com"], ""),
    (["://foo.com$"], ""),
    (["//foo.com$"], ""),
    (["^http://foo.com(:|$)"], ""),
    (["://foo.com(:|$)"], ""),
    (["//foo.com(:|$)"], ""),
    (["(^foo.com$)"], ""),
    (["^http://foo.com$", "//bar.com(:|$)"], ""),
    (["^http://foo.com$", ""], "empty value in --cors-allowed-origins"),
    (["^foo.com"], "regular expression does not pin to start/end of host in the origin header"),
    (["//foo.com"], "regular expression does not pin to start/end of host in the origin header"),
    (["foo.com$"], "regular expression does not pin to start/end of host in the origin header"),
    (["foo.com(:|$)"], "regular expression does not pin to start/end of host in the origin header"),
    (["^http://foo.com$", "^foo.com"], "regular expression does not pin to start/end of host in the origin header"),
]


@pytest.mark.parametrize("regexp,err_should_contain", CORS_CASES, ids=[f"regexp/{c[0]}" for c in CORS_CASES])
def test_validate_cors_allowed_origin_list(regexp: list[str], err_should_contain: str):
    options = new_server_run_options()
    assert options.validate() == [], "wrong test setup"
    options.cors_allowed_origin_list = regexp
    errs = options.validate()
    if not err_should_contain:
        assert errs == []
    else:
        assert errs and err_should_contain in aggregate_text(errs)


def test_cors_errors_name_the_flag_and_carry_the_help_text():
    opts = new_server_run_options()
    opts.cors_allowed_origin_list = ["^foo.com", "(unclosed$"]
    (err,) = opts.validate()
    assert err.startswith("[--cors-allowed-origins has an invalid regular expression: regular expression does not pin")
    assert "--cors-allowed-origins has an invalid regular expression: error parsing regexp: " in err
    assert err.count(", help: List of allowed origins for CORS") == 2


# TestServerRunOptionsWithShutdownWatchTerminationGracePeriod
def _negative_grace() -> ServerRunOptions:
    o = new_server_run_options()
    o.shutdown_watch_termination_grace_period = -1.0
    return o


@pytest.mark.parametrize(
    "options_fn,err_should_contain",
    [(new_server_run_options, ""), (_negative_grace, "shutdown-watch-termination-grace-period, if provided, can not be a negative value")],
    ids=["default should be valid", "negative not allowed"],
)
def test_server_run_options_with_shutdown_watch_termination_grace_period(options_fn, err_should_contain):
    errs = options_fn().validate()
    if not err_should_contain:
        assert errs == []
    else:
        assert errs and err_should_contain in aggregate_text(errs)


def test_shutdown_watch_termination_grace_period_default_should_be_zero():
    assert new_server_run_options().shutdown_watch_termination_grace_period == 0


def test_validate_collects_every_error_in_go_order():
    opts = ServerRunOptions(
        livez_grace_period=-1, max_requests_in_flight=-1, max_mutating_requests_in_flight=-1, request_timeout=-1,
        goaway_chance=0.5, min_request_timeout=-1, storage_initialization_timeout=-1, shutdown_delay_duration=-1,
        shutdown_watch_termination_grace_period=-1, json_patch_max_copy_bytes=-1, max_request_body_bytes=-1,
        hsts_directives=[" "],
    )
    assert opts.validate() == [
        "--livez-grace-period can not be a negative value",
        "--max-requests-inflight can not be negative value",
        "--max-mutating-requests-inflight can not be negative value",
        "--request-timeout can not be negative value",
        "--goaway-chance can not be less than 0 or greater than 0.02",
        "--min-request-timeout can not be negative value",
        "--storage-initialization-timeout can not be negative value",
        "--shutdown-delay-duration can not be negative value",
        "shutdown-watch-termination-grace-period, if provided, can not be a negative value",
        "ServerRunOptions.JSONPatchMaxCopyBytes can not be negative value",
        "ServerRunOptions.MaxRequestBodyBytes can not be negative value",
        "empty value in strict-transport-security-directives",
    ]


@pytest.mark.parametrize("chance,ok", [(0.0, True), (0.02, True), (0.001, True), (-0.001, False), (0.0201, False)])
def test_goaway_chance_bounds(chance: float, ok: bool):
    assert (ServerRunOptions(goaway_chance=chance).validate() == []) is ok


def test_zero_values_are_valid():
    opts = ServerRunOptions(max_requests_in_flight=0, max_mutating_requests_in_flight=0, request_timeout=0, min_request_timeout=0)
    assert opts.validate() == []


def test_defaults_come_from_new_config():
    d = new_config()
    o = new_server_run_options()
    assert (o.max_requests_in_flight, o.max_mutating_requests_in_flight) == (d.max_requests_in_flight, d.max_mutating_requests_in_flight) == (400, 200)
    assert (o.request_timeout, o.min_request_timeout) == (d.request_timeout, d.min_request_timeout) == (60.0, 1800)
    assert o.livez_grace_period == o.shutdown_delay_duration == o.shutdown_watch_termination_grace_period == 0
    assert o.shutdown_send_retry_after is False
    assert o.json_patch_max_copy_bytes == o.max_request_body_bytes == 3 * MIB


def test_apply_to_copies_the_values():
    opts = ServerRunOptions(
        cors_allowed_origin_list=["^a$"], max_requests_in_flight=7, max_mutating_requests_in_flight=3, request_timeout=9.5,
        min_request_timeout=11, livez_grace_period=2.0, shutdown_delay_duration=70.0, shutdown_send_retry_after=True,
        shutdown_watch_termination_grace_period=4.0,
    )
    c = new_config()
    opts.apply_to(c)
    assert c.cors_allowed_origin_list == ["^a$"]
    assert (c.max_requests_in_flight, c.max_mutating_requests_in_flight) == (7, 3)
    assert (c.request_timeout, c.min_request_timeout, c.livez_grace_period) == (9.5, 11, 2.0)
    assert (c.shutdown_delay_duration, c.shutdown_send_retry_after, c.shutdown_watch_termination_grace_period) == (70.0, True, 4.0)


# -- flags ---------------------------------------------------------------------------------------


def parser_for(opts: ServerRunOptions) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="genericserver")
    opts.add_universal_flags(p)
    return p


def test_flags_bind_to_the_options_in_go_syntax():
    opts = new_server_run_options()
    ns = parser_for(opts).parse_args([
        "--shutdown-delay-duration=1m10s", "--request-timeout", "100ms", "--livez-grace-period=1h",
        "--shutdown-watch-termination-grace-period=70s", "--max-requests-inflight=0x10",
        "--max-mutating-requests-inflight=017", "--min-request-timeout=1_800", "--goaway-chance=.001",
        "--shutdown-send-retry-after", "--cors-allowed-origins=^a$,^b$", "--cors-allowed-origins=^c$",
    ])
    assert (opts.shutdown_delay_duration, opts.request_timeout, opts.livez_grace_period) == (70.0, 0.1, 3600.0)
    assert opts.shutdown_watch_termination_grace_period == 70.0
    assert (opts.max_requests_in_flight, opts.max_mutating_requests_in_flight, opts.min_request_timeout) == (16, 15, 1800)
    assert opts.goaway_chance == 0.001
    assert opts.shutdown_send_retry_after is True
    assert opts.cors_allowed_origin_list == ["^a$", "^b$", "^c$"]
    assert ns.shutdown_delay_duration == 70.0 and ns.max_requests_inflight == 16


def test_unset_flags_keep_the_defaults():
    opts = new_server_run_options()
    ns = parser_for(opts).parse_args([])
    assert opts == new_server_run_options()
    assert ns.request_timeout == 60.0 and ns.shutdown_send_retry_after is False


@pytest.mark.parametrize("value,want", [("true", True), ("false", False), ("1", True), ("F", False), ("TRUE", True)])
def test_bool_flag_values(value: str, want: bool):
    opts = new_server_run_options()
    parser_for(opts).parse_args([f"--shutdown-send-retry-after={value}"])
    assert opts.shutdown_send_retry_after is want


@pytest.mark.parametrize(
    "arg,message",
    [
        ("--shutdown-delay-duration=abc", 'invalid argument "abc" for "--shutdown-delay-duration" flag: time: invalid duration "abc"'),
        ("--request-timeout=10", 'invalid argument "10" for "--request-timeout" flag: time: missing unit in duration "10"'),
        ("--livez-grace-period=1d", 'invalid argument "1d" for "--livez-grace-period" flag: time: unknown unit "d" in duration "1d"'),
        ("--max-requests-inflight=ten", 'invalid argument "ten" for "--max-requests-inflight" flag: strconv.ParseInt: parsing "ten": invalid syntax'),
        ("--min-request-timeout=9223372036854775808",
         'invalid argument "9223372036854775808" for "--min-request-timeout" flag: strconv.ParseInt: parsing "9223372036854775808": value out of range'),
        ("--goaway-chance=lots", 'invalid argument "lots" for "--goaway-chance" flag: strconv.ParseFloat: parsing "lots": invalid syntax'),
        ("--shutdown-send-retry-after=yes", 'invalid argument "yes" for "--shutdown-send-retry-after" flag: strconv.ParseBool: parsing "yes": invalid syntax'),
        # %q is strconv.Quote: a control character as \x01 (JSON's quoting wrote \u0001)
        ("--max-requests-inflight=t\x01n",
         'invalid argument "t\\x01n" for "--max-requests-inflight" flag: strconv.ParseInt: parsing "t\\x01n": invalid syntax'),
    ],
    ids=["duration", "duration-without-unit", "duration-unknown-unit", "int", "int-out-of-range", "float", "bool",
         "control-character"],
)
def test_a_bad_flag_value_is_one_line_naming_the_flag(arg: str, message: str, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parser_for(new_server_run_options()).parse_args([arg])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    flag = arg.split("=")[0]
    assert err == f"genericserver: error: argument {flag}: {message}"


def test_help_shows_non_zero_defaults_in_go_syntax():
    text = " ".join(parser_for(new_server_run_options()).format_help().split())
    assert "--request-timeout duration" in text
    assert "(default 1m0s)" in text
    assert "(default 400)" in text and "(default 200)" in text and "(default 1800)" in text
    # zero defaults are left out, as pflag does
    delay_help = text.split("--shutdown-delay-duration duration", 1)[1].split("--shutdown-send-retry-after", 1)[0]
    assert "(default" not in delay_help


# -- the value parsers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,want",
    [("0", 0), ("42", 42), ("-5", -5), ("+5", 5), ("0x1f", 31), ("0X1F", 31), ("017", 15), ("0o17", 15),
     ("0b101", 5), ("1_000", 1000), ("0x_1f", 31), ("-9223372036854775808", -(1 << 63))],
)
def test_parse_go_int(text: str, want: int):
    assert parse_go_int(text) == want


@pytest.mark.parametrize("text", ["", "abc", "08", "1__0", "_1", "1_", "0x", "1.5", " 1", "0b2"])
def test_parse_go_int_rejects(text: str):
    with pytest.raises(ValueError, match=r"^strconv\.ParseInt: parsing .*: invalid syntax$"):
        parse_go_int(text)


@given(st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1))
def test_parse_go_int_reads_decimal_and_hex_back(n: int):
    assert parse_go_int(str(n)) == n
    assert parse_go_int(("-" if n < 0 else "") + hex(abs(n))) == n


@given(st.integers(min_value=0, max_value=(1 << 63) - 1))
def test_a_duration_reads_back_from_its_go_string(ns: int):
    # what the help prints parses back to the same value (to the float's precision)
    text = format_go_duration_ns(ns)
    opts = new_server_run_options()
    parser_for(opts).parse_args([f"--shutdown-delay-duration={text}"])
    assert opts.shutdown_delay_duration == pytest.approx(ns / 1e9, rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("text", ["1", "t", "T", "TRUE", "true", "True"])
def test_parse_go_bool_true(text: str):
    assert parse_go_bool(text) is True


@pytest.mark.parametrize("text", ["0", "f", "F", "FALSE", "false", "False"])
def test_parse_go_bool_false(text: str):
    assert parse_go_bool(text) is False


def test_parse_go_bool_rejects_other_spellings():
    with pytest.raises(ValueError, match=r'^strconv\.ParseBool: parsing "yes": invalid syntax$'):
        parse_go_bool("yes")


def test_parse_go_float():
    assert parse_go_float(".02") == 0.02
    assert parse_go_float("1e-3") == 0.001
    with pytest.raises(ValueError, match="value out of range"):
        parse_go_float("1e400")
    with pytest.raises(ValueError, match="invalid syntax"):
        parse_go_float("1_0")
