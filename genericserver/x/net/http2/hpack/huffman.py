"""Port of Go's golang.org/x/net/http2/hpack package (huffman.go, v0.49.0): ``huffmanDecode``, ``AppendHuffmanString`` and ``HuffmanEncodeLength``.

RFC 7541 Appendix B's code (from the ``hpack`` library's constants, the same table as Go's
tables.go). To encode, Go shifts each code into a 64-bit word; Python's loops cost far more than
its string and integer operations, so each byte's code is kept as a string of its bits, a string's
codes are joined, and the bits become bytes in one conversion: the same octets, padded as Go pads
them with the most significant bits of the end-of-string code (all ones).

To decode, Go's tree: each node has 256 children, one for each next 8 bits, and a code of more
than 8 bits goes down one level per 8; a code's leaf is copied into every child its last bits
begin. The end-of-string code is no symbol, so a string that holds it is invalid, as is padding
of 8 bits or more or padding that is not all ones.
"""

from __future__ import annotations

from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH

CODE_LENGTHS = REQUEST_CODES_LENGTH[:256]  # in bits, by byte (the 257th is the end of string)
CODE_BITS = [format(code, f"0{length}b") for code, length in zip(REQUEST_CODES[:256], CODE_LENGTHS)]


class InvalidHuffmanError(ValueError):
    """Go's ``ErrInvalidHuffman``."""

    def __init__(self) -> None:
        super().__init__("hpack: invalid Huffman-encoded data")


class StringLengthError(ValueError):
    """Go's ``ErrStringLength``: a string over the decoder's limit."""

    def __init__(self) -> None:
        super().__init__("hpack: string too long")


class _Leaf:
    __slots__ = ("sym", "code_len")

    def __init__(self, sym: int, code_len: int):
        self.sym, self.code_len = sym, code_len  # code_len: the bits of the code below its node


def _build_root() -> list:
    """Go's ``buildRootHuffmanNode``: an internal node is a list of 256 children (None where
    no code goes), a leaf a :class:`_Leaf`."""
    root: list = [None] * 256
    for sym, (code, code_len) in enumerate(zip(REQUEST_CODES[:256], CODE_LENGTHS)):
        cur = root
        while code_len > 8:
            code_len -= 8
            i = (code >> code_len) & 0xFF
            if cur[i] is None:
                cur[i] = [None] * 256
            cur = cur[i]
        shift = 8 - code_len
        start = (code << shift) & 0xFF
        leaf = _Leaf(sym, code_len)
        for i in range(start, start + (1 << shift)):
            cur[i] = leaf
    return root


ROOT = _build_root()


def huffman_decode(v: bytes, max_len: int = 0) -> bytes:
    """The octets Huffman-coded in ``v``; ``max_len`` (0: none) bounds their number."""
    out = bytearray()
    n = ROOT
    cur = cbits = sbits = 0  # bits not yet fed to n, how many, and the bits of this symbol so far
    for b in v:
        cur = (cur << 8 | b) & 0xFFFF  # (never more than 15 bits are left over)
        cbits += 8
        sbits += 8
        while cbits >= 8:
            n = n[(cur >> (cbits - 8)) & 0xFF]
            if n is None:
                raise InvalidHuffmanError()
            if type(n) is _Leaf:
                if max_len and len(out) == max_len:
                    raise StringLengthError()
                out.append(n.sym)
                cbits -= n.code_len
                n = ROOT
                sbits = cbits
            else:
                cbits -= 8
    while cbits > 0:  # the last bits: whole symbols, then padding
        n = n[(cur << (8 - cbits)) & 0xFF]
        if n is None:
            raise InvalidHuffmanError()
        if type(n) is not _Leaf or n.code_len > cbits:
            break
        if max_len and len(out) == max_len:
            raise StringLengthError()
        out.append(n.sym)
        cbits -= n.code_len
        n = ROOT
        sbits = cbits
    if sbits > 7:  # a symbol left incomplete, or padding of 8 bits or more (RFC 7541 5.2)
        raise InvalidHuffmanError()
    mask = (1 << cbits) - 1
    if cur & mask != mask:  # padding must be the first bits of the end-of-string code: ones
        raise InvalidHuffmanError()
    return bytes(out)


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


__all__ = ["InvalidHuffmanError", "StringLengthError", "append_huffman_string", "huffman_decode", "huffman_encode_length"]
