"""A small POSIX-shell lexer: words (with their raw text and unquoted value),
operators, redirections, and the constructs whose effect cannot be read from
the text (``$(...)``, backticks, process substitution, ANSI-C quotes).

It does not execute or expand anything. Whatever it cannot follow is
reported in ``Lexed.opaque`` so callers can refuse to auto-allow it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Lexed", "Op", "Word", "lex"]

SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&", "\n", ";;", ";&", ";;&"})
_REDIRECT_OPS = ("&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<&", "<>", ">", "<")
_MAX_LEN = 100_000
# ${NAME}, ${1}, ${#}, ${@}: a plain parameter. Anything else inside ${...}
# (prompt expansion @P, substrings and offsets, subscripts, indirection,
# replacement) can evaluate arithmetic or expand code stored in a variable.
_PLAIN_BRACED = re.compile(r"\$\{(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[#?$!@*-])\}")


@dataclass(slots=True)
class Word:
    """A shell word: ``raw`` as written, ``value`` with quotes and escapes removed."""

    raw: str
    value: str
    expands: bool = False  # contains an unquoted/double-quoted ``$`` expansion
    quoted: bool = False
    globs: bool = False  # holds an unquoted ``*``, ``?`` or ``[``
    subs: list[str] = field(default_factory=list)  # inner texts of $(...), `...`, <(...)


@dataclass(frozen=True, slots=True)
class Op:
    """An operator: a separator, ``(``/``)``, or a redirection (``fd`` kept)."""

    text: str
    fd: str = ""

    @property
    def is_redirect(self) -> bool:
        return self.text in _REDIRECT_OPS


@dataclass(slots=True)
class Lexed:
    tokens: list[Word | Op] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)
    # substitutions in here-document bodies (those in words are in ``Word.subs``)
    substitutions: list[str] = field(default_factory=list)


class _Lexer:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.out = Lexed()
        self.heredocs: list[tuple[str, bool, bool]] = []  # (delimiter, strip_tabs, expands)

    def flag(self, reason: str) -> None:
        if reason not in self.out.opaque:
            self.out.opaque.append(reason)

    def run(self) -> Lexed:
        if len(self.s) > _MAX_LEN:
            self.flag("could not analyse: the command is too long")
            return self.out
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2
            elif c in " \t\r":
                self.i += 1
            elif c == "\n":
                self.out.tokens.append(Op("\n"))
                self.i += 1
                self.read_heredocs()
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = len(s) if end < 0 else end
            elif c in "();|&<>":
                self.operator("")
            else:
                self.word()
        if self.heredocs:
            self.flag("could not analyse: a here-document is not terminated")
        return self.out

    def operator(self, fd: str) -> None:
        s, i = self.s, self.i
        if s.startswith(("<(", ">("), i):
            self.flag("process substitution <(...) / >(...)")
            inner, self.i = self.balanced(i + 2)
            raw = s[i : self.i]
            self.out.tokens.append(Word(raw=raw, value=raw, expands=True, subs=[inner]))
            return
        for op in (*_REDIRECT_OPS, ";;&", ";;", ";&", "&&", "||", "|&", "(", ")", ";", "|", "&"):
            if s.startswith(op, i):
                self.i = i + len(op)
                self.out.tokens.append(Op(op, fd))
                if op in ("<<", "<<-"):
                    self.queue_heredoc(strip_tabs=op == "<<-")
                return
        raise AssertionError("unreachable")  # pragma: no cover

    def queue_heredoc(self, *, strip_tabs: bool) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t":
            self.i += 1
        start = len(self.out.tokens)
        self.word()
        if len(self.out.tokens) == start:
            self.flag("could not analyse: a here-document has no delimiter")
            return
        delim = self.out.tokens[-1]
        assert isinstance(delim, Word)
        self.heredocs.append((delim.value, strip_tabs, not delim.quoted))

    def read_heredocs(self) -> None:
        s = self.s
        for delim, strip_tabs, expands in self.heredocs:
            body: list[str] = []
            while True:
                if self.i >= len(s):
                    self.flag("could not analyse: a here-document is not terminated")
                    break
                end = s.find("\n", self.i)
                line = s[self.i :] if end < 0 else s[self.i : end]
                self.i = len(s) if end < 0 else end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delim:
                    break
                body.append(line)
            text = "\n".join(body)
            if expands and ("$(" in text or "`" in text):
                self.flag("command substitution inside a here-document")
                self.out.substitutions.append(text)
        self.heredocs.clear()

    def balanced(self, start: int) -> tuple[str, int]:
        """Inner text of a ``(...)`` group starting after ``(``; quotes respected."""
        s, i, depth = self.s, start, 1
        while i < len(s):
            c = s[i]
            if c == "\\":
                i += 2
                continue
            if c == "'":
                end = s.find("'", i + 1)
                if end < 0:
                    break
                i = end + 1
                continue
            if c == '"':
                i = self.skip_double(i + 1)
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return s[start:i], i + 1
            i += 1
        self.flag("could not analyse: an unbalanced parenthesis")
        return s[start:], len(s)

    def skip_double(self, i: int) -> int:
        s = self.s
        while i < len(s):
            if s[i] == "\\":
                i += 2
                continue
            if s[i] == '"':
                return i + 1
            if s.startswith("$(", i):
                _, i = self.balanced(i + 2)
                continue
            i += 1
        return len(s)

    def dollar(self, raw_start: int, value: list[str], word: Word) -> None:
        s, i = self.s, self.i
        if s.startswith("$((", i):
            self.flag("arithmetic expansion $((...))")
            inner, self.i = self.balanced(i + 2)
            value.append(s[i : self.i])
        elif s.startswith("$(", i):
            self.flag("command substitution $(...)")
            inner, self.i = self.balanced(i + 2)
            word.subs.append(inner)
            value.append(s[i : self.i])
        elif s.startswith("$'", i):
            self.flag("ANSI-C quoting $'...'")
            end = i + 2
            while end < len(s) and s[end] != "'":
                end += 2 if s[end] == "\\" else 1
            self.i = min(end + 1, len(s))
            value.append(s[i : self.i])
            word.quoted = True
        elif s.startswith("$[", i):
            self.flag("arithmetic expansion $[...]")
            end = s.find("]", i)
            self.i = len(s) if end < 0 else end + 1
            value.append(s[i : self.i])
        elif s.startswith("${", i):
            end = s.find("}", i)
            self.i = len(s) if end < 0 else end + 1
            body = s[i : self.i]
            if "$(" in body or "`" in body or "$((" in body:
                self.flag("command substitution inside ${...}")
                word.subs.append(body[2:-1])
            elif not _PLAIN_BRACED.fullmatch(body):
                self.flag(
                    f"the expansion {body[:40]} (only plain $NAME and ${{NAME}} can be checked)"
                )
            value.append(body)
        else:
            value.append("$")
            self.i += 1
            if self.i < len(s) and s[self.i] == '"':
                return  # $"..." is a locale string: the quote is read next
        word.expands = True

    def backtick(self, value: list[str], word: Word) -> None:
        s, i = self.s, self.i
        self.flag("command substitution `...`")
        end = i + 1
        while end < len(s) and s[end] != "`":
            end += 2 if s[end] == "\\" else 1
        if end >= len(s):
            self.flag("could not analyse: an unterminated backtick")
        word.subs.append(s[i + 1 : end].replace("\\`", "`"))
        self.i = min(end + 1, len(s))
        value.append(s[i : self.i])

    def word(self) -> None:
        s = self.s
        start = self.i
        value: list[str] = []
        word = Word(raw="", value="")
        while self.i < len(s):
            c = s[self.i]
            if c in " \t\r\n();|&":
                break
            if c in "<>":
                digits = "".join(value)
                if digits.isdigit() and not word.quoted and self.i - start == len(digits):
                    self.operator(digits)
                    return
                if s.startswith(("<(", ">("), self.i):
                    self.flag("process substitution <(...) / >(...)")
                break
            if c == "\\":
                if s.startswith("\\\n", self.i):
                    self.i += 2
                    continue
                value.append(s[self.i + 1 : self.i + 2])
                word.quoted = True
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    self.flag("could not analyse: an unterminated quote")
                    end = len(s)
                value.append(s[self.i + 1 : end])
                word.quoted = True
                self.i = end + 1
            elif c == '"':
                self.double(value, word)
            elif c == "$":
                self.dollar(start, value, word)
            elif c == "`":
                self.backtick(value, word)
            else:
                if c in "*?[":
                    word.globs = True
                value.append(c)
                self.i += 1
        word.raw = s[start : self.i]
        word.value = "".join(value)
        self.out.tokens.append(word)

    def double(self, value: list[str], word: Word) -> None:
        s = self.s
        word.quoted = True
        self.i += 1
        while self.i < len(s):
            c = s[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in '"\\$`\n':
                if s[self.i + 1] != "\n":
                    value.append(s[self.i + 1])
                self.i += 2
            elif c == "$":
                self.dollar(self.i, value, word)
            elif c == "`":
                self.backtick(value, word)
            else:
                value.append(c)
                self.i += 1
        self.flag("could not analyse: an unterminated quote")


def lex(text: str) -> Lexed:
    """Tokenise ``text`` without expanding anything."""
    return _Lexer(text).run()
