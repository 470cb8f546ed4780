"""Port of k8s.io/apiserver/pkg/endpoints/discovery/aggregated/negotiation.go (v1.36.0): what /api and /apis may be transformed into.

Content negotiation normally refuses a request that asks for another kind than the object's
(``as=...;g=...;v=...``). The aggregated discovery endpoints allow one: the
``APIGroupDiscoveryList`` of ``apidiscovery.k8s.io/v2``. The v2beta1 type is removed in v1.36
(the ``AggregatedDiscoveryRemoveBetaType`` feature is on), so only v2 passes.
"""

from __future__ import annotations

from typing import Any

AGGREGATED_GVK = ("apidiscovery.k8s.io", "v2", "APIGroupDiscoveryList")


def is_aggregated_discovery_gvk(gvk: Any) -> bool:
    """``IsAggregatedDiscoveryGVK``: the kind asked for is the aggregated document's."""
    return gvk is not None and (gvk.group, gvk.version, gvk.kind) == AGGREGATED_GVK


class DiscoveryEndpointRestrictions:
    """``DiscoveryEndpointRestrictions``: only the aggregated document's kind, no server version."""

    def allows_media_type_transform(self, mime_type: str, mime_subtype: str, gvk: Any) -> bool:
        return is_aggregated_discovery_gvk(gvk)

    def allows_server_version(self, version: str) -> bool:
        return False

    def allows_stream_schema(self, schema: str) -> bool:
        return schema == "watch"


DISCOVERY_RESTRICTIONS = DiscoveryEndpointRestrictions()
