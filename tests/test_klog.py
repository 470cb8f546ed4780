"""genericserver.klog: klog's lines (caller, levels, value formats) and component-base's JSON lines."""

from __future__ import annotations

import io
import json
import logging
import os
import re

import pytest

from genericserver import klog


@pytest.fixture
def out():
    """klog's text output into a buffer, restored afterwards."""
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    buf = io.StringIO()
    klog.setup(buf)
    try:
        yield buf
    finally:
        root.handlers[:], _ = saved
        root.setLevel(saved[1])


@pytest.fixture
def json_out():
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    buf = io.StringIO()
    klog.setup(buf, "json")
    try:
        yield buf
    finally:
        root.handlers[:], _ = saved
        root.setLevel(saved[1])


def line_of(marker: str) -> int:
    """The line of this file holding ``marker`` (the call a log line must name)."""
    with open(__file__) as f:
        for n, text in enumerate(f, 1):
            if marker in text and "line_of(" not in text:
                return n
    raise AssertionError(marker)


HEADER = re.compile(r"^([IWEF])(\d{4}) (\d\d:\d\d:\d\d\.\d{6}) +(\d+) ([^ ]+):(\d+)\] (.*)$", re.S)


def test_the_header_names_the_caller_for_plain_and_structured_lines(out):
    klog.info("plain line")  # call: plain
    klog.info_s("structured line", name="ShutdownInitiated")  # call: structured
    klog.errorf("Failed to shutdown server: %s", "boom")  # call: errorf
    lines = out.getvalue().splitlines()
    parsed = [HEADER.match(line).groups() for line in lines]
    assert [(p[0], p[4], int(p[5]), p[6]) for p in parsed] == [
        ("I", "test_klog.py", line_of("# call: plain"), "plain line"),
        ("I", "test_klog.py", line_of("# call: structured"), '"structured line" name="ShutdownInitiated"'),
        ("E", "test_klog.py", line_of("# call: errorf"), "Failed to shutdown server: boom"),
    ]
    assert all(int(p[3]) == os.getpid() for p in parsed)
    # the pid is right-aligned in 7 columns after one space, as klog pads it
    assert lines[0][21:30] == f" {os.getpid():>7} "


def helper_that_logs_for_its_caller() -> None:
    klog.v(0).info_s_depth(1, "from a helper")


def test_depth_names_the_helpers_caller(out):
    helper_that_logs_for_its_caller()  # call: helper
    assert f"test_klog.py:{line_of('# call: helper')}]" in out.getvalue()


def test_verbosity_gates_v_lines_as_klog_does(out):
    with klog.with_verbosity(0):
        assert not klog.v(1).enabled and klog.v(0).enabled
        klog.v(1).info_s("hidden at 0")
    with klog.with_verbosity(1):
        klog.v(1).info_s("shown at 1")
        klog.v(2).info("hidden at 1")
    assert '"shown at 1"' in out.getvalue()
    assert "hidden" not in out.getvalue()
    assert klog.verbosity() == 0


@pytest.mark.parametrize(
    "value, text",
    [
        ("plain", '="plain"'),
        ('say "hi"\\', '="say \\"hi\\"\\\\"'),
        ("tab\there", '="tab\\there"'),
        ("\x01\x7f", '="\\x01\\x7f"'),
        ("ünïcode ✓", '="ünïcode ✓"'),  # printable: as is, as strconv.Quote
        ("\u2028", '="\\u2028"'),  # a line separator is not printable
        ("line 1\nline 2", "=<\n\tline 1\n\tline 2\n >"),
        ("ends with a break\n", "=<\n\tends with a break\n >"),
        (None, "=null"),
        (True, "=true"),
        (7, "=7"),
        (2.0, "=2"),
        (0.5, "=0.5"),
        ([1, "a"], '=[1,"a"]'),
        ({"k": "<v>"}, '={"k":"\\u003cv\\u003e"}'),  # Go's encoder escapes HTML characters
        (ValueError("bad value"), '="bad value"'),  # an error: its text, quoted
    ],
)
def test_values_as_klog_serialize_writes_them(value, text):
    assert klog.format_value(value) == text


def test_error_s_puts_err_first_and_nil_err_nowhere():
    assert klog.format_s("msg", ValueError("x"), a=1) == '"msg" err="x" a=1'
    assert klog.format_s("msg", None, a=1) == '"msg" a=1'


def test_json_lines_as_component_base_writes_them(json_out):
    with klog.with_verbosity(1):
        klog.v(1).info_s("[graceful-termination] shutdown event", name="ShutdownInitiated")  # call: json-info
        klog.error_s(ValueError("boom"), "Failed", count=2)  # call: json-error
        klog.info("plain")
    first, second, third = [json.loads(line) for line in json_out.getvalue().splitlines()]
    here = f"tests/test_klog.py:{line_of('# call: json-info')}"
    assert list(first) == ["ts", "caller", "msg", "v", "name"]
    assert first["caller"] == here and first["v"] == 1 and first["name"] == "ShutdownInitiated"
    assert first["msg"] == "[graceful-termination] shutdown event"
    assert 1e12 < first["ts"] < 1e14  # milliseconds since the epoch
    # an error: no "v", the pairs, then "err" (zapr adds it last)
    assert list(second) == ["ts", "caller", "msg", "count", "err"]
    assert second == {**second, "msg": "Failed", "count": 2, "err": "boom"}
    assert third["msg"] == "plain" and third["v"] == 0


def test_fatalf_logs_f_and_exits_255(out, monkeypatch):
    codes = []
    monkeypatch.setattr(klog, "_exit", codes.append)
    with pytest.raises(SystemExit):
        klog.fatalf('PostStartHook %s failed: %s', '"x"', "boom")
    assert codes == [255]
    assert HEADER.match(out.getvalue().splitlines()[0]).group(1) == "F"
    assert out.getvalue().rstrip().endswith('] PostStartHook "x" failed: boom')
