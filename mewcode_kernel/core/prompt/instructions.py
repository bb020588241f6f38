"""Instruction files: ``MEWCODE.md``, ``AGENTS.md`` and ``CLAUDE.md`` in the
project root and each parent up to the git root, after the user's
``~/.mewcode/MEWCODE.md``; general first, nearest the project last.

A file may import others with ``@path`` (relative to the importing file, or
``~/...``, or absolute), up to ``MAX_IMPORT_DEPTH`` levels; each file is
included once, so cycles end. Imports inside code (fenced blocks or
backticks) are ignored. The whole text is capped at ``MAX_INSTRUCTION_CHARS``;
what goes over is cut and a warning says so.

What a file may import is ``import_scope``'s rule, judged on the resolved
real path: the project's files stay inside the project root (the parents'
files up to the git root too: they are read because they sit above the
project, but their imports may not reach the rest of the repository, which
for a dotfiles repository is the whole home directory); the user's own file
may also reach the MewCode folder. A refused import stays in the text as the
literal ``@path`` and a warning names the file, the import and why. A
project's instruction file that is itself a link is followed only to where
its imports could go. Only regular files are read (a FIFO or device never
blocks the load), at most 1 MiB of each.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..fs.read_regular import read_regular_file
from ..userdirs import mewcode_home
from .import_scope import ImportScope, Origin

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
#: imports looked at per load, and warnings listed: a file of a million
#: ``@x`` must neither stall the load nor bury the user in notices
_MAX_IMPORTS = 500
_MAX_WARNINGS = 50

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
    #: whose file it is (``import_scope``): what its own imports may reach
    origin: Origin = "project"


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
    scope: ImportScope
    cap: int
    seen: set[str] = field(default_factory=set)
    files: list[InstructionFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    total: int = 0
    truncated: bool = False
    imports: int = 0
    unlisted: int = 0

    def warn(self, message: str) -> None:
        if len(self.warnings) < _MAX_WARNINGS:
            self.warnings.append(message)
        else:
            self.unlisted += 1

    def add_found(self, path: Path, origin: Origin) -> None:
        """One of the instruction files looked for in its usual place. The
        user's own may be a link anywhere (a dotfiles folder); the project's
        are read where they stand, or through a link only to where the
        project's imports may go."""
        if not os.path.lexists(path):
            return
        real = os.path.realpath(path)
        label = _label(path, self.root, self.home)
        if origin == "user":
            why = self.scope.system(real)
        elif real != os.path.join(os.path.realpath(path.parent), path.name):
            why = self.scope.refusal(real, "project")
        else:
            why = None
        if why is not None:
            self.warn(f"{label} links to {_shown(real, self.home)}; not read: {why}")
            return
        if os.path.isdir(real):
            return
        self._read(path, real, label, origin, by=None, what=label)

    def add_import(self, ref: str, by: InstructionFile, base: Path) -> None:
        """``@ref`` found in ``by`` (whose folder is ``base``)."""
        self.imports += 1
        if self.imports > _MAX_IMPORTS:
            return  # said once, after the load
        path = self._resolve(ref, base)
        real = os.path.realpath(path)
        why = self.scope.refusal(real, by.origin, named=str(path))
        if why is not None:
            shown = _shown(real, self.home)
            leads = f" (it leads to {shown})" if shown not in (ref, str(path)) else ""
            self.warn(f"{by.label}: @{ref} not imported{leads}: {why}; it stays as written")
            return
        if real in self.seen:
            return
        if not os.path.exists(real):
            self.warn(f"{by.label}: imported file @{ref} was not found")
            return
        if by.depth + 1 > MAX_IMPORT_DEPTH:
            self.warn(
                f"{by.label}: @{ref} not imported (imports nest at most {MAX_IMPORT_DEPTH} deep)"
            )
            return
        origin = self.scope.origin(real) or by.origin
        label = _label(path, self.root, self.home)
        self._read(path, real, label, origin, by=by, what=f"{by.label}: @{ref}")

    def _read(
        self,
        path: Path,
        real: str,
        label: str,
        origin: Origin,
        *,
        by: InstructionFile | None,
        what: str,
    ) -> None:
        if real in self.seen:
            return
        self.seen.add(real)
        try:
            # a hard link's other name may be outside: only the user's own may have one
            raw = read_regular_file(real, _MAX_FILE_BYTES, single_link=origin == "project")
        except OSError as exc:
            self.warn(f"{what} not read ({exc.strerror or exc})")
            return
        text = raw[:_MAX_FILE_BYTES].decode("utf-8", errors="replace")
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
            depth=by.depth + 1 if by else 0,
            origin=origin,
        )
        self.files.append(entry)
        for ref in _imports(text):
            self.add_import(ref, entry, path.parent)

    def _resolve(self, ref: str, base: Path) -> Path:
        if ref.startswith("~/"):
            return self.home / ref[2:]
        candidate = Path(ref)
        return candidate if candidate.is_absolute() else base / candidate


def _shown(real: str, home: Path) -> str:
    """A resolved path as the user reads it (``~/...`` under the home directory)."""
    resolved_home = os.path.realpath(home)
    if real == resolved_home or real.startswith(resolved_home.rstrip("/") + "/"):
        return "~/" + os.path.relpath(real, resolved_home)
    return real


def load_instructions(
    root: Path,
    *,
    home: Path | None = None,
    max_chars: int = MAX_INSTRUCTION_CHARS,
    trusted: bool = False,
) -> Instructions:
    """Find and read the instruction files of ``root`` (and ``home``'s).
    ``trusted``: the project is trusted (``ProjectTrust.trusted``), so its
    files may also import Markdown from the user's MewCode folder."""
    state = mewcode_home(home)
    home = home if home is not None else Path.home()
    scope = ImportScope.of(root, state=state, home=home, trusted=trusted)
    loader = _Loader(root=root, home=home, scope=scope, cap=max_chars)
    if state is not None:
        loader.add_found(state / USER_INSTRUCTIONS.name, "user")
    for d in _project_dirs(root):
        for name in INSTRUCTION_FILES:
            loader.add_found(d / name, "project")
    warnings = list(loader.warnings)
    if loader.imports > _MAX_IMPORTS:
        warnings.append(
            f"instruction files hold {loader.imports:,} imports; only the first "
            f"{_MAX_IMPORTS} were looked at"
        )
    if loader.unlisted:
        warnings.append(f"... and {loader.unlisted:,} more problems with instruction files")
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
