"""Port of Go's encoding/base64 package (base64.go, Go 1.26): where ``StdEncoding.Decode`` finds its input corrupt.

Python's decoder says that an input is not base64; Go's says at which byte
(``illegal base64 data at input byte 3``), and that byte is what kube-apiserver's answer names
when a ``binaryData`` value does not decode. :func:`corrupt_input_offset` walks the input in
quanta of four as ``decodeQuantum`` does (Go's faster paths decode the same quanta): a newline
or carriage return is skipped, padding may only close the input, and an input that ends inside
a quantum is corrupt where that quantum began.
"""

from __future__ import annotations

from typing import Optional

ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
PAD = ord("=")
_NEWLINES = (ord("\n"), ord("\r"))


def corrupt_input_offset(src: bytes) -> Optional[int]:
    """The offset ``StdEncoding.Decode`` reports as its ``CorruptInputError``, or None when
    ``src`` decodes."""
    si = 0
    while si < len(src):
        si, offset = _decode_quantum(src, si)
        if offset is not None:
            return offset
    return None


def corrupt_input_error(offset: int) -> str:
    """``CorruptInputError.Error``."""
    return f"illegal base64 data at input byte {offset}"


def _decode_quantum(src: bytes, si: int) -> tuple[int, Optional[int]]:
    """``decodeQuantum``: the next quantum from ``si``; where it goes on, and the error's offset."""
    j = 0
    while j < 4:
        if si == len(src):
            if j == 0:
                return si, None
            return si, si - j  # the input ends inside a quantum (padding was due)
        c = src[si]
        si += 1
        if c in ALPHABET:
            j += 1
            continue
        if c in _NEWLINES:
            continue  # skipped, as if it were not there
        if c != PAD or j < 2:
            return si, si - 1
        if j == 2:  # "xx=" must be "xx=="
            while si < len(src) and src[si] in _NEWLINES:
                si += 1
            if si == len(src):
                return si, len(src)
            if src[si] != PAD:
                return si, si - 1
            si += 1
        # padding ends the input: anything after it but newlines is corrupt
        while si < len(src) and src[si] in _NEWLINES:
            si += 1
        return si, (si if si < len(src) else None)
    return si, None


__all__ = ["ALPHABET", "corrupt_input_error", "corrupt_input_offset"]
