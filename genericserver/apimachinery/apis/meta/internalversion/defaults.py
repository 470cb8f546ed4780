"""Port of k8s.io/apimachinery/pkg/apis/meta/internalversion/defaults.go (v1.36.0): ``SetListOptionsDefaults``.

With the WatchList feature on (v1.36's default), a watch that names no ``resourceVersion`` or
``0``, and neither ``sendInitialEvents`` nor ``resourceVersionMatch``, is a watch-list: it asks
for the current state as ADDED events and, with ``allowWatchBookmarks``, the bookmark that marks
their end (``k8s.io/initial-events-end``), as a client that asked for them would. get.go's
``listOpts`` applies it after decoding, before the options are checked.
"""

from __future__ import annotations

from genericserver.apimachinery.apis.meta.internalversion.validation import NOT_OLDER_THAN


def set_list_options_defaults(opts, watch_list_enabled: bool = True) -> None:
    """Default ``opts`` (get.py's ``ListOptions``) in place."""
    if not watch_list_enabled:
        return
    if opts.send_initial_events is not None or opts.resource_version_match:
        return
    if opts.watch and opts.resource_version in ("", "0"):
        opts.send_initial_events = True
        opts.resource_version_match = NOT_OLDER_THAN
