"""Which files a search may look at: ``.gitignore`` rules and the shared walker.

Semantics (the same for ``glob``, pure-Python ``grep`` and the ripgrep flags
chosen in ``rg_engine``):

* ``.git`` and ``.mewcode`` (the agent's own sessions and settings: past
  conversations must not leak back into the context) are never entered or
  listed; hidden files are otherwise included.
* Rules come from ``.gitignore`` files in the searched directory, every
  directory below it, and its ancestors up to the *ignore top*: the nearest
  ancestor holding ``.git`` (then nested repositories start afresh), else the
  project root when the search lies inside it, else the searched directory.
* Deeper files win over shallower ones; within a file the last matching line
  wins; an excluded directory is pruned, so nothing under it comes back.
* The searched directory itself is never treated as ignored.
* Symbolic links are not followed into directories.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .globpat import GlobError, translate

__all__ = ["NEVER_SEARCHED", "IgnoreFile", "SearchScope", "parse_gitignore", "walk_files"]

GITIGNORE = ".gitignore"
NEVER_SEARCHED = frozenset({".git", ".mewcode"})
"""Names never entered or listed below the searched directory."""


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    """The rules of one ``.gitignore``; ``base`` is its directory relative to
    the ignore top, ``""`` or ending in ``/``."""

    base: str
    file_re: re.Pattern[str] | None
    dir_re: re.Pattern[str] | None
    file_neg: tuple[bool, ...]
    dir_neg: tuple[bool, ...]

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included (``!``), None: no rule matches."""
        rx, neg = (self.dir_re, self.dir_neg) if is_dir else (self.file_re, self.file_neg)
        if rx is None:
            return None
        m = rx.fullmatch(rel)
        if m is None:
            return None
        return not neg[m.lastindex or 0]


def parse_gitignore(text: str, base: str = "") -> IgnoreFile | None:
    """Compile the lines of a ``.gitignore``; None if it holds no usable rule."""
    rules: list[tuple[str, bool, bool]] = []
    for raw in text.splitlines():
        line = _rstrip_unescaped_spaces(raw)
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        dir_only = line.endswith("/")
        if dir_only:
            line = line[:-1]
        anchored = "/" in line
        line = line.removeprefix("/")
        if not line:
            continue
        try:
            rx = translate(line)
        except GlobError:
            continue  # git never matches a malformed pattern
        rules.append((rx if anchored else "(?:.*/)?" + rx, negated, dir_only))
    if not rules:
        return None
    file_rules = [r for r in rules if not r[2]]
    file_re, file_neg = _combine(file_rules)
    dir_re, dir_neg = _combine(rules)
    return IgnoreFile(base=base, file_re=file_re, dir_re=dir_re, file_neg=file_neg, dir_neg=dir_neg)


def _combine(
    rules: list[tuple[str, bool, bool]],
) -> tuple[re.Pattern[str] | None, tuple[bool, ...]]:
    """One alternation, last rule first, so the first alternative to match wins."""
    if not rules:
        return None, ()
    ordered = rules[::-1]
    rx = re.compile("|".join(f"({r[0]})" for r in ordered), re.DOTALL)
    return rx, (False, *(r[1] for r in ordered))


def _rstrip_unescaped_spaces(line: str) -> str:
    end = len(line)
    while end > 0 and line[end - 1] == " " and not (end >= 2 and line[end - 2] == "\\"):
        end -= 1
    return line[:end]


@lru_cache(maxsize=512)
def _load_cached(path: str, base: str, mtime_ns: int, size: int) -> IgnoreFile | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return parse_gitignore(fh.read(), base)
    except OSError:
        return None


def load_gitignore(directory: str, base: str) -> IgnoreFile | None:
    """The parsed ``.gitignore`` of ``directory`` (cached while unchanged)."""
    path = os.path.join(directory, GITIGNORE)
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _load_cached(path, base, st.st_mtime_ns, st.st_size)


Stack = tuple[IgnoreFile, ...]


def is_ignored(stack: Stack, rel_top: str, is_dir: bool) -> bool:
    """Decide one path (relative to the ignore top) against a stack of rule files."""
    for f in reversed(stack):
        d = f.decide(rel_top[len(f.base) :], is_dir)
        if d is not None:
            return d
    return False


@dataclass(frozen=True, slots=True)
class SearchScope:
    """Where a walk starts and which ignore rules reach it from above."""

    start: str  # absolute directory searched
    top: str  # the ignore top (an ancestor of, or equal to, start)
    git: bool  # top holds .git: nested repositories reset the rules
    prefix: str  # start relative to top, "" or ending in "/"
    ancestors: Stack  # rules from top down to start's parent

    @classmethod
    def for_dir(cls, start: Path, root: Path) -> SearchScope:
        """Scope for searching ``start``; ``root`` is the project root."""
        top, git = _find_top(start, root)
        prefix = "" if top == start else start.relative_to(top).as_posix() + "/"
        stack: list[IgnoreFile] = []
        d, rel = top, ""
        for part in start.relative_to(top).parts:
            f = load_gitignore(str(d), rel)
            if f is not None:
                stack.append(f)
            d, rel = d / part, rel + part + "/"
        return cls(str(start), str(top), git, prefix, tuple(stack))

    def dir_stack(self, parent: Stack, dirpath: str, rel_top: str, names: set[str]) -> Stack:
        """The stack in force inside ``dirpath`` given its parent's and its entries."""
        if self.git and ".git" in names:
            parent = ()  # a nested repository: outer rules stop here
        if GITIGNORE in names:
            f = load_gitignore(dirpath, rel_top)
            if f is not None:
                return (*parent, f)
        return parent

    def checker(self) -> _PathChecker:
        """A cached ``is_ignored(rel_from_start)`` for paths found some other way."""
        return _PathChecker(self)


def _find_top(start: Path, root: Path) -> tuple[Path, bool]:
    for d in (start, *start.parents):
        if os.path.lexists(d / ".git"):
            return d, True
    if start == root or root in start.parents:
        return root, False
    return start, False


class _PathChecker:
    def __init__(self, scope: SearchScope) -> None:
        self._scope = scope
        self._stacks: dict[str, Stack | None] = {}

    def _stack(self, rel: str) -> Stack | None:
        """Stack inside start/rel ("" or ending in "/"), None if the dir is ignored."""
        if rel in self._stacks:
            return self._stacks[rel]
        scope = self._scope
        if rel == "":
            parent: Stack | None = scope.ancestors
        else:
            head = rel[:-1].rpartition("/")[0]
            parent = self._stack(head + "/" if head else "")
            if parent is not None and (
                rel[:-1].rpartition("/")[2] in NEVER_SEARCHED
                or is_ignored(parent, scope.prefix + rel[:-1], True)
            ):
                parent = None
        result: Stack | None = None
        if parent is not None:
            dirpath = os.path.join(scope.start, rel)
            names = {n for n in (GITIGNORE, ".git") if os.path.lexists(os.path.join(dirpath, n))}
            result = scope.dir_stack(parent, dirpath, scope.prefix + rel, names)
        self._stacks[rel] = result
        return result

    def __call__(self, rel: str) -> bool:
        head, _, name = rel.rpartition("/")
        stack = self._stack(head + "/" if head else "")
        if stack is None or name in NEVER_SEARCHED:
            return True
        return is_ignored(stack, self._scope.prefix + rel, False)


def walk_files(
    scope: SearchScope,
    *,
    keep_dir: Callable[[str], bool] | None = None,
    follow_file_links: bool = False,
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Yield ``(path relative to start, entry)`` for every file not ignored.

    ``keep_dir(rel_dir)`` may prune more directories (e.g. ones a glob cannot
    reach). Symlinks to files are yielded only with ``follow_file_links``.
    """
    prune = keep_dir
    todo: list[tuple[str, str, Stack]] = [(scope.start, "", scope.ancestors)]
    while todo:
        dirpath, rel, parent = todo.pop()
        try:
            with os.scandir(dirpath) as it:
                entries = list(it)
        except OSError:
            continue
        names = {e.name for e in entries}
        stack = scope.dir_stack(parent, dirpath, scope.prefix + rel, names)
        for e in entries:
            name = e.name
            if name in NEVER_SEARCHED:
                continue
            erel = rel + name
            try:
                if e.is_dir(follow_symlinks=False):
                    if stack and is_ignored(stack, scope.prefix + erel, True):
                        continue
                    if prune is not None and not prune(erel):
                        continue
                    todo.append((e.path, erel + "/", stack))
                    continue
                if e.is_file(follow_symlinks=False) or (
                    follow_file_links and e.is_symlink() and e.is_file()
                ):
                    if stack and is_ignored(stack, scope.prefix + erel, False):
                        continue
                    yield erel, e
            except OSError:
                continue
