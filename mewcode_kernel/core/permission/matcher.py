"""One matcher implementation for permission rules and hook conditions.

MewCode's own forms (from the reference design), recognised by their first
character:

* ``=text``  exact equality;
* ``~regex`` a regular expression, searched (unanchored: use ``^``/``$``);
* ``!inner`` negation of any other form;
* anything else: a glob, whose meaning depends on ``style``:

  - ``"path"``: gitignore-like; ``*`` and ``?`` stay within one path
    component, ``**`` spans components, ``[...]`` is a character class and
    ``{a,b}`` gives alternatives;
  - ``"command"``: Claude Code's command patterns; ``prefix:*`` matches
    ``prefix`` alone or followed by a space and anything, ``*`` matches any
    text (a trailing `` *`` also matches the bare command), no wildcard means
    equality;
  - ``"text"``: ``fnmatch``-like; ``*`` matches any text, ``?`` one character.

Hooks can build the same matchers from their YAML shape with
``compile_match_spec({"type": "exact|regex|glob|not", "value": ..., "inner": ...})``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = [
    "CommandPattern",
    "Exact",
    "Glob",
    "MatchStyle",
    "Matcher",
    "MatcherError",
    "Not",
    "Prefix",
    "Regex",
    "compile_match_spec",
    "compile_matcher",
    "glob_to_regex",
    "has_glob_chars",
]

MatchStyle = Literal["path", "command", "text"]

_GLOB_CHARS = frozenset("*?[{")


class MatcherError(ValueError):
    """A pattern cannot be compiled (bad regex, unbalanced brackets, ...)."""


class Matcher(Protocol):
    """Something that says whether a string matches. ``pattern`` is the source text."""

    @property
    def pattern(self) -> str: ...

    def matches(self, value: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class Exact:
    """``value == text`` (case-folded on both sides when ``ignore_case``)."""

    text: str
    ignore_case: bool = False

    @property
    def pattern(self) -> str:
        return "=" + self.text

    def matches(self, value: str) -> bool:
        if self.ignore_case:
            return value.casefold() == self.text.casefold()
        return value == self.text


@dataclass(frozen=True, slots=True)
class Regex:
    """A compiled regular expression, searched in the value."""

    source: str
    regex: re.Pattern[str]

    @property
    def pattern(self) -> str:
        return "~" + self.source

    def matches(self, value: str) -> bool:
        return self.regex.search(value) is not None


@dataclass(frozen=True, slots=True)
class Not:
    """The negation of ``inner``."""

    inner: Matcher

    @property
    def pattern(self) -> str:
        return "!" + self.inner.pattern

    def matches(self, value: str) -> bool:
        return not self.inner.matches(value)


class _Lazy:
    """An anchored regular expression compiled when first needed: a config of
    thousands of rules loads without compiling them all (a translated glob
    always compiles; one with a character class is checked when made)."""

    __slots__ = ("_compiled", "expression", "flags")

    def __init__(self, expression: str, flags: int) -> None:
        self.expression = expression
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None
        if "[" in expression:  # a class like [z-a] can fail: fail now, not mid-decision
            self.compiled()

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            try:
                self._compiled = re.compile(self.expression, self.flags)
            except re.error as exc:
                raise MatcherError(f"bad pattern: {exc}") from None
        return self._compiled

    def fullmatch(self, value: str) -> bool:
        return self.compiled().fullmatch(value) is not None


@dataclass(frozen=True, slots=True)
class Glob:
    """A glob translated to an anchored regular expression (see ``glob_to_regex``)."""

    source: str
    regex: _Lazy

    @property
    def pattern(self) -> str:
        return self.source

    def matches(self, value: str) -> bool:
        return self.regex.fullmatch(value)


@dataclass(frozen=True, slots=True)
class CommandPattern:
    """Claude Code's command specifier: ``prefix:*``, ``*`` wildcards, or equality."""

    source: str
    regex: _Lazy
    wildcard: bool

    @property
    def pattern(self) -> str:
        return self.source

    def matches(self, value: str) -> bool:
        return self.regex.fullmatch(value)


@dataclass(frozen=True, slots=True)
class Prefix:
    """``value`` is ``text``, or ``text`` followed by ``sep`` and anything (no
    ``sep``: equality): the common literal rules (``Bash(git status:*)``,
    ``Read(./secrets/**)``) without a regular expression."""

    source: str
    text: str
    sep: str
    ignore_case: bool = False
    wildcard: bool = True

    @property
    def pattern(self) -> str:
        return self.source

    def matches(self, value: str) -> bool:
        text = self.text
        if self.ignore_case:
            value, text = value.casefold(), text.casefold()
        return value == text or (bool(self.sep) and value.startswith(text + self.sep))


def has_glob_chars(text: str) -> bool:
    """Whether ``text`` contains a glob metacharacter (``* ? [ {``)."""
    return any(c in _GLOB_CHARS for c in text)


def glob_to_regex(pattern: str, *, style: MatchStyle = "path") -> str:
    """The regular expression (without anchors) for a glob.

    In ``path`` style ``**`` spans directories (``a/**/b`` also matches
    ``a/b``) and ``*``/``?`` do not cross ``/``; in ``text`` style ``*``
    crosses anything. Raises ``MatcherError`` for unbalanced ``[`` or ``{``.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    one = "[^/]" if style == "path" else "."
    depth = 0
    while i < n:
        c = pattern[i]
        if c == "*":
            if style == "path" and pattern.startswith("**", i):
                j = i + 2
                at_start = i == 0 or pattern[i - 1] == "/"
                if at_start and pattern.startswith("/", j):
                    out.append("(?:.*/)?")
                    i = j + 1
                    continue
                out.append(".*")
                i = j
                continue
            out.append(one + "*")
        elif c == "?":
            out.append(one)
        elif c == "[":
            end = pattern.find(
                "]", i + 2 if pattern.startswith("[!", i) or pattern.startswith("[^", i) else i + 1
            )
            if end < 0:
                raise MatcherError("unbalanced '[' in the pattern")
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    if depth:
        raise MatcherError("unbalanced '{' in the pattern")
    return "".join(out)


def _command_pattern(text: str, ignore_case: bool) -> CommandPattern | Prefix:
    flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
    if text.endswith(":*") and "*" not in text[:-2]:
        return Prefix(text, text[:-2].rstrip(), " ", ignore_case)
    if "*" not in text:
        return Prefix(text, text, "", ignore_case, wildcard=False)
    body = text
    tail = ""
    if body.endswith(" *"):
        body, tail = body[:-2], r"(?: .*)?"
    regex = ".*".join(re.escape(chunk) for chunk in body.split("*")) + tail
    return CommandPattern(text, _Lazy(regex, flags), True)


def compile_matcher(
    pattern: str, *, style: MatchStyle = "text", ignore_case: bool = False
) -> Matcher:
    """Compile ``pattern`` (``=``, ``~``, ``!`` or a glob of ``style``).

    Raises ``MatcherError`` when the pattern is empty or does not compile.
    """
    if pattern.startswith("!"):
        return Not(compile_matcher(pattern[1:], style=style, ignore_case=ignore_case))
    if pattern.startswith("="):
        return Exact(pattern[1:], ignore_case)
    if pattern.startswith("~"):
        source = pattern[1:]
        if not source:
            raise MatcherError("empty regular expression")
        try:
            regex = re.compile(source, re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            raise MatcherError(f"bad regular expression {source!r}: {exc}") from None
        return Regex(source, regex)
    if not pattern:
        raise MatcherError("empty pattern")
    if style == "command":
        return _command_pattern(pattern, ignore_case)
    flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
    return Glob(pattern, _Lazy(glob_to_regex(pattern, style=style), flags))


def compile_match_spec(spec: Mapping[str, Any], *, style: MatchStyle = "text") -> Matcher:
    """Build a matcher from the hooks' YAML shape ``{type, value, inner}``.

    ``type`` is ``exact``, ``regex``, ``glob`` or ``not`` (``not`` wraps
    ``inner``, itself a spec or a pattern string).
    """
    kind = spec.get("type", "glob")
    if kind == "not":
        inner = spec.get("inner")
        if isinstance(inner, Mapping):
            return Not(compile_match_spec(inner, style=style))
        if isinstance(inner, str):
            return Not(compile_matcher(inner, style=style))
        raise MatcherError("a 'not' match needs an 'inner' match")
    value = spec.get("value")
    if not isinstance(value, str):
        raise MatcherError(f"a {kind!r} match needs a string 'value'")
    if kind == "exact":
        return Exact(value)
    if kind == "regex":
        return compile_matcher("~" + value)
    if kind == "glob":
        if not value:
            raise MatcherError("empty glob")
        flags = re.DOTALL
        if style == "command":
            return _command_pattern(value, False)
        return Glob(value, _Lazy(glob_to_regex(value, style=style), flags))
    raise MatcherError(f"unknown match type {kind!r} (expected exact, regex, glob or not)")
