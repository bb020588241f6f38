"""Path globs compiled to regular expressions.

One translator serves three dialects that share git's wildmatch rules for a
``/``-separated path: ``*`` and ``?`` never cross ``/``, ``[...]`` is a
character class (``[!x]``/``[^x]`` negated, ``[:alpha:]``-style POSIX
classes, ``\\`` escapes), and a whole ``**`` component matches zero or more
directories. ``.gitignore`` lines use it directly; the glob tool and grep's
``glob`` filter first expand ``{a,b}`` braces.
"""

from __future__ import annotations

import re

__all__ = ["GlobError", "expand_braces", "has_magic", "translate", "translate_component"]

_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9a-fA-F",
}
_MAGIC = re.compile(r"[*?\[{\\]")


class GlobError(ValueError):
    """A pattern that cannot be compiled (unclosed ``[``, trailing ``\\``, ...)."""


def has_magic(text: str) -> bool:
    """Whether ``text`` contains any glob syntax (so it is not a plain name)."""
    return _MAGIC.search(text) is not None


def translate(pattern: str) -> str:
    """Regex source (no anchors, use ``fullmatch`` with ``re.DOTALL``) for a path glob."""
    parts = pattern.split("/")
    out: list[str] = []
    last = len(parts) - 1
    for i, part in enumerate(parts):
        if part == "**":
            out.append(".*" if i == last else "(?:.*/)?")
            continue
        out.append(translate_component(part))
        if i != last:
            out.append("/")
    return "".join(out)


def translate_component(part: str) -> str:
    """Regex source for one path component (no ``/`` inside)."""
    out: list[str] = []
    i, n = 0, len(part)
    while i < n:
        c = part[i]
        if c == "\\":
            if i + 1 == n:
                raise GlobError("pattern ends with a lone backslash")
            out.append(re.escape(part[i + 1]))
            i += 2
        elif c == "*":
            while i < n and part[i] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            cls, i = _bracket(part, i)
            out.append(cls)
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _bracket(s: str, start: int) -> tuple[str, int]:
    """Translate the class starting at ``s[start] == '['``; return (regex, next index)."""
    i = start + 1
    negate = i < len(s) and s[i] in "!^"
    if negate:
        i += 1
    items: list[str] = []
    first = True
    while True:
        if i >= len(s):
            raise GlobError("unclosed '[' in pattern")
        c = s[i]
        if c == "]" and not first:
            i += 1
            break
        first = False
        if c == "[" and s.startswith("[:", i):
            end = s.find(":]", i + 2)
            name = s[i + 2 : end] if end != -1 else ""
            if name not in _POSIX_CLASSES:
                raise GlobError(f"unknown character class [:{name}:]")
            items.append(_POSIX_CLASSES[name])
            i = end + 2
            continue
        lo, i = _class_char(s, i)
        if i + 1 < len(s) and s[i] == "-" and s[i + 1] != "]":
            hi, i = _class_char(s, i + 1)
            if lo <= hi:
                items.append(f"{re.escape(lo)}-{re.escape(hi)}")
            continue
        items.append(re.escape(lo))
    body = "".join(items)
    if negate:
        return f"[^/{body}]", i
    return (f"(?!/)[{body}]" if body else "(?!)"), i


def _class_char(s: str, i: int) -> tuple[str, int]:
    if s[i] == "\\" and i + 1 < len(s):
        return s[i + 1], i + 2
    return s[i], i + 1


def expand_braces(pattern: str, *, limit: int = 256) -> list[str]:
    """Expand shell-style ``{a,b}`` alternatives (nested allowed) into plain globs."""
    out: list[str] = []
    pending = [pattern]
    while pending:
        p = pending.pop()
        span = _find_braces(p)
        if span is None:
            out.append(p)
        else:
            start, end, alts = span
            pending.extend(p[:start] + alt + p[end + 1 :] for alt in reversed(alts))
        if len(out) + len(pending) > limit:
            raise GlobError(f"pattern expands to more than {limit} alternatives")
    return out


def _find_braces(p: str) -> tuple[int, int, list[str]] | None:
    """The first ``{...}`` group that has a matching ``}``: (start, end, alternatives)."""
    i = 0
    while i < len(p):
        c = p[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            close = _skip_bracket(p, i)
            if close is not None:
                i = close
                continue
        if c == "{":
            found = _match_brace(p, i)
            if found is not None:
                end, alts = found
                return i, end, alts
        i += 1
    return None


def _skip_bracket(p: str, i: int) -> int | None:
    j = i + 1
    if j < len(p) and p[j] in "!^":
        j += 1
    if j < len(p) and p[j] == "]":
        j += 1
    while j < len(p):
        if p[j] == "\\":
            j += 2
            continue
        if p[j] == "]":
            return j + 1
        j += 1
    return None


def _match_brace(p: str, start: int) -> tuple[int, list[str]] | None:
    depth = 0
    alts: list[str] = []
    piece_start = start + 1
    i = start
    while i < len(p):
        c = p[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                alts.append(p[piece_start:i])
                return i, alts
        elif c == "," and depth == 1:
            alts.append(p[piece_start:i])
            piece_start = i + 1
        i += 1
    return None
