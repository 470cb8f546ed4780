"""Checks of a subcommand's flag values, shared by ``cluster`` and ``demo`` (no Go twin).

A value that cannot work is refused before anything runs, in one line naming the flag: a
negative lag as argparse refuses a word where a number goes, a file that cannot be written
before the run whose result it would hold.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable


def at_least(minimum: float, kind: type = float, strict: bool = False) -> Callable[[str], Any]:
    """An argparse type: a number of ``kind`` of at least ``minimum`` (above it with ``strict``),
    for the durations and counts that have no meaning below it (a lag, a grace, a delay)."""
    words = f"must be more than {minimum:g}" if strict else f"must be {minimum:g} or more"

    def parse(value: str) -> Any:
        try:
            number = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {kind.__name__} value: {value!r}") from None
        if number < minimum or (strict and number == minimum):
            raise argparse.ArgumentTypeError(f"invalid value {value!r}: {words}")
        return number
    return parse


def between(minimum: int, maximum: int, why: str) -> Callable[[str], int]:
    """An argparse type: a whole number from ``minimum`` to ``maximum``, ``why`` saying what sets the top
    (a count that names addresses, which run out)."""
    least = at_least(minimum, int)

    def parse(value: str) -> int:
        number = least(value)
        if number > maximum:
            raise argparse.ArgumentTypeError(f"invalid value {value!r}: must be {maximum} or less ({why})")
        return number
    return parse


def writable(flag: str, path: str) -> bool:
    """Whether a file can be written at ``path``; if not, say why in one line on stderr. Asked
    before the run, not once it is over and the file is due."""
    folder = os.path.dirname(os.path.abspath(path))
    problem = ("is a folder, not a file" if os.path.isdir(path)
               else f"its folder {folder} does not exist" if not os.path.isdir(folder)
               else f"its folder {folder} is not writable" if not os.access(folder, os.W_OK)
               else "")
    if problem:
        print(f"error: {flag} {path}: {problem}", file=sys.stderr)
    return not problem
