"""genericserver: the Kubernetes generic apiserver's graceful shutdown, re-implemented in Python.

Port of k8s.io/apiserver (v1.36.0) shutdown behaviour; see README.md and walkthrough.md.
"""

__version__ = "0.1.0"
