"""The project's conventions, checked on the source (``make check`` runs just this file).

* every module has a docstring whose first line names its Go twin (``Port of k8s.io/... (v1.36.0).``)
  or says it has none;
* the Go files a first line names exist at the versions it names, which are the pinned ones
  (tests/gotree.py reads the line, tests/data/go-tree-paths.txt lists the files);
* a port of ``pkg/endpoints/filters`` sits in ``genericserver/endpoints/filters/``;
* server code reaches threads, sleeps and clocks only through ``genericserver.runtime``;
* goroutines get a name;
* modules stay small enough to read beside their Go twin;
* a reader finds each twin in one hop: a module that ports one Go file sits in the folder of
  that Go file's package and is named after the file or its package (the exceptions are listed
  in ``NAME_EXCEPTIONS`` with their reasons); a port of Go's own library sits at its import
  path (``net/http/``, ``bufio/``; ``golang.org/x/`` as ``x/``, ``github.com/`` as ``github_com/``, a hyphen as ``_``), named after a Go file, its
  package or the Go type it ports, so ``genericserver/`` itself lists the apiserver's files;
* no two modules import each other, directly or through others (not even under
  ``TYPE_CHECKING`` or inside a function).
"""

from __future__ import annotations

import ast
import functools
import pathlib
import re

import gotree


ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "genericserver"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)

# where real threads and clocks are the point: the seam itself and the test support
SEAM_EXEMPT = {"runtime/__init__.py"}
SEAM_EXEMPT_DIRS = {"testing", "demo"}

BARE = re.compile(
    r"\btime\.(sleep|monotonic|time|perf_counter)\(|threading\.(Thread|Event|Condition|Lock|RLock|Semaphore|BoundedSemaphore|Timer)\("
)
# the version in parentheses: Kubernetes's tag, or the pseudo-version of a module without one
# (kube-openapi, goautoneg); tests/gotree.py checks it is the pinned one
PORT_LINE = re.compile(
    r"^Port of (k8s\.io/(apiserver|apimachinery|api|kubernetes|kube-openapi)|github\.com/munnerz/goautoneg)/\S+\.go\b.*"
    r"\((v1\.36\.0|v0\.0\.0-\d{14}-[0-9a-f]{12})\b|^Port of Go's \S+ package|^Ports of k8s\.io/")
MAX_LINES = 600


@functools.lru_cache(maxsize=None)
def source(p: pathlib.Path) -> str:
    return p.read_text()


@functools.lru_cache(maxsize=None)
def tree(p: pathlib.Path) -> ast.Module:
    """The module's syntax tree, parsed once for all the checks (read it, do not change it)."""
    return ast.parse(source(p))


def rel(p: pathlib.Path) -> str:
    return str(p.relative_to(ROOT))


def is_server_code(p: pathlib.Path) -> bool:
    parts = p.relative_to(PACKAGE).parts
    return "/".join(parts) not in SEAM_EXEMPT and not (set(parts[:-1]) & SEAM_EXEMPT_DIRS)


KNOWN = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__") for p in MODULES}


def test_there_are_modules_to_check():
    assert len(MODULES) > 5


def each(paths, rule) -> None:
    """Check ``rule`` (a function that asserts) on every path, and fail once naming every path
    that breaks it: one test per rule, not one per module, since every worker of the suite
    collects this file and a thousand items cost it seconds."""
    problems = []
    for path in paths:
        try:
            rule(path)
        except AssertionError as err:
            problems.append(str(err))
    assert not problems, "\n".join(problems)


def docstring_first_line_names_the_go_twin(path: pathlib.Path):
    doc = ast.get_docstring(tree(path))
    assert doc, f"{rel(path)} has no module docstring"
    first = doc.splitlines()[0]
    if first.startswith("Port"):
        assert PORT_LINE.match(first), f"{rel(path)}: first line should read 'Port of k8s.io/<repo>/<file>.go (v1.36.0).': {first!r}"
    else:
        assert "no Go twin" in first or "(package)" in first, (
            f"{rel(path)}: first line neither names a Go file nor says there is none: {first!r}"
        )


def test_module_docstring_first_line_names_the_go_twin():
    each(MODULES, docstring_first_line_names_the_go_twin)


def uses_the_runtime_seam(path: pathlib.Path):
    offending = [
        f"{rel(path)}:{n}: {line.strip()}"
        for n, line in enumerate(source(path).splitlines(), 1)
        if BARE.search(line) and not line.lstrip().startswith("#")
    ]
    assert not offending, "bare threading/time outside the runtime seam:\n" + "\n".join(offending)


def test_server_code_uses_the_runtime_seam():
    each([p for p in MODULES if is_server_code(p)], uses_the_runtime_seam)


def goroutines_are_named(path: pathlib.Path):
    unnamed = []
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Call):
            fn = node.func
            called = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            owner = getattr(fn.value, "id", "") if isinstance(fn, ast.Attribute) else ""
            if called == "go" and owner in {"rt", "runtime"}:
                if not any(k.arg == "name" for k in node.keywords):
                    unnamed.append(node.lineno)
    assert not unnamed, f"{rel(path)}: goroutines started without a name at lines {unnamed}"


def test_goroutines_are_named():
    each(MODULES, goroutines_are_named)


def within_the_size_budget(path: pathlib.Path):
    n = len(source(path).splitlines())
    assert n <= MAX_LINES, f"{rel(path)} has {n} lines (budget {MAX_LINES}): split it"


def test_module_size_budget():
    each(MODULES, within_the_size_budget)


def test_the_seam_check_catches_a_bare_sleep():
    # the check itself must be able to fail
    assert BARE.search("    time.sleep(1)")
    assert BARE.search("t = threading.Thread(target=f)")
    assert not BARE.search("rt.sleep(1)")


# Go folder (under k8s.io/<repo>/, or "<repo>:folder" where two repositories share a folder
# name) -> the folder of its twins here; anything else is flat
FOLDERS = [
    ("apimachinery:pkg/apis/meta/v1/", "apimachinery/apis/meta/v1"),
    ("apimachinery:pkg/apis/meta/internalversion/", "apimachinery/apis/meta/internalversion"),
    ("api:core/v1/", "api/core/v1"),
    ("kubernetes:pkg/apis/core/v1/helper/qos/", "api/core/v1"),
    ("api:authentication/v1/", "api/authentication/v1"),
    ("api:apps/v1/", "api/apps/v1"),
    ("api:apidiscovery/v2/", "api/apidiscovery/v2"),
    ("api:discovery/v1/", "api/discovery/v1"),
    ("api:autoscaling/v1/", "api/autoscaling/v1"),
    ("api:coordination/v1/", "api/coordination/v1"),
    ("api:policy/v1/", "api/policy/v1"),
    ("apimachinery:pkg/util/intstr/", "apimachinery"),
    ("apimachinery:pkg/util/validation/field/", "apimachinery/field"),
    ("apimachinery:pkg/util/validation/", "apimachinery"),
    ("apimachinery:pkg/util/waitgroup/", "apimachinery"),
    ("apimachinery:pkg/util/errors/", "apimachinery"),
    ("apimachinery:pkg/util/naming/", "apimachinery"),
    ("apimachinery:pkg/util/runtime/", "apimachinery"),
    ("apimachinery:pkg/version/", "apimachinery"),
    ("apimachinery:pkg/api/errors/", "apimachinery/api"),
    ("apimachinery:pkg/api/resource/", "apimachinery/api"),
    ("apimachinery:pkg/api/validation/", "apimachinery/api"),
    ("apimachinery:pkg/api/validate/content/", "apimachinery/api/validate"),
    ("kubernetes:pkg/apis/core/validation/", "apis/core"),
    ("apiserver:pkg/registry/rest/", "registry/rest"),
    ("kubernetes:pkg/registry/authentication/selfsubjectreview/", "registry/authentication"),
    ("kubernetes:pkg/registry/core/", "registry/core"),
    ("kubernetes:pkg/registry/policy/", "registry/policy"),
    ("kubernetes:pkg/registry/authorization/selfsubjectaccessreview/", "registry/authorization"),
    ("kubernetes:pkg/registry/authorization/selfsubjectrulesreview/", "registry/authorization"),
    ("api:authorization/v1/", "api/authorization/v1"),
    ("kubernetes:pkg/printers/internalversion/", "printers/internalversion"),
    ("kube-openapi:pkg/", "openapi"),
    ("apimachinery:pkg/util/duration/", "apimachinery"),
    ("apimachinery:pkg/runtime/serializer/", "apimachinery/runtime/serializer"),
    ("apimachinery:pkg/runtime/=", "apimachinery/runtime"),
    ("apimachinery:pkg/util/strategicpatch/", "apimachinery/strategicpatch"),
    ("apimachinery:pkg/labels/", "apimachinery/labels"),
    ("apimachinery:pkg/fields/", "apimachinery/fields"),
    ("apiserver:pkg/registry/generic/registry/", "registry/generic/registry"),
    ("apiserver:pkg/endpoints/handlers/responsewriters/", ""),
    ("apiserver:pkg/endpoints/handlers/negotiation/", "endpoints/handlers/negotiation"),
    ("apiserver:pkg/endpoints/handlers/finisher/", "endpoints/handlers/finisher"),
    ("apiserver:pkg/storage/", "storage"),
    ("apiserver:pkg/endpoints/handlers/", "endpoints/handlers"),
    ("apiserver:pkg/endpoints/discovery/aggregated/", "endpoints/discovery/aggregated"),
    ("apiserver:pkg/endpoints/discovery/", "endpoints/discovery"),
    ("apiserver:pkg/endpoints/=", "endpoints"),  # "=": that folder alone, not the ones below it
    ("apimachinery:pkg/util/validation/field/", "apimachinery/field"),
    ("apimachinery:pkg/util/net/", "apimachinery"),
    ("apiserver:pkg/warning/", "warning"),
    ("pkg/server/filters/", "filters"),
    ("pkg/endpoints/filters/", "endpoints/filters"),
    ("pkg/server/healthz/", "healthz"),
    ("pkg/audit/", "audit"),
    ("pkg/apis/audit/", "audit"),
    ("plugin/pkg/audit/", "audit"),
]
NAME_EXCEPTIONS = {
    "apimachinery/utilnet.py": "pkg/util/net/http.go: apimachinery/http.py would read as the HTTP server's (util/runtime is utilruntime.py alike)",
    "chain.py": "config.go's DefaultBuildHandlerChain, split from config.py to keep each readable",
    "apigroups.py": "genericapiserver.go's InstallLegacyAPIGroup and InstallAPIGroups, split from genericapiserver.py to keep each readable",
    "signal_handler.py": "signal.go: a module named signal.py shadows the standard library (design.md)",
    "healthz/__init__.py": "pkg/server/healthz.go: Python cannot hold healthz.py beside the healthz/ folder",
    "audit/event.py": "pkg/apis/audit/v1/types.go: audit/types.py is pkg/audit/types.go already",
    "cluster/store.py": "the cluster world's object store; delete.go's graceful deletion is the part ported",
    "apimachinery/utilruntime.py": "apimachinery's util/runtime/runtime.go, imported as utilruntime in Go too: apimachinery/runtime/ is pkg/runtime",
}
SINGLE_PORT = re.compile(r"^Port of k8s\.io/(apiserver|apimachinery|api|kubernetes|kube-openapi)/(\S+?)(\{[^}]*\})?\.go\b")


def first_doc_line(path: pathlib.Path) -> str:
    """The module docstring's first line, read off the source's top (every worker collects this
    file, so the parametrisation below parses nothing unless it must)."""
    m = re.match(r'\s*"""(.+)', source(path))
    if m:
        return m.group(1).removesuffix('"""').strip()
    doc = ast.get_docstring(tree(path)) or ""
    return doc.splitlines()[0] if doc else ""


def _go_twin(path: pathlib.Path):
    m = SINGLE_PORT.match(first_doc_line(path))
    return f"{m.group(1)}:{m.group(2)}" + (".go" if not m.group(3) else "") if m else None


PORTS = [(p, twin) for p in MODULES if (twin := _go_twin(p))]


def test_the_one_hop_rule_has_modules_to_check():
    assert len(PORTS) > 40


def sits_in_its_go_folder_under_its_go_name(port: tuple[pathlib.Path, str]) -> None:
    path, go = port
    here = str(path.relative_to(PACKAGE))
    if here in NAME_EXCEPTIONS or here.startswith("cluster/"):
        return  # the cluster world holds models of its own; each exception says why
    repo, _, go = go.partition(":")
    go_dir, _, go_file = go.rpartition("/")
    folder = next((ours for prefix, ours in FOLDERS
                   if (go_dir + "/").startswith(prefix) or f"{repo}:{go_dir}/".startswith(prefix)
                   or f"{repo}:{go_dir}/=" == prefix), "")
    expected_names = {pathlib.Path(go_file).stem, pathlib.PurePosixPath(go_dir).name}
    expected_names |= {f"{pathlib.PurePosixPath(go_dir).name}_{pathlib.Path(go_file).stem}"}
    assert str(path.parent.relative_to(PACKAGE)).replace(".", "") == folder, (
        f"{here} ports {go}: it belongs in genericserver/{folder or ''} (see FOLDERS)")
    assert path.stem in expected_names, f"{here} ports {go}: name it one of {sorted(expected_names)}"


def test_each_port_sits_in_its_go_folder_under_its_go_name():
    each(PORTS, sits_in_its_go_folder_under_its_go_name)


GO_PORT = re.compile(r"^Port of Go's (\S+) package")
# Go's own packages whose port cannot sit at the import path, and why
GO_PATH_EXCEPTIONS = {
    "godur.py": "Go's time package: a genericserver/time/ folder would shadow Python's time module for a file run from genericserver/",
    "patherror.py": "Go's io/fs package (os.PathError): a genericserver/io/ folder would shadow Python's io module for a file run from genericserver/",
}
GO_PORTS = [(p, m.group(1)) for p in MODULES if (m := GO_PORT.match(first_doc_line(p)))]


def test_the_go_path_rule_has_modules_to_check():
    assert len(GO_PORTS) > 10


def sits_at_its_go_import_path(port: tuple[pathlib.Path, str]) -> None:
    path, package = port
    here = str(path.relative_to(PACKAGE))
    if here in GO_PATH_EXCEPTIONS:
        return
    # an import path's hyphen is an underscore in a Python package's name (go-restful -> go_restful)
    folder = package.replace("golang.org/x/", "x/").replace("github.com/", "github_com/").replace("-", "_")
    assert str(path.parent.relative_to(PACKAGE)) == folder, f"{here} ports Go's {package}: it belongs in genericserver/{folder}/"
    first = first_doc_line(path)
    names = set(re.findall(r"(\w+)\.go\b", first)) | {folder.rpartition("/")[2]}
    names |= {t.rpartition(".")[2].lower() for t in re.findall(r"``([\w.]+)``", first)}
    assert path.stem in names, f"{here} ports Go's {package}: name it after a Go file, the package or a type: {sorted(names)}"


def test_each_go_library_port_sits_at_its_import_path():
    each(GO_PORTS, sits_at_its_go_import_path)


def test_the_go_path_rule_can_fail():
    try:
        sits_at_its_go_import_path((PACKAGE / "httpserver.py", "net/http"))  # where it stood before
    except (AssertionError, ValueError):
        return
    raise AssertionError("a net/http port at the top of genericserver/ passed the import-path rule")


def _imports(path: pathlib.Path) -> set[str]:
    """Every genericserver module ``path`` imports, wherever the import statement stands."""
    out = set()
    me = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.removesuffix(".__init__").split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
    return {m for m in out if m in KNOWN and m != me.removesuffix(".__init__")}


def test_no_two_modules_import_each_other():
    graph = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): _imports(p) for p in MODULES}
    # a package importing its own submodules (its __init__ re-exporting them) is not a circle
    def edges(m):
        return {n for n in graph.get(m, ()) if not m.startswith(n + ".")}
    cycles = []
    index, low, stack, on = {}, {}, [], set()
    counter = [0]

    def strongconnect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges(v):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    assert not cycles, "modules that import each other: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_files_handed_out_first_exist():
    from conftest import LONGEST_FIRST

    assert [name for name in LONGEST_FIRST if not (ROOT / "tests" / name).is_file()] == []


# -- each first line names Go files that exist, at the versions this project pins ------------------
# tests/gotree.py reads a line's Go files; tests/data/go-tree-paths.txt lists the files that exist
# (`make go-tree-paths` records it again when a line names a new folder)

FIRST_LINE_EXCEPTIONS = {
    "registry/core/rest_log.py": "names strategy.go as if beside pod/rest/log.go; it is pkg/registry/core/pod/strategy.go. "
    "registry/ is being rewritten on another branch (issue 50 items 1-3), whose line is to say so",
}
ENDPOINTS_FILTERS = "k8s.io/apiserver@v0.36.0/pkg/endpoints/filters/"


def _port_lines(paths) -> list[tuple[pathlib.Path, str]]:
    return [(p, first) for p in paths
            if (first := first_doc_line(p)).startswith("Port") and "(package)" not in first]


def names_go_files_that_exist(port: tuple[pathlib.Path, str], known: frozenset = frozenset()) -> None:
    path, first = port
    known = known or GO_TREE()
    line = gotree.named_files(first, known.__contains__)
    problems = line.problems + [
        f"{n.token} is not at {' or '.join(n.candidates)}" for n in line.files if not any(c in known for c in n.candidates)
    ]
    assert not problems, f"{rel(path)}: {'; '.join(problems)}: {first!r}"


@functools.lru_cache(maxsize=None)
def GO_TREE() -> frozenset:
    return gotree.recorded()


def test_each_first_line_names_go_files_that_exist_at_the_pinned_versions():
    ports = [(p, f) for p, f in _port_lines(MODULES) if str(p.relative_to(PACKAGE)) not in FIRST_LINE_EXCEPTIONS]
    assert len(ports) > 100
    each(ports, names_go_files_that_exist)


def test_each_first_line_exception_is_still_needed():
    fixed = []
    for here in FIRST_LINE_EXCEPTIONS:
        try:
            names_go_files_that_exist((PACKAGE / here, first_doc_line(PACKAGE / here)))
        except AssertionError:
            continue
        fixed.append(here)
    assert fixed == [], "these lines pass now: take them out of FIRST_LINE_EXCEPTIONS"


def test_the_go_file_check_can_fail():
    bad = {
        "a file that is not there": "Port of k8s.io/apiserver/pkg/server/filters/nosuchfilter.go (v1.36.0).",
        "a second file not beside the first": "Port of k8s.io/kubernetes/pkg/registry/core/pod/rest/log.go and strategy.go (v1.36.0).",
        "kube-openapi by a tag it does not have": "Port of k8s.io/kube-openapi/pkg/handler/handler.go (v1.36.0).",
        "a Go release whose source is not recorded": "Port of Go's time package (format.go, Go 1.25).",
        "no Go release": "Port of Go's os package: ``PathError`` (error.go).",
        "a package new in Go 1.27, at 1.26": "Port of Go's net/http/internal/http2 package (server.go, Go 1.26).",
        "no Go file at all": "Port of Go's golang.org/x/time/rate package (v0.14.0): the limiter.",
    }
    passed = []
    for why, first in bad.items():
        try:
            names_go_files_that_exist((PACKAGE / "x.py", first))
        except AssertionError:
            continue
        passed.append(why)
    assert passed == []
    # and the forms the project writes pass
    for first in (
        "Ports of k8s.io/apiserver/pkg/audit/policy/{checker,util}.go, pkg/audit/evaluator.go and pkg/apis/audit/v1/types.go (v1.36.0).",
        "Port of k8s.io/apimachinery/pkg/util/waitgroup/waitgroup.go and ratelimited_waitgroup.go (v1.36.0).",
        "Port of k8s.io/apiserver/pkg/server/config.go#L1036-L1118 (v1.36.0): DefaultBuildHandlerChain.",
        "Port of Go's net/http/internal/http2 package (server.go, Go 1.27.3).",
        "Port of Go's golang.org/x/time/rate package (rate.go, v0.14.0).",
        # the forms the ports other branches add are expected to take
        "Port of github.com/munnerz/goautoneg/autoneg.go (v0.0.0-20191010083416-a7dc8b61c822): Accept's media ranges.",
        "Port of k8s.io/apiserver/pkg/endpoints/handlers/finisher/finisher.go (v1.36.0).",
        "Port of k8s.io/apiserver/pkg/storage/continue.go (v1.36.0): continue tokens.",
    ):
        assert PORT_LINE.match(first), first
        names_go_files_that_exist((PACKAGE / "x.py", first))


def test_the_path_list_holds_the_subtrees_being_ported():
    """Other branches add ports under these folders (the REST handlers' finisher, the generic
    store, etcd3's continue tokens, goautoneg): their first lines must find their files."""
    known = GO_TREE()
    for path in (
        "k8s.io/apiserver@v0.36.0/pkg/endpoints/handlers/finisher/finisher.go",
        "k8s.io/apiserver@v0.36.0/pkg/registry/generic/registry/store.go",
        "k8s.io/apiserver@v0.36.0/pkg/storage/etcd3/store.go",
        "github.com/munnerz/goautoneg@v0.0.0-20191010083416-a7dc8b61c822/autoneg.go",
    ):
        assert path in known, path


def ports_no_endpoints_filter_outside_endpoints_filters(port: tuple[pathlib.Path, str]) -> None:
    path, first = port
    if path.is_relative_to(PACKAGE / "endpoints" / "filters"):
        return
    named = [n.token for n in gotree.named_files(first, GO_TREE().__contains__).files
             if any(c.startswith(ENDPOINTS_FILTERS) and c in GO_TREE() for c in n.candidates)]
    assert not named, f"{rel(path)} ports pkg/endpoints/filters ({', '.join(named)}): it belongs in genericserver/endpoints/filters/"


def test_pkg_endpoints_filters_ports_are_in_endpoints_filters():
    each(_port_lines(MODULES), ports_no_endpoints_filter_outside_endpoints_filters)
    try:  # where audit.py stood before issue 50
        ports_no_endpoints_filter_outside_endpoints_filters(
            (PACKAGE / "endpoints" / "audit.py", "Port of k8s.io/apiserver/pkg/endpoints/filters/audit.go (v1.36.0)."))
    except AssertionError:
        return
    raise AssertionError("a pkg/endpoints/filters port in genericserver/endpoints/ passed")
