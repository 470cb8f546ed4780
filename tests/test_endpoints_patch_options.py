"""PatchOptions validated as Go's ValidatePatchOptions does: every fault at once, `force` first.

Found by the differential fuzzer (tests/parity/fuzz-findings.md): a merge patch with `force=true` and a
bad `dryRun` got only the `force` error here, where kube-apiserver v1.36.0 lists both.
"""

from __future__ import annotations

import json

from werkzeug.test import Client

from genericserver import sampleapi
from genericserver.mux import PathRecorderMux

NS = "/api/v1/namespaces/ns/configmaps"


def test_force_on_a_merge_patch_is_reported_with_the_other_faults_of_the_options():
    mux = PathRecorderMux("test")
    sampleapi.install(mux)
    c = Client(mux)
    assert c.post(NS, json={"metadata": {"name": "a"}}).status_code == 201
    r = c.patch(NS + "/a?dryRun=Sometimes&force=true&fieldValidation=Loud", data="{}", content_type="application/merge-patch+json")
    assert r.status_code == 422
    status = json.loads(r.data)
    assert [c["field"] for c in status["details"]["causes"]] == ["force", "dryRun", "fieldValidation"]
    assert status["message"].startswith('PatchOptions.meta.k8s.io "" is invalid: [force: Forbidden: may not be specified '
                                        'for non-apply patch, dryRun: Unsupported value: ["Sometimes"]: supported values: "All", '
                                        "fieldValidation: Unsupported value:")
