"""Port of k8s.io/apiserver/pkg/registry/rest/rest.go (v1.36.0): what a served resource is, as one description.

In Go a resource is served by registering a ``rest.Storage`` under its name in an
``APIGroupInfo``; the installer (endpoints/installer.go) then asks the storage, interface by
interface, what it can do (``Getter``, ``Lister``, ``Creater``, ``Updater``, ``Patcher``,
``GracefulDeleter``, ``CollectionDeleter``, ``Watcher``), which kind it holds (``New()``),
whether it is namespaced (``NamespaceScoped()``), its short names, categories and singular name
(``ShortNamesProvider``, ``CategoriesProvider``, ``SingularNameProvider``), and how it prints
as a table (``TableConvertor``). A subresource (``pods/status``, ``deployments/scale``) is a
resource of its own under its parent's name, as Go registers it (``"pods/status"``), with the
kind it answers (``Scale`` of ``autoscaling/v1``). :class:`Resource` answers all of those questions at once; the
installer, discovery, OpenAPI and the handlers read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Sequence

from genericserver.apimachinery.structs import Struct

# the verbs of a storage that implements every interface, in discovery's order
ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class Resource:
    """One served resource: its group, version, plural name and kind, and what it can do."""

    group: str  # "" for the core group
    version: str
    name: str  # the plural resource name, e.g. "configmaps"; "pods/status" for a subresource
    kind: str
    struct: Struct  # the object's kind (Go's New())
    list_struct: Optional[Struct] = None  # the list's kind (Go's NewList()); None: not listable
    namespaced: bool = True
    singular: str = ""  # SingularNameProvider; defaults to the kind in lower case
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    table: Any = None  # a TableConvertor (registry/rest/table.go); None: the default table
    # a subresource whose kind is of another group version (deployments/scale: autoscaling/v1)
    kind_group_version: str = ""
    # the Warning every request to it is answered with (v1 Endpoints: deprecated since v1.33)
    deprecation: str = ""
    # the fields a fieldSelector may name besides the metadata's, by an object's values of them
    # (the strategy's GetAttrs; the keys are the field label conversion's labels, so an empty
    # object gives them all); None: metadata.name and metadata.namespace only
    field_labels: Optional[Callable[[dict], dict[str, str]]] = None

    @property
    def group_version(self) -> str:
        """``v1`` for the core group, ``apps/v1`` for a named one (``apiVersion``)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def object_group_version(self) -> str:
        """The ``apiVersion`` of the objects this resource reads and writes."""
        return self.kind_group_version or self.group_version

    @property
    def subresource(self) -> str:
        """``status`` for ``pods/status``; empty for a resource itself."""
        return self.name.partition("/")[2]

    @property
    def group_resource(self) -> str:
        """Go's ``GroupResource.String()``: ``configmaps``, ``deployments.apps``."""
        return f"{self.name}.{self.group}" if self.group else self.name

    @property
    def singular_name(self) -> str:
        """The singular name; a subresource has none (discovery lists it empty)."""
        if self.subresource:
            return ""
        return self.singular or self.kind.lower()


@dataclass(frozen=True)
class ResourceStreamer:
    """Go's ``rest.ResourceStreamer``: what a GET answers with a stream instead of an object
    (``pods/log``). ``input_stream(stops)`` gives the body's pieces (None: no content), stopping
    early once one of ``stops`` (the request's end) is set; ``flush`` says each piece goes out
    as it comes."""

    input_stream: Callable[[Sequence[Any]], Optional[Iterable[bytes]]]
    content_type: str = ""
    flush: bool = False
