"""The forms a secret can take in printed text: ``forms_of``.

A command or a line of Python can print a secret other than as it is:
reversed, as hex (``xxd -p``, ``.hex()``, ``%2F``-style escapes), base64 or
base32 (standard or URL-safe, at any of the byte offsets it can sit at
inside a longer encoded text), rot13, its bytes as decimal, octal or binary
numbers (``list(key.encode())``, ``od -b``, ``xxd -b``, ``'\\163'``
escapes), ``0x``/``\\x`` lists, UTF-16 (``\\x00`` beside each
character), or the words of a dump that prints little-endian 16- or 32-bit words (``od -x``, ``hexdump``, ``od``'s default
octal words, ``od -d``, ``xxd -e``). Each form is what the text would show
once separators are taken out (``views.fold``): the digits of ``od -b`` run
together, as do the words of ``xxd``.

The value itself, its reverse, its hex, its URL quoting and its base64 also
count in pieces (a secret split in two, each half printed or encoded on its
own); the other forms count whole (what is left
of them at the encoded text's edges, where neighbouring bytes mix in, is
not part of the form).
"""

from __future__ import annotations

import base64
import codecs
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import quote

__all__ = ["Form", "forms_of"]

#: beyond this, a value is matched as itself, reversed, hex and base64 only
_LONG_VALUE = 1024


@dataclass(frozen=True, slots=True)
class Form:
    """One way ``value`` may be printed. ``pieces``: whether a long enough
    part of it counts too."""

    kind: str
    text: str
    pieces: bool = False
    #: characters a piece may fall short of half: an encoded half loses its
    #: last group's characters (base64 of each half of a split secret)
    slack: int = 0


def forms_of(value: str, *, every: bool = True) -> list[Form]:
    """The forms of ``value``, each once (the first kind that yields a text
    wins). ``every=False``: only the common ones (itself, reversed, hex,
    URL-quoted, base64), for the many values of a notebook's data."""
    data = value.encode("utf-8", "surrogatepass")
    found: dict[str, Form] = {}
    for form in _forms(value, data, every=every and len(data) <= _LONG_VALUE):
        if form.text and form.text not in found:
            found[form.text] = form
    return list(found.values())


def _forms(value: str, data: bytes, *, every: bool) -> Iterator[Form]:
    yield Form("value", value, pieces=True)
    yield Form("reversed", value[::-1], pieces=True)
    yield Form("hex", data.hex(), pieces=True)
    yield Form("url-quoted", quote(value, safe=""), pieces=True)
    for offset in range(3):
        core = _core(data, offset, 3, 4, base64.b64encode)
        yield Form("base64", core, pieces=True, slack=4)
        yield Form("base64url", core.replace("+", "-").replace("/", "_"), pieces=True, slack=4)
    if not every:
        return
    if value.isascii():  # UTF-16: each character and a zero byte, in either order
        yield Form("utf-16 escaped", "".join(f"{c}\\x00" for c in value))
        yield Form("utf-16 escaped", "".join(f"\\x00{c}" for c in value))
        yield Form("utf-16 hex", value.encode("utf-16-le").hex())
        yield Form("utf-16 hex", value.encode("utf-16-be").hex())
    for offset in range(5):
        yield Form("base32", _core(data, offset, 5, 8, base64.b32encode))
    yield Form("rot13", codecs.encode(value, "rot13"))
    yield Form("decimal bytes", "".join(map(str, data)))
    yield Form("octal bytes", "".join(f"{b:03o}" for b in data))
    yield Form("binary bytes", "".join(f"{b:08b}" for b in data))
    yield Form("0x bytes", "".join(f"0x{b:02x}" for b in data))
    yield Form("\\x bytes", "".join(f"x{b:02x}" for b in data))
    for width in (2, 4):
        for start in range(width):
            words = _words(data, start, width)
            yield Form(f"hex words of {width}", "".join(f"{w:0{2 * width}x}" for w in words))
    for start in range(2):
        words = _words(data, start, 2)
        yield Form("octal words", "".join(f"{w:06o}" for w in words))
        yield Form("decimal words", "".join(map(str, words)))


def _core(
    data: bytes, offset: int, group: int, chars: int, encode: Callable[[bytes], bytes]
) -> str:
    """The characters of ``data``'s encoding (groups of ``group`` bytes
    written as ``chars`` characters) that depend on ``data`` alone when it
    starts ``offset`` bytes into a group: the first and last characters,
    which mix in the bytes around it, are left out."""
    bits = 8 * group // chars  # per character
    encoded = encode(bytes(offset) + data).decode("ascii")
    skip = -(-8 * offset // bits)  # characters that hold a bit of the padding
    total = offset + len(data)
    end = chars * (total // group) + (8 * (total % group)) // bits
    return encoded[skip:end]


def _words(data: bytes, start: int, width: int) -> list[int]:
    """``data``'s little-endian words of ``width`` bytes, the first one
    starting at ``start`` (where a dump's words may fall), whole ones only."""
    return [
        int.from_bytes(data[i : i + width], "little")
        for i in range(start, len(data) - width + 1, width)
    ]
