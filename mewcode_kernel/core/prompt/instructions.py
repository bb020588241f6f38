"""Instruction files: ``MEWCODE.md``, ``AGENTS.md`` and ``CLAUDE.md`` in the
project root and each parent up to the git root, after the user's
``~/.mewcode/MEWCODE.md``; general first, nearest the project last.

A file may import others with ``@path`` (relative to the importing file, or
``~/...``, or absolute), up to ``MAX_IMPORT_DEPTH`` levels; each file is
included once, so cycles end. Imports inside code (fenced blocks or
backticks) are ignored. The whole text is capped at ``MAX_INSTRUCTION_CHARS``;
what goes over is cut and a warning says so.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..userdirs import mewcode_home

__all__ = [
    "INSTRUCTION_FILES",
    "MAX_IMPORT_DEPTH",
    "MAX_INSTRUCTION_CHARS",
    "InstructionFile",
    "Instructions",
    "find_git_root",
    "load_instructions",
]

INSTRUCTION_FILES = ("MEWCODE.md", "AGENTS.md", "CLAUDE.md")
USER_INSTRUCTIONS = Path(".mewcode") / "MEWCODE.md"
MAX_IMPORT_DEPTH = 4
MAX_INSTRUCTION_CHARS = 40_000
_MAX_FILE_BYTES = 1 << 20

_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:~/|\.{1,2}/|/)?[\w.\-/~]*[\w\-/])")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True, kw_only=True, slots=True)
class InstructionFile:
    """One file's text as included. ``label`` is how the prompt names it."""

    path: Path
    label: str
    text: str
    imported_by: str | None = None
    depth: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class Instructions:
    """The instruction files found, in prompt order, and any problems met."""

    files: tuple[InstructionFile, ...] = ()
    warnings: tuple[str, ...] = ()
    total_chars: int = 0
    truncated: bool = False

    def render(self) -> str:
        """The system-prompt section (empty when there are no files)."""
        if not self.files:
            return ""
        parts = [
            "# Instructions from the user and the project\n\n"
            "Follow the instruction files below. When they disagree, the ones listed later "
            "(nearer the project) win over earlier, more general ones."
        ]
        for f in self.files:
            source = f" (imported by {f.imported_by})" if f.imported_by else ""
            parts.append(f"## {f.label}{source}\n\n{f.text.strip()}")
        return "\n\n".join(parts)


def find_git_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding ``.git``."""
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return d
    return None


def _project_dirs(root: Path) -> list[Path]:
    git_root = find_git_root(root)
    if git_root is None:
        return [root]
    dirs = [root]
    for d in root.parents:
        if d == git_root or git_root in d.parents:
            dirs.append(d)
        if d == git_root:
            break
    return list(reversed(dirs))


def _label(path: Path, root: Path, home: Path) -> str:
    """``path`` as the prompt shows it: relative to the root (``../AGENTS.md``
    for a parent up to the git root), else under ``~/``, else absolute."""
    git_root = find_git_root(root) or root
    if path.is_relative_to(git_root):
        return Path(os.path.relpath(path, root)).as_posix()
    if path.is_relative_to(home):
        return "~/" + path.relative_to(home).as_posix()
    return str(path)


def _imports(text: str) -> list[str]:
    """``@path`` references outside code, in order."""
    found: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for m in _IMPORT.finditer(_INLINE_CODE.sub(" ", line)):
            ref = m.group(1).rstrip(".")
            if "/" in ref or "." in ref:
                found.append(ref)
    return found


@dataclass(kw_only=True)
class _Loader:
    root: Path
    home: Path
    cap: int
    seen: set[str] = field(default_factory=set)
    files: list[InstructionFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    total: int = 0
    truncated: bool = False

    def add(self, path: Path, *, by: InstructionFile | None = None, ref: str = "") -> None:
        depth = by.depth + 1 if by else 0
        real = os.path.realpath(path)
        if real in self.seen:
            return
        if not os.path.isfile(real):
            if by is not None:
                self.warnings.append(f"{by.label}: imported file @{ref} was not found")
            return
        if depth > MAX_IMPORT_DEPTH:
            self.warnings.append(
                f"{by.label if by else path}: @{ref} not imported (imports nest at most "
                f"{MAX_IMPORT_DEPTH} deep)"
            )
            return
        self.seen.add(real)
        try:
            with open(real, "rb") as f:
                raw = f.read(_MAX_FILE_BYTES + 1)
        except OSError as exc:
            self.warnings.append(
                f"{_label(path, self.root, self.home)}: unreadable ({exc.strerror})"
            )
            return
        text = raw[:_MAX_FILE_BYTES].decode("utf-8", errors="replace")
        label = _label(path, self.root, self.home)
        if not text.strip():
            return
        self.total += len(text)
        room = self.cap - sum(len(f.text) for f in self.files)
        if room <= 0:
            self.truncated = True
            return
        kept = text if len(text) <= room else text[:room] + "\n[... cut: over the size limit]"
        self.truncated |= len(text) > room
        entry = InstructionFile(
            path=Path(real),
            label=label,
            text=kept,
            imported_by=by.label if by else None,
            depth=depth,
        )
        self.files.append(entry)
        for ref in _imports(text):
            self.add(self._resolve(ref, path.parent), by=entry, ref=ref)

    def _resolve(self, ref: str, base: Path) -> Path:
        if ref.startswith("~/"):
            return self.home / ref[2:]
        candidate = Path(ref)
        return candidate if candidate.is_absolute() else base / candidate


def load_instructions(
    root: Path, *, home: Path | None = None, max_chars: int = MAX_INSTRUCTION_CHARS
) -> Instructions:
    """Find and read the instruction files of ``root`` (and ``home``'s)."""
    state = mewcode_home(home)
    home = home if home is not None else Path.home()
    loader = _Loader(root=root, home=home, cap=max_chars)
    if state is not None:
        loader.add(state / USER_INSTRUCTIONS.name)
    for d in _project_dirs(root):
        for name in INSTRUCTION_FILES:
            loader.add(d / name)
    warnings = list(loader.warnings)
    if loader.truncated:
        warnings.append(
            f"instruction files hold {loader.total:,} characters, over the "
            f"{max_chars:,} limit; the rest was cut from the system prompt. Shorten them or "
            "split what is rarely needed into files the agent can read on demand."
        )
    return Instructions(
        files=tuple(loader.files),
        warnings=tuple(warnings),
        total_chars=loader.total,
        truncated=loader.truncated,
    )
