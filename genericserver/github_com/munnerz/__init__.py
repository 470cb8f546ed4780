"""github.com/munnerz (package): its modules the apiserver imports (no Go twin)."""
