"""Ports of k8s.io/apiserver/pkg/server/options/{serving,audit}.go and k8s.io/kubernetes/pkg/kubeapiserver/options/{authentication,authorization}.go (v1.36.0).

The authentication and authorization groups follow kube-apiserver's own options
(k8s.io/kubernetes/pkg/kubeapiserver/options, Kubernetes v1.36.0).

The flags a ``genericserver`` command needs besides the run options, each group with
``add_flags(parser)`` (bound to the options object, see :mod:`genericserver.options`),
``validate() -> list[str]`` with Go's texts, and ``apply_to(config)``:

* :class:`SecureServingOptions`: ``--bind-address``, ``--secure-port``, ``--tls-cert-file``,
  ``--tls-private-key-file``. ``apply_to`` binds the listener and reads the certificate.
* :class:`AuditOptions`: ``--audit-log-path`` (``-`` is standard output), ``--audit-log-format``,
  ``--audit-log-mode`` and the batch sizes.
* :class:`AuthenticationOptions`: ``--token-auth-file``, ``--anonymous-auth``.
* :class:`AuthorizationOptions`: ``--authorization-mode`` (``AlwaysAllow``, ``AlwaysDeny``).

Where this differs from Go:

* ``--secure-port 0`` picks a free port (Go: 0 turns HTTPS off; Go's generic default port is
  443, kube-apiserver's 6443). The range error therefore ends in "0 picks a free port" instead of
  "0 for turning off secure port". ``--bind-address`` defaults to 127.0.0.1 (Go: 0.0.0.0), so a
  workshop server is not reachable from the network unless asked. Without a certificate the
  server speaks plain HTTP (Go generates a self-signed one).
* No audit policy file (there is no YAML reader here): with ``--audit-log-path`` every request
  is logged at level Metadata. Go records nothing without ``--audit-policy-file``. No log
  rotation either (Go's ``--audit-log-maxsize`` and friends), and no webhook backend.
* Authorization modes other than AlwaysAllow and AlwaysDeny (RBAC, Node, ABAC, Webhook) are
  refused as not valid: nothing here implements them.

Four Go files in one module: each is one group of flags, and a ``genericserver`` command adds,
validates and applies the groups together.
"""

from __future__ import annotations

import errno
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Optional

from genericserver import authn, authz, patherror
from genericserver.audit import log_backend
from genericserver.audit.buffered import BatchConfig, new_backend as new_buffered_backend
from genericserver.audit.policy import default_policy, new_policy_rule_evaluator
from genericserver.net.http.server import BindError, listen, ssl_context_from_files
from genericserver.options import add_bound_flag, go_quote
from genericserver.secure_serving import SecureServingInfo


class OptionsError(Exception):
    """An ``ApplyTo`` failure; the message is Go's text."""


def _join_host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


# -- serving -------------------------------------------------------------------------------------


@dataclass
class SecureServingOptions:
    bind_address: str = "127.0.0.1"
    bind_port: int = 6443
    cert_file: str = ""
    key_file: str = ""
    # kube-apiserver leaves it 0, which secure_serving.go makes 100 (recorded: tests/parity/go-h2kube.json);
    # RecommendedOptions' 1000 is for a generic apiserver behind the aggregator's multiplexing proxy
    http2_max_streams_per_connection: int = 0
    disable_http2_serving: bool = False

    def validate(self) -> list[str]:
        if self.bind_port < 0 or self.bind_port > 65535:
            return [f"--secure-port {self.bind_port} must be between 0 and 65535, inclusive. 0 picks a free port"]
        return []

    def add_flags(self, parser: Any) -> None:
        add = lambda fld, name, kind, text: add_bound_flag(parser, self, fld, name, kind, text)  # noqa: E731
        add("bind_address", "bind-address", "string",
            "The IP address to listen on for --secure-port. 0.0.0.0 (or ::) listens on every "
            "interface.")
        add("bind_port", "secure-port", "int",
            "The port to serve on (HTTPS when a certificate is given, plain HTTP otherwise). "
            "0 picks a free port.")
        add("cert_file", "tls-cert-file", "string",
            "File with the x509 certificate for HTTPS (any CA certificate concatenated after the "
            "server's). Without it and --tls-private-key-file the server speaks plain HTTP.")
        add("key_file", "tls-private-key-file", "string",
            "File with the x509 private key matching --tls-cert-file.")
        add("http2_max_streams_per_connection", "http2-max-streams-per-connection", "int",
            "The most streams the server lets each HTTP/2 client open at once. Zero means 100, "
            "the number Go's HTTP/2 clients start with.")
        add("disable_http2_serving", "disable-http2-serving", "bool",
            "If true, HTTP/2 serving will be disabled: TLS clients get HTTP/1.1 only.")

    def apply_to(self, c: Any) -> None:
        """Bind the listener (updating ``bind_port`` when it was 0) and set ``c.secure_serving``."""
        addr = _join_host_port(self.bind_address, self.bind_port)
        try:
            ln = listen(self.bind_address, self.bind_port)
        except BindError as err:
            raise OptionsError(f"failed to create listener: failed to listen on {addr}: {err}") from err
        self.bind_port = ln.getsockname()[1]
        info = SecureServingInfo(listener=ln, disable_http2=self.disable_http2_serving,
                                 http2_max_streams_per_connection=self.http2_max_streams_per_connection)
        try:
            if self.cert_file or self.key_file:
                if not self.cert_file or not self.key_file:
                    raise OptionsError("missing filename for serving cert")
                try:
                    info.ssl_context = ssl_context_from_files(self.cert_file, self.key_file)
                except (OSError, ValueError) as err:
                    raise OptionsError(f"failed to load serving cert/key {self.cert_file}/{self.key_file}: {err}") from err
                info.cert_file, info.key_file = self.cert_file, self.key_file
        except BaseException:
            ln.close()
            raise
        c.secure_serving = info


# -- audit ---------------------------------------------------------------------------------------

MODE_BATCH = "batch"
MODE_BLOCKING = "blocking"
MODE_BLOCKING_STRICT = "blocking-strict"
ALLOWED_MODES = (MODE_BATCH, MODE_BLOCKING, MODE_BLOCKING_STRICT)
DEFAULT_BATCH_BUFFER_SIZE = 10000


class _IgnoreErrorsBackend:
    """Blocking mode: write each event before answering, but never fail a request over it."""

    def __init__(self, delegate: Any):
        self._delegate = delegate

    def process_events(self, *events: Any) -> bool:
        self._delegate.process_events(*events)
        return True

    def run(self, stop: Any) -> None:
        self._delegate.run(stop)

    def shutdown(self) -> None:
        self._delegate.shutdown()

    def name(self) -> str:
        return f"ignoreErrors<{self._delegate}>"

    __str__ = name


@dataclass
class AuditOptions:
    log_path: str = ""
    log_format: str = log_backend.FORMAT_JSON
    log_mode: str = MODE_BLOCKING
    # batching is of no use to a log file, so one event a batch (Go's choice too)
    log_batch_buffer_size: int = DEFAULT_BATCH_BUFFER_SIZE
    log_batch_max_size: int = 1
    log_batch_max_wait: float = 0.0

    def enabled(self) -> bool:
        return self.log_path != ""

    def validate(self) -> list[str]:
        if not self.enabled():
            return []
        errs: list[str] = []
        if self.log_mode not in ALLOWED_MODES:
            errs.append(f"invalid audit log mode {self.log_mode}, allowed modes are {go_quote(','.join(ALLOWED_MODES))}")
        elif self.log_mode == MODE_BATCH:
            if self.log_batch_buffer_size <= 0:
                errs.append(f"invalid audit batch log buffer size {self.log_batch_buffer_size}, must be a positive number")
            elif self.log_batch_max_size <= 0:
                errs.append(f"invalid audit batch log max batch size {self.log_batch_max_size}, must be a positive number")
        if self.log_format not in log_backend.ALLOWED_FORMATS:
            allowed = ",".join(log_backend.ALLOWED_FORMATS)
            errs.append(f"invalid audit log format {self.log_format}, allowed formats are {go_quote(allowed)}")
        return errs

    def add_flags(self, parser: Any) -> None:
        add = lambda fld, name, kind, text: add_bound_flag(parser, self, fld, name, kind, text)  # noqa: E731
        add("log_path", "audit-log-path", "string",
            "If set, every request reaching the server is logged to this file; '-' means standard "
            "out. (There is no policy file here: each request is logged at level Metadata.)")
        add("log_format", "audit-log-format", "string",
            "Format of the audit log: \"legacy\" writes one line of text per event, \"json\" one "
            "line of JSON. Known formats are " + ",".join(log_backend.ALLOWED_FORMATS) + ".")
        add("log_mode", "audit-log-mode", "string",
            "How events are sent: blocking makes each response wait for its events to be written; "
            "batch buffers them and writes them asynchronously. Known modes are "
            + ",".join(ALLOWED_MODES) + ".")
        add("log_batch_buffer_size", "audit-log-batch-buffer-size", "int",
            "How many events are buffered before batching and writing. Only used in batch mode.")
        add("log_batch_max_size", "audit-log-batch-max-size", "int",
            "The largest batch. Only used in batch mode.")
        add("log_batch_max_wait", "audit-log-batch-max-wait", "duration",
            "How long to wait before writing a batch that is not full. Only used in batch mode.")

    def _writer(self) -> Any:
        if self.log_path == "-":
            return log_backend.LogBackend(sys.stdout, self.log_format)
        # as Go's ensureLogFile: the directory private to us, the file too; each error the
        # *PathError Go's MkdirAll or OpenFile returns
        directory = os.path.dirname(self.log_path) or "."
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
        except FileExistsError:  # there, and not a directory: MkdirAll's ENOTDIR
            raise OptionsError(f"ensureLogFile: {patherror.text('mkdir', directory, errno.ENOTDIR)}") from None
        except OSError as err:
            raise OptionsError(f"ensureLogFile: {patherror.text('mkdir', err.filename or directory, err)}") from None
        try:
            os.close(os.open(self.log_path, os.O_CREAT | os.O_APPEND | os.O_RDWR, 0o600))
        except OSError as err:
            raise OptionsError(f"ensureLogFile: {patherror.text('open', self.log_path, err)}") from None
        return log_backend.new_file_backend(self.log_path, self.log_format)

    def apply_to(self, c: Any) -> None:
        """Set ``c.audit_backend`` and ``c.audit_policy_rule_evaluator`` when a log path is set."""
        if not self.enabled():
            return
        backend: Any = self._writer()
        # the backends count what they fail to write in the server's apiserver_audit_error_total
        backend.metrics = c.audit_metrics
        if self.log_mode == MODE_BLOCKING:
            backend = _IgnoreErrorsBackend(backend)
        elif self.log_mode == MODE_BATCH:
            backend = new_buffered_backend(backend, BatchConfig(
                buffer_size=self.log_batch_buffer_size,
                max_batch_size=self.log_batch_max_size,
                max_batch_wait=self.log_batch_max_wait,
            ))
            backend.metrics = c.audit_metrics
        c.audit_policy_rule_evaluator = new_policy_rule_evaluator(default_policy())
        c.audit_backend = backend


# -- authentication and authorization ------------------------------------------------------------


@dataclass
class AuthenticationOptions:
    anonymous: bool = True
    token_auth_file: str = ""

    def validate(self) -> list[str]:
        return []

    def add_flags(self, parser: Any) -> None:
        add = lambda fld, name, kind, text: add_bound_flag(parser, self, fld, name, kind, text)  # noqa: E731
        add("anonymous", "anonymous-auth", "bool",
            "Let in anonymous requests: a request no other authentication method rejects is "
            "served as user system:anonymous in group system:unauthenticated.")
        add("token_auth_file", "token-auth-file", "string",
            "If set, a CSV file of bearer tokens (token,user,uid[,\"group1,group2\"]) that "
            "authenticate requests to the secure port.")

    def apply_to(self, c: Any) -> None:
        """Set ``c.authenticator`` (and ``c.anonymous_auth``); a bad token file raises."""
        token_auth = None
        if self.token_auth_file:
            token_auth, err = authn.new_csv(self.token_auth_file)
            if err is not None:
                raise OptionsError(str(err))
        auth, err = authn.new_request_authenticator(token_auth, self.anonymous)
        if err is not None:
            raise OptionsError(str(err))
        c.authenticator = auth
        c.anonymous_auth = self.anonymous


MODE_ALWAYS_ALLOW = "AlwaysAllow"
MODE_ALWAYS_DENY = "AlwaysDeny"
AUTHORIZATION_MODE_CHOICES = (MODE_ALWAYS_ALLOW, MODE_ALWAYS_DENY)


@dataclass
class AuthorizationOptions:
    modes: list[str] = field(default_factory=lambda: [MODE_ALWAYS_ALLOW])

    def validate(self) -> list[str]:
        errs: list[str] = []
        if not self.modes:
            errs.append("at least one authorization-mode must be passed")
        for mode in self.modes:
            if mode not in AUTHORIZATION_MODE_CHOICES:
                errs.append(f"authorization-mode {go_quote(mode)} is not a valid mode")
        if len(set(self.modes)) != len(self.modes):
            # Go prints the list with %q: ["AlwaysAllow" "AlwaysAllow"]
            shown = "[" + " ".join(go_quote(m) for m in self.modes) + "]"
            errs.append(f"authorization-mode {shown} has mode specified more than once")
        return errs

    def add_flags(self, parser: Any) -> None:
        add_bound_flag(parser, self, "modes", "authorization-mode", "strings",
                       "Ordered list of authorizers for the secure port, comma separated: "
                       + ",".join(AUTHORIZATION_MODE_CHOICES) + ".")

    def authorizer(self) -> Optional[Any]:
        """The modes' authorizers in order (the first to allow or deny decides)."""
        by_mode = {MODE_ALWAYS_ALLOW: authz.new_always_allow_authorizer, MODE_ALWAYS_DENY: authz.new_always_deny_authorizer}
        parts = [by_mode[m]() for m in self.modes if m in by_mode]
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else authz.union(*parts)

    def apply_to(self, c: Any) -> None:
        c.authorizer = self.authorizer()
