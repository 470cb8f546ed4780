"""The workshop demo: a real server shut down under load, shown with rich (no Go twin)."""
