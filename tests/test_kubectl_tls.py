"""kubectl v1.36 over TLS with a bearer token, against ``genericserver serve --token-auth-file``."""

from __future__ import annotations

import pytest

from kubectl import Kubectl
from serverprocess import ServerProcess


@pytest.fixture(scope="module")
def server(tls_cert, tmp_path_factory):
    cert, key = tls_cert
    tokens = tmp_path_factory.mktemp("tokens") / "tokens.csv"
    tokens.write_text('secret-token,alice,uid-alice,"dev,ops"\n')
    sp = ServerProcess("--tls-cert-file", cert, "--tls-private-key-file", key, "--token-auth-file", str(tokens))
    yield sp
    sp.kill()


def kubectl_with(server, tls_cert, tmp_path, token: str) -> Kubectl:
    return Kubectl(str(tmp_path), server.port, ca_file=tls_cert[0], token=token)


def test_whoami_names_the_token_user(server, tls_cert, tmp_path):
    out = kubectl_with(server, tls_cert, tmp_path, "secret-token").run("auth", "whoami").stdout
    rows = [line.split(None, 1) for line in out.splitlines()]
    assert rows[0] == ["ATTRIBUTE", "VALUE"]
    assert ["Username", "alice"] in rows
    assert ["UID", "uid-alice"] in rows
    assert ["Groups", "[dev ops system:authenticated]"] in rows


def test_crud_over_tls(server, tls_cert, tmp_path):
    k = kubectl_with(server, tls_cert, tmp_path, "secret-token")
    assert k.run("create", "configmap", "tls-a", "--from-literal=x=1").stdout == "configmap/tls-a created\n"
    assert k.run("get", "cm", "tls-a", "-o", "jsonpath={.data.x}").stdout == "1"
    assert k.run("delete", "cm", "tls-a").stdout == 'configmap "tls-a" deleted from default namespace\n'


def test_a_wrong_token_is_401(server, tls_cert, tmp_path):
    proc = kubectl_with(server, tls_cert, tmp_path, "wrong").run("get", "cm", check=False)
    assert proc.returncode == 1
    # discovery fails first, as against kube-apiserver: kubectl's words for a 401 there
    assert proc.stderr.splitlines()[-1] == ("error: You must be logged in to the server "
                                            "(the server has asked for the client to provide credentials)")
