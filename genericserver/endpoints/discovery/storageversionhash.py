"""Port of k8s.io/apiserver/pkg/endpoints/discovery/storageversionhash.go (v1.36.0).

The ``storageVersionHash`` of an ``APIResource``: the first 8 bytes of the SHA-256 of
``group/version/kind``, base64; clients compare it to notice a storage version change.
"""

from __future__ import annotations

import base64
import hashlib


def storage_version_hash(group: str, version: str, kind: str) -> str:
    return base64.b64encode(hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()[:8]).decode()
