"""Benchmarks for the budgets in design.md section 9, run by ``make bench`` (no Go twin)."""
