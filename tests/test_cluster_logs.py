"""Containers' logs (genericserver.cluster.logs) and the pods/log options (genericserver.registry.core.rest_log)."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest
from werkzeug.datastructures import MultiDict

from genericserver import klog
from genericserver import runtime as rt
from genericserver.apimachinery.api.errors import StatusError
from genericserver.cluster.logs import ContainerLog, capture, writing_to
from genericserver.registry.core.rest_log import container_for, new_log_getter

WAIT = 10.0


def query(args=None) -> SimpleNamespace:
    """A request's query, all the getter reads of it."""
    return SimpleNamespace(args=MultiDict(args or {}))


def written(*lines: str) -> ContainerLog:
    log = ContainerLog()
    for line in lines:
        log.write(line)
    return log


def text(pieces) -> str:
    return b"".join(pieces).decode()


def test_a_log_reads_whole_or_its_last_lines_and_a_record_of_two_lines_is_two():
    log = written("one", "two\n  detail", "three")
    assert text(log.read()) == "one\ntwo\n  detail\nthree\n"
    assert text(log.read(tail=2)) == "  detail\nthree\n"
    assert text(log.read(tail=0)) == ""
    assert text(log.read(since=log.lines[-1][0] + 1)) == ""
    stamped = text(log.read(tail=1, timestamps=True))
    assert stamped.endswith("Z three\n") and stamped[4] == "-" and stamped[10] == "T" and len(stamped.split()[0]) == 30


def test_following_ends_when_the_container_exits_or_the_request_does():
    log = written("started")
    followed: list[str] = []
    done = rt.event("follower-done")

    def follow() -> None:
        for piece in log.read(follow=True):
            followed.append(piece.decode())
        done.set()

    rt.go(follow, name="follower")
    log.write("ShutdownInitiated")
    log.close()
    assert done.wait(WAIT)
    assert "".join(followed) == "started\nShutdownInitiated\n"
    log.write("after the exit")  # nothing is kept once the container is gone
    assert text(log.read()) == "started\nShutdownInitiated\n"
    # a follower whose request ended stops though the container runs on
    running, gone = written("up"), rt.event("request-done")
    gone.set()
    assert text(running.read(follow=True, stops=[gone])) == "up\n"


def test_klog_lines_go_to_the_log_of_the_container_whose_goroutine_printed_them(caplog):
    a, b = ContainerLog(), ContainerLog()
    ended = [rt.event("a"), rt.event("b")]

    def replica(i: int, name: str) -> None:
        # a goroutine of the replica's, started by another: the container is inherited
        rt.go(lambda: (klog.v(1).info_s("[graceful-termination] shutdown event", name=name), ended[i].set()),
              name=f"replica-{i}-shutdown")

    # (klog logs on its caller's module's logger: this module's here, genericserver's in a replica)
    with capture(__name__), klog.with_verbosity(1), caplog.at_level(logging.INFO):
        with writing_to(a):
            rt.go(replica, 0, "ShutdownInitiated", name="replica-0")
        with writing_to(b):
            rt.go(replica, 1, "AfterShutdownDelayDuration", name="replica-1")
        assert rt.select(ended[0]) and rt.select(ended[1])
        klog.info("the cluster's own line")  # not a container's: dropped below errors
    assert text(a.read()).endswith('] "[graceful-termination] shutdown event" name="ShutdownInitiated"\n')
    assert text(b.read()).endswith('] "[graceful-termination] shutdown event" name="AfterShutdownDelayDuration"\n')
    assert len(a.lines) == len(b.lines) == 1
    assert "the cluster's own line" not in caplog.text
    # and what a replica's runner set is put back with the rest
    with capture(__name__):
        klog.set_verbosity(2)
    assert klog.verbosity() == 0


POD = {"metadata": {"name": "web-0"}, "spec": {"nodeName": "node-1", "containers": [{"name": "app"}]}}
TWO = {"metadata": {"name": "web-1"}, "spec": {"nodeName": "node-1", "containers": [{"name": "envoy"}, {"name": "shutdown-manager"}]}}


def status_of(fn, *args) -> tuple[int, str]:
    with pytest.raises(StatusError) as err:
        fn(*args)
    return err.value.status["code"], err.value.status["message"]


def test_log_location_chooses_the_container_as_go_does():
    assert container_for(POD, "") == "app"
    assert container_for(TWO, "envoy") == "envoy"
    assert status_of(container_for, TWO, "") == (400, "a container name must be specified for pod web-1, choose one of: [envoy shutdown-manager]")
    assert status_of(container_for, POD, "nope") == (400, "container nope is not valid for pod web-0")


def test_pod_log_options_are_validated_and_a_pod_on_no_node_answers_nothing():
    log = written("a", "b", "c")
    get = new_log_getter(lambda ns, name: {"metadata": POD["metadata"], "spec": dict(POD["spec"], nodeName="")} if name == "pending"
                         else POD, lambda ns, pod, c, previous: log)
    assert status_of(get, "default", "web-0", query({"tailLines": "-3"})) == (
        422, 'PodLogOptions "web-0" is invalid: tailLines: Invalid value: -3: must be greater than or equal to 0')
    # an error of no field: its empty path printed as Go's field.Error prints it
    assert status_of(get, "default", "web-0", query({"sinceSeconds": "5", "sinceTime": "2026-01-01T00:00:00Z"})) == (
        422, 'PodLogOptions "web-0" is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified')
    with pytest.raises(StatusError) as err:  # and the cause leaves its empty field out, as omitempty does
        get("default", "web-0", query({"sinceSeconds": "5", "sinceTime": "2026-01-01T00:00:00Z"}))
    assert err.value.status["details"]["causes"] == [
        {"reason": "FieldValueForbidden", "message": "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"}]
    assert status_of(get, "default", "web-0", query({"limitBytes": "0"}))[0] == 422
    streamer = get("default", "web-0", query({"tailLines": "2", "limitBytes": "3"}))
    assert streamer.content_type == "text/plain" and text(streamer.input_stream([])) == "b\nc"
    assert get("default", "pending", query()).input_stream([]) is None  # a 204


def test_a_log_is_long_running_for_the_cluster_as_for_kube_apiserver_and_a_status_is_not():
    from genericserver.cluster.apiserver import kube_apiserver_config
    from genericserver.config import new_config
    from genericserver.requestinfo import RequestInfo

    generic, kube = new_config(), new_config()
    kube_apiserver_config(kube)

    def request(subresource: str) -> RequestInfo:
        return RequestInfo(is_resource_request=True, verb="get", resource="pods", subresource=subresource, name="web-0")

    assert kube.long_running_func({}, request("log")) and not generic.long_running_func({}, request("log"))
    assert not kube.long_running_func({}, request("status"))
