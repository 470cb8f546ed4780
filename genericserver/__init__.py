"""genericserver: k8s.io/apiserver v1.36.0 graceful shutdown re-implemented in Python (package).

See README.md and walkthrough.md for the map from each Go file to its module here.
"""

__version__ = "0.1.0"
