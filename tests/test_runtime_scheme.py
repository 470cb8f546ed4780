"""A scheme's name and its not-registered error (apimachinery/runtime/scheme.py, apimachinery/from_stack.py)."""

from __future__ import annotations

from genericserver.apimachinery import from_stack
from genericserver.apimachinery.runtime import scheme

SCHEME_GO = "k8s.io/apimachinery/pkg/runtime/scheme.go"


def test_a_scheme_is_named_after_the_first_frame_outside_scheme_go():
    # from_stack.go:30-50: frames in an ignored file are skipped, the file trimmed to its package path
    built_in_the_kubernetes_repo = [("k8s.io/apimachinery/pkg/runtime/scheme.go", 111),
                                    ("k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go", 30)]
    assert from_stack.get_name_from_callsite(built_in_the_kubernetes_repo, SCHEME_GO) == "pkg/api/legacyscheme/scheme.go:30"


def test_the_reference_builds_module_paths_escape_the_skip_so_every_scheme_is_named_after_new_scheme():
    # kube-apiserver built with -trimpath from the module cache: the file is ...@v0.36.0/pkg/..., which
    # does not contain the ignored path, so NewScheme's own line (scheme.go:111) names the scheme, as
    # kube-apiserver's answers in tests/parity/go-api.json say
    assert scheme.LEGACY_SCHEME_NAME == "pkg/runtime/scheme.go:111"
    assert scheme.META_INTERNAL_VERSION_SCHEME_NAME == "pkg/runtime/scheme.go:111"


def test_trim_package_prefix():
    assert from_stack.trim_package_prefix("/home/x/go/src/k8s.io/kubernetes/pkg/a.go") == "k8s.io/kubernetes/pkg/a.go"
    assert from_stack.trim_package_prefix("/k/vendor/k8s.io/client-go/tools/cache/reflector.go") == "k8s.io/client-go/tools/cache/reflector.go"
    assert from_stack.trim_package_prefix("k8s.io/apimachinery@v0.36.0/pkg/runtime/scheme.go") == "pkg/runtime/scheme.go"
    assert from_stack.trim_package_prefix("main.go") == "main.go"


def test_no_frame_outside_the_ignored_files_is_unnamed():
    assert from_stack.get_name_from_callsite([(SCHEME_GO, 1)], SCHEME_GO) == "????"
    assert from_stack.get_name_from_callsite([], SCHEME_GO) == "????"


def test_not_registered_texts_are_error_gos():
    # error.go:61-68
    assert str(scheme.NotRegisteredErr("s", "ConfigMap", "apps/v1")) == 'no kind "ConfigMap" is registered for version "apps/v1" in scheme "s"'
    assert str(scheme.NotRegisteredErr("s", "", "v2")) == 'no version "v2" has been registered in scheme "s"'
    assert str(scheme.NotRegisteredErr("s", "Pod", "apps/__internal")) == (
        'no kind "Pod" is registered for the internal version of group "apps" in scheme "s"')
