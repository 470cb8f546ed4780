"""k8s.io/apiserver/pkg/endpoints (package): the REST API's routes, handlers, discovery and filters.

Laid out as Go's folder is: ``installer.py`` is ``installer.go``, and ``filters/``,
``handlers/`` and ``discovery/`` are the packages of the same names below it.
"""
