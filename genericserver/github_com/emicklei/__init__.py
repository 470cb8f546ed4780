"""github.com/emicklei (package): its modules the apiserver imports (no Go twin)."""
