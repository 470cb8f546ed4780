"""Port of k8s.io/apimachinery/pkg/apis/meta/v1/types.go (v1.36.0): the shared meta types, as data.

ObjectMeta, ListMeta, Status and the other types every kind embeds or answers with, written out
as :class:`~genericserver.apimachinery.structs.Struct` s (field numbers from the package's
generated.proto). The descriptions are ours, short; they are what ``kubectl explain`` prints.
Left out: the types no handler here reads or writes (``Patch``,
``GetOptions``'s deprecated fields).
"""

from __future__ import annotations

from genericserver.apimachinery.structs import Field, ListOf, MapOf, Struct, register

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
PROTO = "k8s.io.apimachinery.pkg.apis.meta.v1."
RUNTIME = "k8s.io.apimachinery.pkg.runtime."


def _s(name: str, doc: str, *fields: Field, **kw) -> Struct:
    return Struct(META + name, PROTO + name, doc, tuple(fields), **kw)


TIME = _s("Time", "A point in time, to the second, written as an RFC 3339 string.",
          Field("seconds", 1, "int64"), Field("nanos", 2, "int32"),
          json_form={"type": "string", "format": "date-time"})
MICRO_TIME = _s("MicroTime", "A point in time, to the microsecond, written as an RFC 3339 string.",
                Field("seconds", 1, "int64"), Field("nanos", 2, "int32"),
                json_form={"type": "string", "format": "date-time"})
FIELDS_V1 = _s("FieldsV1", "The set of fields a manager owns, in the FieldsV1 trie format.",
               Field("Raw", 1, "bytes"), json_form={"type": "object"})
RAW_EXTENSION = Struct("io.k8s.apimachinery.pkg.runtime.RawExtension", RUNTIME + "RawExtension",
                       "An object of any kind, carried as it was encoded.", (Field("raw", 1, "bytes"),),
                       json_form={"type": "object"})

OWNER_REFERENCE = _s(
    "OwnerReference", "Names an object this one belongs to; the garbage collector removes it once its owners are gone.",
    Field("apiVersion", 5, "string", "The owner's API version.", required=True),
    Field("kind", 1, "string", "The owner's kind.", required=True),
    Field("name", 3, "string", "The owner's name.", required=True),
    Field("uid", 4, "string", "The owner's UID.", required=True),
    Field("controller", 6, "bool", "True for the one owner that manages this object.", pointer=True),
    Field("blockOwnerDeletion", 7, "bool", "True keeps the owner from being deleted in the foreground before this object is.", pointer=True),
)

MANAGED_FIELDS_ENTRY = _s(
    "ManagedFieldsEntry", "Which fields one manager set, by which operation, at which version.",
    Field("manager", 1, "string", "The manager's name."),
    Field("operation", 2, "string", "Apply or Update."),
    Field("apiVersion", 3, "string", "The version of the object the fields are named in."),
    Field("time", 4, TIME, "When the manager last changed a field it owns.", pointer=True),
    Field("fieldsType", 6, "string", "The format of fieldsV1: only \"FieldsV1\"."),
    Field("fieldsV1", 7, FIELDS_V1, "The fields, as a trie.", pointer=True),
    Field("subresource", 8, "string", "The subresource the change came through, if any."),
)

OBJECT_META = _s(
    "ObjectMeta", "The metadata every persisted object has: its name, namespace, identity, version and labels.",
    Field("name", 1, "string", "Unique within a namespace; required when creating, unless generateName is set. Cannot be changed."),
    Field("generateName", 2, "string", "A prefix the server completes into a unique name when no name is given."),
    Field("namespace", 3, "string", "The namespace the object lives in; empty for cluster-scoped objects."),
    Field("selfLink", 4, "string", "Deprecated: always empty."),
    Field("uid", 5, "string", "The object's identity, set by the server when it is created; never reused."),
    Field("resourceVersion", 6, "string", "An opaque version the server bumps on every change; used for optimistic concurrency and watches."),
    Field("generation", 7, "int64", "A number the server bumps when the desired state (the spec) changes."),
    Field("creationTimestamp", 8, TIME, "When the server created the object. Read-only."),
    Field("deletionTimestamp", 9, TIME, "When the object will be deleted; set by a graceful delete. The object shows as Terminating until it is gone.", pointer=True),
    Field("deletionGracePeriodSeconds", 10, "int64", "The grace period of the pending deletion, in seconds.", pointer=True),
    Field("labels", 11, MapOf("string"), "Keys and values to organise and select objects by."),
    Field("annotations", 12, MapOf("string"), "Keys and values tools keep on the object; not for selecting."),
    Field("ownerReferences", 13, ListOf(OWNER_REFERENCE), "The objects this one depends on.",
          patch_strategy="merge", patch_merge_key="uid", list_type="map", list_map_keys=("uid",)),
    Field("finalizers", 14, ListOf("string"), "Names that must all be removed before the object is deleted from storage.",
          patch_strategy="merge", list_type="set"),
    Field("managedFields", 17, ListOf(MANAGED_FIELDS_ENTRY), "Which manager set which field; kept by the server.",
          list_type="atomic"),
)

LIST_META = _s(
    "ListMeta", "The metadata of a list: its resource version and the token to fetch the rest.",
    Field("selfLink", 1, "string", "Deprecated: always empty."),
    Field("resourceVersion", 2, "string", "The version of the store the list was read at; a watch may start from it."),
    Field("continue", 3, "string", "Set when the list was cut at the requested limit: pass it back to get the rest."),
    Field("remainingItemCount", 4, "int64", "How many items are left after this page, when the server knows.", pointer=True),
)

STATUS_CAUSE = _s(
    "StatusCause", "One cause of an error, often a field that failed validation.",
    Field("reason", 1, "string", "A machine-readable description of the cause."),
    Field("message", 2, "string", "A human-readable description of the cause."),
    Field("field", 3, "string", "The field that caused the error, as a JSON path."),
)

STATUS_DETAILS = _s(
    "StatusDetails", "What a Status is about: the object's name, group, kind and uid, and the causes.",
    Field("name", 1, "string", "The name of the object the status is about."),
    Field("group", 2, "string", "Its API group."),
    Field("kind", 3, "string", "Its kind (or resource)."),
    Field("uid", 6, "string", "Its UID."),
    Field("causes", 4, ListOf(STATUS_CAUSE), "More about the error, e.g. one cause per invalid field.", list_type="atomic"),
    Field("retryAfterSeconds", 5, "int32", "How long the client should wait before trying again."),
)

# registered as the scheme's unversioned v1 Status (register.go's AddToGroupVersion): an error is
# written in whatever the client accepts, protobuf included
STATUS = register(_s(
    "Status", "The answer of a call that returns no object: success, or why it failed.",
    Field("metadata", 1, LIST_META, "Standard list metadata."),
    Field("status", 2, "string", "\"Success\" or \"Failure\"."),
    Field("message", 3, "string", "A human-readable description of the status."),
    Field("reason", 4, "string", "A machine-readable word for why the call failed, e.g. NotFound."),
    Field("details", 5, STATUS_DETAILS, "More about the reason, by reason.", pointer=True),
    Field("code", 6, "int32", "The HTTP status code of the answer."),
    type_meta=True, gvks=(("", "v1", "Status"),),
))

WATCH_EVENT = _s(
    "WatchEvent", "One change a watch reports: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR, and the object.",
    Field("type", 1, "string", "The kind of change.", required=True),
    Field("object", 2, RAW_EXTENSION, "The object as it is after the change (a Status for ERROR).", required=True),
    gvks=(("", "v1", "WatchEvent"),),
)

PRECONDITIONS = _s(
    "Preconditions", "What must hold of the object for the operation to go ahead.",
    Field("uid", 1, "string", "The object's UID must be this.", pointer=True),
    Field("resourceVersion", 2, "string", "The object's resource version must be this.", pointer=True),
)

DELETE_OPTIONS = _s(
    "DeleteOptions", "How a delete is to be carried out.",
    Field("gracePeriodSeconds", 1, "int64", "How long the object may take to go, in seconds; 0 deletes at once.", pointer=True),
    Field("preconditions", 2, PRECONDITIONS, "What must hold of the object to delete it.", pointer=True),
    Field("orphanDependents", 3, "bool", "Deprecated: use propagationPolicy.", pointer=True),
    Field("propagationPolicy", 4, "string", "What happens to the dependents: Orphan, Background or Foreground.", pointer=True),
    Field("dryRun", 5, ListOf("string"), "\"All\" runs every stage but does not persist anything.", list_type="atomic"),
    type_meta=True, gvks=(("", "v1", "DeleteOptions"), ("meta.k8s.io", "v1", "DeleteOptions")),
)

CONDITION = _s(
    "Condition", "One aspect of an object's state (the shape every newer API's conditions share).",
    Field("type", 1, "string", "The aspect, in CamelCase (e.g. DisruptionAllowed).", required=True),
    Field("status", 2, "string", "True, False or Unknown.", required=True),
    Field("observedGeneration", 3, "int64", "The object's generation the condition was set from."),
    Field("lastTransitionTime", 4, TIME, "When the status last changed.", required=True),
    Field("reason", 5, "string", "A CamelCase word for why it is so.", required=True),
    Field("message", 6, "string", "A human-readable explanation.", required=True),
)

LABEL_SELECTOR_REQUIREMENT = _s(
    "LabelSelectorRequirement", "One term of a set-based selector: a key, an operator and values.",
    Field("key", 1, "string", "The label key the term is about.", required=True),
    Field("operator", 2, "string", "In, NotIn, Exists or DoesNotExist.", required=True),
    Field("values", 3, ListOf("string"), "The values for In and NotIn; empty for Exists and DoesNotExist.", list_type="atomic"),
)

LABEL_SELECTOR = _s(
    "LabelSelector", "Selects objects by their labels: every matchLabels pair and every expression must hold.",
    Field("matchLabels", 1, MapOf("string"), "Labels the object must carry, with these values."),
    Field("matchExpressions", 2, ListOf(LABEL_SELECTOR_REQUIREMENT), "Set-based terms, all of which must hold.", list_type="atomic"),
)

# -- discovery: what /api, /apis and a group's and a version's documents are ---------------------
# registered as the unversioned kinds of v1, as Go's scheme has them (AddUnversionedTypes), and
# under no version at all for the legacy documents, whose apiVersion the stripping serializer
# leaves empty (in JSON and in the protobuf envelope alike)

GROUP_VERSION_KIND = _s(
    "GroupVersionKind", "A kind, named with its group and version.",
    Field("group", 1, "string", "The group.", required=True),
    Field("version", 2, "string", "The version.", required=True),
    Field("kind", 3, "string", "The kind.", required=True),
)

SERVER_ADDRESS_BY_CLIENT_CIDR = _s(
    "ServerAddressByClientCIDR", "The address a client in a network reaches the server at.",
    Field("clientCIDR", 1, "string", "The clients' network.", required=True),
    Field("serverAddress", 2, "string", "The host:port they use.", required=True),
)

GROUP_VERSION_FOR_DISCOVERY = _s(
    "GroupVersionForDiscovery", "One version of a group, as discovery lists it.",
    Field("groupVersion", 1, "string", "group/version.", required=True),
    Field("version", 2, "string", "The version alone.", required=True),
)

API_VERSIONS = register(_s(
    "APIVersions", "The versions of the legacy group (/api).",
    Field("versions", 1, ListOf("string"), "The versions.", required=True),
    Field("serverAddressByClientCIDRs", 2, ListOf(SERVER_ADDRESS_BY_CLIENT_CIDR), "Where clients reach the server.", required=True),
    type_meta=True, gvks=(("", "v1", "APIVersions"), ("", "", "APIVersions")),
))

API_GROUP = register(_s(
    "APIGroup", "A group, its versions and the one it prefers.",
    Field("name", 1, "string", "The group's name.", required=True),
    Field("versions", 2, ListOf(GROUP_VERSION_FOR_DISCOVERY), "Its versions.", required=True),
    Field("preferredVersion", 3, GROUP_VERSION_FOR_DISCOVERY, "The version clients should use."),
    Field("serverAddressByClientCIDRs", 4, ListOf(SERVER_ADDRESS_BY_CLIENT_CIDR), "Where clients reach the server."),
    type_meta=True, gvks=(("", "v1", "APIGroup"),),
))

API_GROUP_LIST = register(_s(
    "APIGroupList", "The groups the server serves (/apis).",
    Field("groups", 1, ListOf(API_GROUP), "The groups.", required=True),
    type_meta=True, gvks=(("", "v1", "APIGroupList"),),
))

VERBS = _s("Verbs", "What can be done to a resource.", Field("items", 1, ListOf("string")),
           json_form={"type": "array", "items": {"type": "string"}})

API_RESOURCE = _s(
    "APIResource", "One resource of a group version, as discovery lists it.",
    Field("name", 1, "string", "The plural name.", required=True),
    Field("singularName", 6, "string", "The singular name.", required=True),
    Field("namespaced", 2, "bool", "Whether objects live in a namespace.", required=True),
    Field("group", 8, "string", "The group of a subresource of another group."),
    Field("version", 9, "string", "The version of a subresource of another version."),
    Field("kind", 3, "string", "The kind.", required=True),
    Field("verbs", 4, VERBS, "The verbs.", required=True, pointer=True),
    Field("shortNames", 5, ListOf("string"), "Short names kubectl takes."),
    Field("categories", 7, ListOf("string"), "Groupings such as all."),
    Field("storageVersionHash", 10, "string", "A hash of the version objects are stored at."),
)

API_RESOURCE_LIST = register(_s(
    "APIResourceList", "The resources of one group version (/api/v1, /apis/<group>/<version>).",
    Field("groupVersion", 1, "string", "group/version.", required=True),
    Field("resources", 2, ListOf(API_RESOURCE), "The resources.", required=True),
    type_meta=True, gvks=(("", "v1", "APIResourceList"), ("", "", "APIResourceList")),
))

# -- an object's metadata alone: what as=PartialObjectMetadata[List] answers (protobuf included) --

PARTIAL_OBJECT_METADATA = register(_s(
    "PartialObjectMetadata", "An object's metadata, without the rest of it.",
    Field("metadata", 1, OBJECT_META, "The object's metadata."),
    type_meta=True, gvks=(("meta.k8s.io", "v1", "PartialObjectMetadata"), ("meta.k8s.io", "v1beta1", "PartialObjectMetadata")),
))

PARTIAL_OBJECT_METADATA_LIST = register(_s(
    "PartialObjectMetadataList", "A list's items' metadata.",
    Field("metadata", 1, LIST_META, "The list's metadata."),
    Field("items", 2, ListOf(PARTIAL_OBJECT_METADATA), "Each item's metadata.", required=True),
    type_meta=True, gvks=(("meta.k8s.io", "v1", "PartialObjectMetadataList"),),
))
