"""Port of k8s.io/apimachinery/pkg/version/types.go (v1.36.0): the version ``/version`` and ``--version`` report.

Go's ``version.Info`` names the binary's Kubernetes version and how it was built. This server
re-implements kube-apiserver **v1.36.0**, so it reports that version (major ``1``, minor
``36``, gitVersion ``v1.36.0``, and as gitCommit the k8s.io/apiserver commit tagged
``v0.36.0``, which the port was read from), plus what Go's Info has no field for: this
package's own version, as ``genericserverVersion`` (clients that decode Go's Info ignore an
unknown field). The build fields say Python: ``goVersion`` is the Python version,
``compiler`` the implementation (``cpython``), ``platform`` Go's ``GOOS/GOARCH`` spelling of
this machine. The emulation and minimum-compatibility versions are Go's defaults for a
v1.36.0 binary (emulating itself; compatible with 1.35).
"""

from __future__ import annotations

import platform
import sys
from dataclasses import asdict, dataclass
from typing import Any

from genericserver import __version__

KUBERNETES_VERSION = "v1.36.0"
# k8s.io/apiserver at tag v0.36.0 (= Kubernetes v1.36.0), as design.md pins it
APISERVER_COMMIT = "4275b1386716339093435e3a84f313d0f311d912"

_GOARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i686": "386", "armv7l": "arm"}


@dataclass(frozen=True)
class Info:
    """``version.Info``, fields in Go's order with Go's JSON names (the omitempty ones set)."""

    major: str
    minor: str
    emulationMajor: str
    emulationMinor: str
    minCompatibilityMajor: str
    minCompatibilityMinor: str
    gitVersion: str
    gitCommit: str
    gitTreeState: str
    buildDate: str
    goVersion: str
    compiler: str
    platform: str
    genericserverVersion: str

    def __str__(self) -> str:
        return self.gitVersion

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def get() -> Info:
    """This server's version information."""
    machine = platform.machine().lower()
    return Info(
        major="1",
        minor="36",
        emulationMajor="1",
        emulationMinor="36",
        minCompatibilityMajor="1",
        minCompatibilityMinor="35",
        gitVersion=KUBERNETES_VERSION,
        gitCommit=APISERVER_COMMIT,
        gitTreeState="clean",
        buildDate="",
        goVersion="python" + platform.python_version(),
        compiler=sys.implementation.name,
        platform=f"{sys.platform}/{_GOARCH.get(machine, machine)}",
        genericserverVersion=__version__,
    )


def version_line(program: str = "genericserver") -> str:
    """What ``--version`` prints (Go's verflag: ``Kubernetes v1.36.0``; here the port says what it is)."""
    return f"{program} {__version__} (a port of k8s.io/apiserver {KUBERNETES_VERSION})"


def add_version_flag(parser: Any) -> None:
    """``--version``: print :func:`version_line` and exit 0 (component-base's verflag)."""
    parser.add_argument("--version", action="version", version=version_line(), help="Print version information and quit")
