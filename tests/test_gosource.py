"""Tests for genericserver.labs.gosource: ``make go-source`` copies the Go files the route links to (no Go twin)."""

from __future__ import annotations

import pathlib

from genericserver.labs import LABS, lab
from genericserver.labs.cli import describe
from genericserver.labs.gosource import FOLDER, copy, linked_paths, module_file, offline


def test_a_kubernetes_link_has_its_offline_copy_at_the_path_and_line_it_names():
    url = "https://github.com/kubernetes/kubernetes/blob/v1.36.0/staging/src/k8s.io/apiserver/pkg/server/genericapiserver.go#L569-L582"
    assert offline(url) == "go-source/staging/src/k8s.io/apiserver/pkg/server/genericapiserver.go:569"
    assert offline("https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/registry/core/pod/strategy.go") == \
        "go-source/pkg/registry/core/pod/strategy.go"
    assert offline("https://github.com/projectcontour/contour/pull/3136/files") is None


def test_each_path_is_found_in_its_module_in_the_cache():
    cache = pathlib.Path("/cache")
    assert module_file("staging/src/k8s.io/apiserver/pkg/server/genericapiserver.go", cache) == \
        cache / "k8s.io/apiserver@v0.36.0/pkg/server/genericapiserver.go"
    assert module_file("staging/src/k8s.io/kubectl/pkg/cmd/delete/delete.go", cache) == \
        cache / "k8s.io/kubectl@v0.36.0/pkg/cmd/delete/delete.go"
    assert module_file("pkg/kubelet/kuberuntime/kuberuntime_container.go", cache) == \
        cache / "k8s.io/kubernetes@v1.36.0/pkg/kubelet/kuberuntime/kuberuntime_container.go"


def test_the_copy_takes_every_file_the_workshop_and_the_labs_link_to_and_names_those_it_lacks(tmp_path):
    paths = linked_paths()
    assert "staging/src/k8s.io/apiserver/pkg/server/genericapiserver.go" in paths
    assert all(offline(the_lab.go_url) is None or offline(the_lab.go_url).split(":")[0][len(FOLDER) + 1:] in paths
               for the_lab in LABS)
    cache = tmp_path / "mod"
    for path in paths[1:]:  # the first is left out
        module_file(path, cache).parent.mkdir(parents=True, exist_ok=True)
        module_file(path, cache).write_text(f"// {path}\n")
    assert copy(tmp_path / FOLDER, cache) == paths[:1]
    assert all((tmp_path / FOLDER / path).read_text() == f"// {path}\n" for path in paths[1:])


def test_lab_show_prints_the_offline_copy_beside_the_link():
    shown = " ".join(describe(lab("no-shutdown-delay")).split())
    assert (f"{lab('no-shutdown-delay').go_url} offline: go-source/staging/src/k8s.io/apiserver/pkg/server/"
            "genericapiserver.go:569 (make go-source, in the clone)") in shown
    assert "offline:" not in describe(lab("contour-healthcheck-fail-no-retry"))
