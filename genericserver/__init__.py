"""genericserver: k8s.io/apiserver v1.36.0 graceful shutdown re-implemented in Python (package).

See walkthrough.md for the map from each Go file to its module here (README.md for where to start).
"""

__version__ = "0.1.0"
