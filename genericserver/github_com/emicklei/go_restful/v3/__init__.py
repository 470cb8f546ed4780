"""github.com/emicklei/go-restful/v3 (package): the REST router kube-apiserver's API routes are served by.

Only what k8s.io/apiserver uses to choose a route is ported: a :class:`~.container.Container` of
:class:`~.web_service.WebService` s, each a root path and its :class:`~.route.Route` s, chosen by
the :class:`~.curly.CurlyRouter` (the path, then :func:`~.jsr311.detect_route`: the method, the
Content-Type, the Accept), which refuses with a :class:`~.service_error.ServiceError` before a
route's function runs. Documentation, filters, compression and custom verbs are left out.
"""
