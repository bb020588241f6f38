"""Permission rules: ``Tool`` or ``Tool(specifier)``, as Claude Code writes them.

Tool names: Claude's (``Read``, ``Edit``, ``Write``, ``Bash``, ``Agent``,
``Skill``, ``WebFetch``, ...) or MewCode's (``read_file``, ``bash``, ...);
``mcp__server`` (every tool of a server), ``mcp__server__tool`` and
``mcp__server__*``. Rules naming tools MewCode does not have are kept and
simply never match.

Specifiers, by family:

* paths (``Read``/``Edit``/``Write``/...): gitignore-style globs. ``//p`` is
  the absolute path ``/p``; ``~/p`` is below the home directory; ``/p``,
  ``./p`` and any pattern with an inner ``/`` are anchored to the project
  root (MewCode's choice for ``/p``: the project root, not the file system
  root); a pattern without ``/`` (``*.env``) matches at any depth below the
  root. A pattern naming a directory also covers everything inside it.
* commands (``Bash``): ``prefix:*`` (word-boundary prefix), ``*`` wildcards,
  or an exact command; see ``matcher.CommandPattern``.
* Python code (``RunPython``): ``prefix:*`` or a glob over each statement;
  see ``python_code``.
* everything else: a ``text`` glob (``Agent(Explore)``, ``Skill(name)``).

MewCode's matcher forms work in any specifier: ``=exact``, ``~regex``,
``!not``. In path and command specifiers ``~/`` is the home anchor, so a
regex starting with ``/`` must be written ``~\\/...``. A path regex is tested
against the path relative to the project root (or the absolute path when
outside it).
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal

from .matcher import (
    Exact,
    Glob,
    Matcher,
    MatcherError,
    Not,
    Prefix,
    _Lazy,
    compile_matcher,
    glob_to_regex,
    has_glob_chars,
)
from .python_match import python_matcher

__all__ = [
    "BEHAVIORS",
    "BUILTIN",
    "SESSION",
    "Behavior",
    "BrokenRule",
    "Rule",
    "RuleError",
    "RuleFamily",
    "RuleProblem",
    "RuleSet",
    "RuleSource",
    "parse_rule",
    "path_rule_prefix",
]

Behavior = Literal["allow", "ask", "deny"]
BEHAVIORS: tuple[Behavior, ...] = ("deny", "ask", "allow")
RuleFamily = Literal["read", "edit", "command", "python", "agent", "skill", "mcp", "other"]

# Claude Code's rule vocabulary: how a rule naming one of these reads its
# specifier. A rule naming a tool directly (``read_file(...)``, ``RunPython(...)``)
# reads it the way that tool's own ``family`` says, decided when it is matched.
# ``RunPython`` is MewCode's own (``run_python``, inside a kernel).
_VOCABULARY: dict[str, RuleFamily] = {
    **dict.fromkeys(("Read", "Glob", "Grep", "LS", "NotebookRead"), "read"),
    **dict.fromkeys(("Edit", "Write", "MultiEdit", "NotebookEdit"), "edit"),
    "Bash": "command",
    "RunPython": "python",
    "Agent": "agent",
    "Task": "agent",
    "Skill": "skill",
}
_RULE = re.compile(r"(?P<tool>[A-Za-z_][A-Za-z0-9_\-]*\*?)(?:\((?P<spec>.*)\))?", re.DOTALL)
_SHELL_PREFIXES = ("do ", "then ", "else ", "{ ", "! ")
_SHELL_SYNTAX = frozenset({"done", "fi", "esac", "}", "then", "do", "else"})


class RuleError(ValueError):
    """A rule string cannot be parsed."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleSource:
    """Where rules came from. ``base`` anchors relative path patterns
    (``None``: the session's project root)."""

    label: str
    path: Path | None = None
    base: Path | None = None


SESSION = RuleSource(label="session")
BUILTIN = RuleSource(label="built-in")


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleProblem:
    """A rule that was skipped (``error``) or kept with a caveat (``warning``)."""

    source: str
    text: str
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        what = "skipped" if self.severity == "error" else "kept"
        if not self.text:
            return f"{self.source}: {self.message}"
        return f"{self.source}: permission rule {self.text!r} {what}: {self.message}"


_LEADING_TOOL = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_\-]*\*?)")


@dataclass(frozen=True, kw_only=True, slots=True)
class BrokenRule:
    """A deny rule that could not be read (or a file of rules that could not
    be), kept so that what it may have protected asks instead of opening up.

    ``tool`` is the tool name it starts with (``None``: unknown, so it may
    cover any call)."""

    text: str
    source: RuleSource
    tool: str | None
    message: str

    @classmethod
    def of(cls, text: object, source: RuleSource, message: str) -> BrokenRule:
        m = _LEADING_TOOL.match(text) if isinstance(text, str) else None
        shown = text if isinstance(text, str) else repr(text)
        return cls(text=shown, source=source, tool=m.group(1) if m else None, message=message)

    def covers(
        self, tool: str, names: frozenset[str], family: RuleFamily, reads_paths: bool
    ) -> bool:
        """Whether a call of ``tool`` (known to rules as ``names``, of rule
        ``family``) may be one this rule was meant to deny."""
        if self.tool is None:
            return True
        if self.tool.startswith("mcp__"):
            return tool.startswith(self.tool.rstrip("*"))
        if self.tool in names:
            return True
        meant = _family(self.tool)
        if meant == "read":  # commands and edits read files too
            return family in ("read", "command") or reads_paths
        if meant == "edit":
            return family in ("edit", "command")
        return meant is not None and meant == family

    @property
    def reason(self) -> str:
        return (
            f"the deny rule {self.text!r} in {self.source.label} could not be read "
            f"({self.message}); what it may cover asks until it is fixed"
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class Rule:
    """One parsed rule. ``specifier`` is ``None`` when the rule covers every call.
    ``family`` is ``None`` for a rule naming a tool outside Claude Code's
    vocabulary: the tool it is matched against says how to read it."""

    text: str
    behavior: Behavior
    tool: str
    specifier: str | None
    source: RuleSource
    family: RuleFamily | None
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.text

    def covers(self, tool_name: str, names: frozenset[str]) -> bool:
        """Whether this rule names the tool ``tool_name``, known to rules as
        ``names`` (its own name and its aliases), or matches it as an MCP form."""
        if self.tool in names:
            return True
        if self.tool.startswith("mcp__") and tool_name.startswith("mcp__"):
            if self.tool.endswith("*"):
                return tool_name.startswith(self.tool[:-1])
            return self.tool.count("__") == 1 and tool_name.startswith(self.tool + "__")
        return False

    def family_in(self, families: Mapping[str, RuleFamily]) -> RuleFamily:
        """The family this rule's specifier is read in, given the families of
        the tools it may name (rule name -> family)."""
        return self.family or families.get(self.tool, "other")

    def command_matcher(self) -> Matcher:
        assert self.specifier is not None
        return _command_matcher(_normalise_command_spec(self.specifier)[0])

    def text_matcher(self) -> Matcher:
        assert self.specifier is not None
        return _text_matcher(self.specifier)

    def path_matcher(self, root: str, home: str, *, ignore_case: bool = False) -> Matcher:
        """The specifier as a matcher over absolute resolved paths."""
        assert self.specifier is not None
        base = _real_base(os.fspath(self.source.base)) if self.source.base else root
        return _path_matcher(self.specifier, base, home, ignore_case)


@cache
def _real_base(base: str) -> str:
    """A rule file's base directory, resolved once (every decision asks)."""
    return os.path.realpath(base)


def _family(tool: str) -> RuleFamily | None:
    if tool.startswith("mcp__"):
        return "mcp"
    return _VOCABULARY.get(tool)


# Matchers are cached without a bound: a bounded cache smaller than the rule
# set is emptied by every decision that walks the rules (thousands of rules
# made each decision recompile them all); there is one entry per rule text.
@cache
def _command_matcher(spec: str) -> Matcher:
    return compile_matcher(spec, style="command")


@cache
def _text_matcher(spec: str) -> Matcher:
    return compile_matcher(spec, style="text")


@dataclass(frozen=True, slots=True)
class _RelRegex:
    """A ``~regex`` path specifier, tested on the path relative to ``base``."""

    base: str
    inner: Matcher
    pattern: str = field(default="")

    def matches(self, value: str) -> bool:
        if value.startswith(self.base.rstrip("/") + "/"):
            value = value[len(self.base.rstrip("/")) + 1 :]
        return self.inner.matches(value)


def _anchor(spec: str, base: str, home: str) -> tuple[str, bool]:
    """Absolute glob for a path specifier, and whether it matches at any depth."""
    if spec.startswith("//"):
        return "/" + spec.lstrip("/"), False
    if spec == "~" or spec.startswith("~/"):
        return home + spec[1:], False
    if spec.startswith("./"):
        return posixpath.join(base, spec[2:]), False
    if spec.startswith("/"):
        return posixpath.join(base, spec.lstrip("/")), False
    if "/" in spec.rstrip("/"):
        return posixpath.join(base, spec), False
    return posixpath.join(base, "**", spec), True


def _literal_dir(glob: str) -> tuple[str, str]:
    """Split an absolute glob into its resolved literal directory and the rest."""
    names = glob.split("/")
    cut = next((i for i, n in enumerate(names) if has_glob_chars(n)), len(names))
    literal = "/".join(names[:cut]) or "/"
    rest = "/".join(names[cut:])
    return os.path.realpath(literal), rest


@cache
def _path_matcher(spec: str, base: str, home: str, ignore_case: bool) -> Matcher:
    if spec.startswith("!"):
        return Not(_path_matcher(spec[1:], base, home, ignore_case))
    if spec.startswith("~") and not (spec == "~" or spec.startswith("~/")):
        inner = compile_matcher(spec, ignore_case=ignore_case)
        return _RelRegex(base, inner, spec)
    exact = spec.startswith("=")
    body = unicodedata.normalize("NFC", spec[1:] if exact else spec)
    if not body:
        raise MatcherError("empty path pattern")
    if exact:
        absolute, _ = _anchor(body, base, home)
        return Exact(os.path.realpath(absolute), ignore_case)
    absolute, _ = _anchor(body, base, home)
    literal, rest = _literal_dir(absolute.rstrip("/") or "/")
    while rest == "**" or rest.endswith("/**"):
        rest = rest[:-3] if rest != "**" else ""  # "dir/**" also covers "dir" itself
    if not rest and literal != "/":
        return Prefix(spec, literal.rstrip("/"), "/", ignore_case)
    regex = re.escape(literal.rstrip("/"))
    if rest:
        regex += glob_to_regex("/" + rest, style="path")
    regex += "(?:/.*)?" if literal != "/" or rest else "(?:.*)"
    flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
    return Glob(spec, _Lazy(regex, flags))


def path_rule_prefix(rule: Rule, root: str, home: str) -> str:
    """The directory below which ``rule``'s path specifier can match (``/`` if unknown)."""
    spec = rule.specifier
    if spec is None or (spec.startswith(("!", "~")) and not spec.startswith("~/")):
        return "/"
    base = rule.source.base
    return _spec_prefix(spec, os.fspath(base) if base else root, home)


@cache
def _spec_prefix(spec: str, base: str, home: str) -> str:
    absolute, _ = _anchor(spec.removeprefix("="), _real_base(base), home)
    literal, _ = _literal_dir(absolute.rstrip("/") or "/")
    return literal


def _normalise_command_spec(spec: str) -> tuple[str, tuple[str, ...]]:
    """Collapse whitespace and drop shell keywords MewCode strips from commands too."""
    if spec.startswith(("=", "~", "!")) and not spec.startswith("~/"):
        return spec, ()
    text = " ".join(spec.split()) if '"' not in spec and "'" not in spec else spec.strip()
    notes: list[str] = []
    for prefix in _SHELL_PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix) :].lstrip()
            notes.append(f"the shell keyword {prefix.strip()!r} is dropped before matching")
    if text.rstrip(":*").strip() in _SHELL_SYNTAX or text in ("for:*", "while:*", "if:*"):
        notes.append("this is shell syntax, not a command; MewCode handles it itself")
    if any(op in text for op in ("&&", "||", ";", "|")) and ("*" in text):
        notes.append("a wildcard rule holding shell operators never matches one command")
    return text, tuple(notes)


def parse_rule(text: object, behavior: Behavior, source: RuleSource) -> Rule:
    """Parse one rule string. Raises ``RuleError`` with a readable message."""
    if not isinstance(text, str):
        raise RuleError(f"expected a string, got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise RuleError("the rule is empty")
    m = _RULE.fullmatch(stripped)
    if m is None:
        raise RuleError("expected Tool or Tool(specifier), e.g. Bash(npm test:*) or Read(./src/**)")
    tool, spec = m["tool"], m["spec"]
    if tool.endswith("*") and not tool.startswith("mcp__"):
        raise RuleError("a wildcard in the tool name is only supported for MCP (mcp__server__*)")
    family = _family(tool)
    notes: tuple[str, ...] = ()
    if spec is not None:
        if not spec.strip():
            raise RuleError(f"empty specifier; write {tool} alone to cover every call")
        spec = spec.strip()
        if family == "command":
            spec, notes = _normalise_command_spec(spec)
        if spec in ("*", "**") and family not in ("read", "edit", None):
            spec = None
    try:
        if spec is not None:
            if family in ("read", "edit"):
                _path_matcher(spec, "/nonexistent-base", "/nonexistent-home", False)
            elif family == "command":
                _command_matcher(spec)
            elif family == "python":
                python_matcher(spec)
            else:
                _text_matcher(spec)
    except MatcherError as exc:
        raise RuleError(str(exc)) from None
    return Rule(
        text=stripped, behavior=behavior, tool=tool, specifier=spec, source=source,
        family=family, notes=notes,
    )  # fmt: skip


class RuleSet:
    """Rules in the order they were added, the problems met loading them, and
    the deny rules that could not be read (``broken``: they fail closed)."""

    def __init__(
        self,
        rules: Iterable[Rule] = (),
        problems: Iterable[RuleProblem] = (),
        broken: Iterable[BrokenRule] = (),
    ) -> None:
        self.rules: list[Rule] = []
        self._seen: set[Rule] = set()
        self.problems: list[RuleProblem] = list(problems)
        self.broken: list[BrokenRule] = list(broken)
        for rule in rules:
            self.add(rule)

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def of(self, behavior: Behavior) -> list[Rule]:
        """The rules with ``behavior``."""
        return [r for r in self.rules if r.behavior == behavior]

    def add(self, rule: Rule) -> None:
        if rule not in self._seen:
            self._seen.add(rule)
            self.rules.append(rule)

    def remove(self, rule: Rule) -> None:
        self._seen.discard(rule)
        self.rules = [r for r in self.rules if r != rule]

    def add_text(self, text: object, behavior: Behavior, source: RuleSource) -> Rule | None:
        """Parse and add ``text``; a bad rule is recorded in ``problems`` and skipped."""
        try:
            rule = parse_rule(text, behavior, source)
        except RuleError as exc:
            shown = text if isinstance(text, str) else repr(text)
            message = str(exc)
            if behavior == "deny":
                broken = BrokenRule.of(text, source, message)
                self.broken.append(broken)
                covered = f"calls of {broken.tool}" if broken.tool else "every call"
                message += f"; {covered} will ask until it is fixed (a deny rule fails closed)"
            self.problems.append(RuleProblem(source=source.label, text=shown, message=message))
            return None
        for note in rule.notes:
            self.problems.append(
                RuleProblem(source=source.label, text=rule.text, message=note, severity="warning")
            )
        self.add(rule)
        return rule

    def extend(self, other: RuleSet) -> None:
        """Append the rules and problems of ``other``."""
        for rule in other.rules:
            self.add(rule)
        self.problems.extend(other.problems)
        self.broken.extend(other.broken)

    def fail_closed(self, source: RuleSource, message: str) -> None:
        """A whole file of rules could not be read: every call asks until it is fixed."""
        self.broken.append(
            BrokenRule(text="(the whole file)", source=source, tool=None, message=message)
        )
        self.problems.append(
            RuleProblem(
                source=source.label,
                text="",
                message=f"{message}; it may hold deny rules, so every call asks until it is fixed",
            )
        )

    def copy(self) -> RuleSet:
        return RuleSet(self.rules, self.problems, self.broken)
