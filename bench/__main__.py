"""Run every benchmark module in this package: ``python -m bench`` (no Go twin).

Each ``bench/bench_*.py`` module provides ``main()``, which measures and prints its numbers.
``python -m bench sim`` runs only the modules whose name contains ``sim``.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

import bench


def main(argv: list[str]) -> int:
    names = sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_"))
    if argv:
        names = [n for n in names if any(a in n for a in argv)]
    for name in names:
        print(f"== {name}", flush=True)
        started = time.perf_counter()
        importlib.import_module(f"bench.{name}").main()
        print(f"== {name} took {time.perf_counter() - started:.1f} s\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
