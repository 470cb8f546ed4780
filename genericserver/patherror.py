"""Port of Go's io/fs package: ``PathError`` (fs.go), as os returns it, its errno in the words of syscall's ``Errno.Error`` (syscall/syscall_unix.go), Go 1.26.

A Go file operation that fails returns ``&PathError{Op, Path, Err}``, which prints as
``open /tmp: is a directory``: the operation, the path, and the errno in the words of Go's
syscall table (the C library's words with a lower-case first letter). Python's ``OSError``
prints ``[Errno 21] Is a directory: '/tmp'``; where a Go program prints a PathError (a token
file, the audit log, Contour's ok file), this project prints :func:`text`.

It sits at the top of the package, not at Go's import path: a ``genericserver/io/`` folder would
shadow Python's io module for a file run from ``genericserver/``, as ``godur.py``'s would time.

Two Go files in one module: the error text is the PathError's with the errno's words inside it.
"""

from __future__ import annotations

import os
from typing import Union


def text(op: str, path: str, err: Union[OSError, int]) -> str:
    """``PathError{Op: op, Path: path, Err: errno}.Error()``; ``err`` is an OSError or an errno."""
    number = err if isinstance(err, int) else err.errno
    words = os.strerror(number) if number else str(err)
    return f"{op} {path}: {words[:1].lower()}{words[1:]}"
