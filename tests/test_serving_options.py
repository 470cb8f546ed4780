"""Tests of genericserver.serving_options: serving, audit, authentication and authorization flags."""

from __future__ import annotations

import argparse
import io
import os
import socket
import stat

import pytest

from genericserver import authz
from genericserver.audit.buffered import BufferedBackend
from genericserver.audit.log_backend import LogBackend
from genericserver.authn import ANONYMOUS
from genericserver.config import new_config
from genericserver.net.http.server import listen
from genericserver.serving_options import (
    AuditOptions,
    AuthenticationOptions,
    AuthorizationOptions,
    OptionsError,
    SecureServingOptions,
)


def parse(opts, args: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="genericserver")
    opts.add_flags(p)
    return p.parse_args(args)


# -- secure serving ------------------------------------------------------------------------------


def test_secure_serving_defaults():
    o = SecureServingOptions()
    assert (o.bind_address, o.bind_port, o.cert_file, o.key_file) == ("127.0.0.1", 6443, "", "")
    assert o.validate() == []


@pytest.mark.parametrize("port,errs", [
    (0, []), (1, []), (65535, []),
    (-1, ["--secure-port -1 must be between 0 and 65535, inclusive. 0 picks a free port"]),
    (65536, ["--secure-port 65536 must be between 0 and 65535, inclusive. 0 picks a free port"]),
])
def test_secure_port_range(port: int, errs: list[str]):
    assert SecureServingOptions(bind_port=port).validate() == errs


def test_secure_serving_flags():
    o = SecureServingOptions()
    parse(o, ["--bind-address=0.0.0.0", "--secure-port=0", "--tls-cert-file=c.pem", "--tls-private-key-file=k.pem"])
    assert (o.bind_address, o.bind_port, o.cert_file, o.key_file) == ("0.0.0.0", 0, "c.pem", "k.pem")


def test_port_zero_binds_a_free_port_and_records_it():
    o = SecureServingOptions(bind_port=0)
    c = new_config()
    o.apply_to(c)
    ln = c.secure_serving.listener
    try:
        assert o.bind_port == ln.getsockname()[1] > 0
        assert c.secure_serving.address() == f"127.0.0.1:{o.bind_port}"
        assert c.secure_serving.tls_config() is None
        with socket.create_connection(("127.0.0.1", o.bind_port), timeout=5):
            pass  # the backlog takes it: the socket is listening
    finally:
        ln.close()


def test_a_taken_port_fails_with_gos_text():
    taken = listen("127.0.0.1", 0)
    port = taken.getsockname()[1]
    try:
        with pytest.raises(OptionsError) as err:
            SecureServingOptions(bind_port=port).apply_to(new_config())
        assert str(err.value) == (
            f"failed to create listener: failed to listen on 127.0.0.1:{port}: "
            f"listen tcp 127.0.0.1:{port}: bind: address already in use"
        )
    finally:
        taken.close()


def test_a_cert_without_a_key_fails_and_leaves_no_listener():
    c = new_config()
    with pytest.raises(OptionsError, match="^missing filename for serving cert$"):
        SecureServingOptions(bind_port=0, cert_file="cert.pem").apply_to(c)
    assert c.secure_serving is None  # and the leak check proves the listener was closed


def test_an_unreadable_cert_fails_and_leaves_no_listener(tmp_path):
    with pytest.raises(OptionsError, match="^failed to load serving cert/key "):
        SecureServingOptions(bind_port=0, cert_file=str(tmp_path / "c.pem"), key_file=str(tmp_path / "k.pem")).apply_to(new_config())


def test_a_cert_and_key_give_tls(tls_cert):
    cert, key = tls_cert
    c = new_config()
    SecureServingOptions(bind_port=0, cert_file=str(cert), key_file=str(key)).apply_to(c)
    try:
        assert c.secure_serving.tls_config() is not None
        assert (c.secure_serving.cert_file, c.secure_serving.key_file) == (str(cert), str(key))
    finally:
        c.secure_serving.listener.close()


# -- audit ---------------------------------------------------------------------------------------


def test_audit_is_off_without_a_path():
    o = AuditOptions()
    assert not o.enabled()
    assert AuditOptions(log_format="yaml", log_mode="nope").validate() == []  # only checked when enabled
    c = new_config()
    o.apply_to(c)
    assert c.audit_backend is None and c.audit_policy_rule_evaluator is None


def test_audit_validate_texts():
    assert AuditOptions(log_path="-", log_format="yaml", log_mode="nope").validate() == [
        'invalid audit log mode nope, allowed modes are "batch,blocking,blocking-strict"',
        'invalid audit log format yaml, allowed formats are "legacy,json"',
    ]
    assert AuditOptions(log_path="-", log_mode="batch", log_batch_buffer_size=0).validate() == [
        "invalid audit batch log buffer size 0, must be a positive number"
    ]
    assert AuditOptions(log_path="-", log_mode="batch", log_batch_max_size=0).validate() == [
        "invalid audit batch log max batch size 0, must be a positive number"
    ]
    assert AuditOptions(log_path="-", log_mode="blocking", log_batch_max_size=0).validate() == []


def test_audit_flags():
    o = AuditOptions()
    parse(o, ["--audit-log-path=-", "--audit-log-format=legacy", "--audit-log-mode=batch",
              "--audit-log-batch-buffer-size=5", "--audit-log-batch-max-size=2", "--audit-log-batch-max-wait=1s"])
    assert (o.log_path, o.log_format, o.log_mode) == ("-", "legacy", "batch")
    assert (o.log_batch_buffer_size, o.log_batch_max_size, o.log_batch_max_wait) == (5, 2, 1.0)


def test_audit_to_stdout_blocking(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    c = new_config()
    AuditOptions(log_path="-").apply_to(c)
    assert str(c.audit_backend) == "ignoreErrors<log>"
    assert c.audit_policy_rule_evaluator is not None
    assert c.audit_backend._delegate._out is out  # written where stdout was at setup


def test_audit_to_a_file_creates_it_private(tmp_path):
    path = tmp_path / "logs" / "audit.log"
    c = new_config()
    AuditOptions(log_path=str(path), log_mode="blocking-strict").apply_to(c)
    try:
        assert isinstance(c.audit_backend, LogBackend)
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    finally:
        c.audit_backend.shutdown()


def test_audit_batch_mode_buffers(tmp_path):
    c = new_config()
    AuditOptions(log_path=str(tmp_path / "a.log"), log_mode="batch").apply_to(c)
    assert isinstance(c.audit_backend, BufferedBackend)


def test_audit_log_file_that_cannot_be_made_is_named_as_go_names_it(tmp_path):
    # Go's ensureLogFile: MkdirAll of the folder, then OpenFile; each error a *PathError
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(OptionsError) as err:
        AuditOptions(log_path=str(blocker / "audit.log")).apply_to(new_config())
    assert str(err.value) == f"ensureLogFile: mkdir {blocker}: not a directory"
    with pytest.raises(OptionsError) as err:
        AuditOptions(log_path=str(tmp_path)).apply_to(new_config())  # a folder given as the file
    assert str(err.value) == f"ensureLogFile: open {tmp_path}: is a directory"


# -- authentication ------------------------------------------------------------------------------


def test_authentication_defaults_and_flags():
    o = AuthenticationOptions()
    assert (o.anonymous, o.token_auth_file) == (True, "")
    parse(o, ["--anonymous-auth=false", "--token-auth-file=/t.csv"])
    assert (o.anonymous, o.token_auth_file) == (False, "/t.csv")


def _env(token: str = "") -> dict:
    env = {"REQUEST_METHOD": "GET", "PATH_INFO": "/"}
    if token:
        env["HTTP_AUTHORIZATION"] = "Bearer " + token
    return env


def test_token_file_and_anonymous(tmp_path):
    f = tmp_path / "tokens.csv"
    f.write_text('secret,alice,uid1,"devs"\n')
    c = new_config()
    AuthenticationOptions(token_auth_file=str(f)).apply_to(c)
    resp, ok, err = c.authenticator.authenticate_request(_env("secret"))
    assert ok and err is None and resp.user.name == "alice" and "devs" in resp.user.groups
    resp, ok, err = c.authenticator.authenticate_request(_env())
    assert ok and resp.user.name == ANONYMOUS
    _, ok, err = c.authenticator.authenticate_request(_env("wrong"))
    assert not ok and str(err) == "invalid bearer token"
    assert c.anonymous_auth is True


def test_a_missing_token_file_fails(tmp_path):
    path = tmp_path / "none.csv"
    with pytest.raises(OptionsError) as err:
        AuthenticationOptions(token_auth_file=str(path)).apply_to(new_config())
    assert str(err.value) == f"open {path}: no such file or directory"


def test_no_authentication_at_all_fails():
    with pytest.raises(OptionsError, match="^no authentication method configured$"):
        AuthenticationOptions(anonymous=False).apply_to(new_config())


# -- authorization -------------------------------------------------------------------------------


@pytest.mark.parametrize("modes,errs", [
    (["AlwaysAllow"], []),
    (["AlwaysDeny", "AlwaysAllow"], []),
    ([], ["at least one authorization-mode must be passed"]),
    (["RBAC"], ['authorization-mode "RBAC" is not a valid mode']),
    (["AlwaysAllow", "AlwaysAllow"], ['authorization-mode ["AlwaysAllow" "AlwaysAllow"] has mode specified more than once']),
])
def test_authorization_validate(modes: list[str], errs: list[str]):
    assert AuthorizationOptions(modes=modes).validate() == errs


def test_authorization_flag_and_authorizer():
    o = AuthorizationOptions()
    assert o.modes == ["AlwaysAllow"]
    parse(o, ["--authorization-mode=AlwaysDeny"])
    assert o.modes == ["AlwaysDeny"]
    c = new_config()
    o.apply_to(c)
    assert c.authorizer.authorize(None, authz.AttributesRecord()) == (authz.Decision.NO_OPINION, "Everything is forbidden.", None)
    o.modes = ["AlwaysDeny", "AlwaysAllow"]
    o.apply_to(c)
    decision, _, _ = c.authorizer.authorize(None, authz.AttributesRecord())
    assert decision == authz.Decision.ALLOW  # AlwaysDeny has no opinion, so the next one decides
