"""Test support: the simulation runtime, leak checks, transports and strategies (no Go twin)."""
