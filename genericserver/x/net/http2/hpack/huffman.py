"""Port of Go's golang.org/x/net/http2/hpack package (huffman.go, v0.49.0): ``AppendHuffmanString`` and ``HuffmanEncodeLength``, the encoding half.

RFC 7541 Appendix B's code (from the ``hpack`` library's constants, the same table as Go's
tables.go). Go shifts each code into a 64-bit word; Python's loops cost far more than its string
and integer operations, so each byte's code is kept as a string of its bits, a string's codes are
joined, and the bits become bytes in one conversion: the same octets, padded as Go pads them with
the most significant bits of the end-of-string code (all ones).
"""

from __future__ import annotations

from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH

CODE_LENGTHS = REQUEST_CODES_LENGTH[:256]  # in bits, by byte (the 257th is the end of string)
CODE_BITS = [format(code, f"0{length}b") for code, length in zip(REQUEST_CODES[:256], CODE_LENGTHS)]


def huffman_encode_length(s: bytes) -> int:
    """The octets ``s`` takes Huffman-coded."""
    return (sum(map(CODE_LENGTHS.__getitem__, s)) + 7) // 8


def append_huffman_string(dst: bytearray, s: bytes) -> None:
    """``s`` Huffman-coded, added to ``dst``."""
    bits = "".join(map(CODE_BITS.__getitem__, s))
    if not bits:
        return
    n = (len(bits) + 7) // 8
    dst += int(bits.ljust(8 * n, "1"), 2).to_bytes(n, "big")


__all__ = ["append_huffman_string", "huffman_encode_length"]
