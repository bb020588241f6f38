"""Memory notes: things the user asked the agent to remember.

Project notes live in ``<root>/.mewcode/MEMORY.md``, the user's own in
``~/.mewcode/MEMORY.md``. Each note is one Markdown bullet (``- ...``); the
files are plain Markdown the user may also edit by hand, and their whole
text (not only the bullets) goes into the system prompt.

The system prompt is read when a session starts, after ``/clear`` or a
resume, and after a compaction, never in between (it must stay
byte-identical for the prompt cache); a note added mid-session also reaches
the model at once as a reminder on the next turn.

The project's file is the repository's: it is read only when it resolves
inside the project (a cloned ``.mewcode/MEMORY.md -> ~/.ssh/id_rsa`` is not
sent to the model) and is a regular file (a FIFO never blocks), and written
without following a link planted on the way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..fs.read_regular import read_regular_file
from ..fs.safe_write import atomic_write_within
from ..userdirs import mewcode_home
from .import_scope import ImportScope

__all__ = [
    "MAX_MEMORY_CHARS",
    "MEMORY_FILE",
    "MemoryNote",
    "MemoryStore",
    "Scope",
    "memory_note_from_prompt",
]

MEMORY_FILE = Path(".mewcode") / "MEMORY.md"
MAX_MEMORY_CHARS = 20_000
#: bytes read of a memory file at most (the character cap then cuts the prompt's copy)
_MAX_FILE_BYTES = 1 << 20
Scope = Literal["project", "user"]

_HEADER = (
    "# MewCode memory\n\n"
    "Notes for the agent, one bullet each. Added with `/memory add` or `%agent # note`;\n"
    "edit freely.\n\n"
)


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryNote:
    """One bullet. ``number`` is its place in ``/memory`` (project notes first)."""

    number: int
    scope: Scope
    text: str


def memory_note_from_prompt(prompt: str) -> str | None:
    """The note in a one-line prompt of the form ``# note`` (the "remember this"
    shortcut), else ``None``. ``## heading`` and multi-line text are not notes."""
    text = prompt.strip()
    if not text.startswith("# ") or "\n" in text:
        return None
    note = text[2:].strip()
    return note or None


def _bullet(line: str) -> str | None:
    stripped = line.strip()
    if stripped.startswith(("- ", "* ")):
        return stripped[2:].strip() or None
    return None


class MemoryStore:
    """Reads and edits the two memory files of a project."""

    def __init__(self, root: Path, *, home: Path | None = None) -> None:
        self.root = root
        self.home = home if home is not None else Path.home()
        self.state = mewcode_home(home) or self.home / ".mewcode"

    def path(self, scope: Scope) -> Path:
        return self.root / MEMORY_FILE if scope == "project" else self.state / MEMORY_FILE.name

    def _read(self, scope: Scope) -> str:
        path = self.path(scope)
        real = os.path.realpath(path)
        if scope == "project":
            place = ImportScope.of(self.root, state=None, home=self.home, trusted=False)
            if place.refusal(real, "project") is not None:
                return ""
        try:
            single = scope == "project"  # a hard link's other name may be outside the project
            return read_regular_file(real, _MAX_FILE_BYTES, single_link=single).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    def _write(self, scope: Scope, text: str) -> None:
        """Replace the file, inside its own folder only (the project, or the
        MewCode folder), never through a link planted on the way."""
        if scope == "user":
            self.state.mkdir(parents=True, exist_ok=True)  # the user's own: made on first use
        folder = os.path.realpath(self.root if scope == "project" else self.state)
        relative = MEMORY_FILE if scope == "project" else Path(MEMORY_FILE.name)
        atomic_write_within(os.path.join(folder, relative), text, [folder])

    def notes(self) -> list[MemoryNote]:
        """Every bullet, project notes first, numbered from 1."""
        out: list[MemoryNote] = []
        for scope in ("project", "user"):
            for line in self._read(scope).splitlines():
                text = _bullet(line)
                if text is not None:
                    out.append(MemoryNote(number=len(out) + 1, scope=scope, text=text))
        return out

    def add(self, note: str, *, scope: Scope = "project") -> MemoryNote:
        """Append ``note`` as a bullet (creating the file with a short header)."""
        text = " ".join(note.split())
        if not text:
            raise ValueError("a memory note needs some text")
        current = self._read(scope)
        if not current:
            current = _HEADER
        elif not current.endswith("\n"):
            current += "\n"
        self._write(scope, current + f"- {text}\n")
        number = max((n.number for n in self.notes() if n.scope == scope), default=1)
        return MemoryNote(number=number, scope=scope, text=text)

    def remove(self, number: int) -> MemoryNote:
        """Delete note ``number`` (as ``notes()`` numbers them)."""
        notes = self.notes()
        if not 1 <= number <= len(notes):
            raise ValueError(
                f"there is no note {number}; notes are numbered 1 to {len(notes)}"
                if notes
                else "there are no memory notes"
            )
        target = notes[number - 1]
        index = sum(1 for n in notes[: number - 1] if n.scope == target.scope)
        lines = self._read(target.scope).splitlines(keepends=True)
        seen = -1
        for i, line in enumerate(lines):
            if _bullet(line) is not None:
                seen += 1
                if seen == index:
                    del lines[i]
                    break
        self._write(target.scope, "".join(lines))
        return target

    def render(self, *, max_chars: int = MAX_MEMORY_CHARS) -> tuple[str, list[str]]:
        """The system-prompt section and any warnings (over the size cap)."""
        sections: list[str] = []
        warnings: list[str] = []
        labels = (
            ("project", "Project notes", MEMORY_FILE.as_posix()),
            ("user", "User notes", f"~/{MEMORY_FILE.as_posix()}"),
        )
        for scope, title, label in labels:
            text = self._read(scope).strip()
            if text.startswith(_HEADER.strip()):
                text = text[len(_HEADER.strip()) :].strip()
            if not text:
                continue
            if len(text) > max_chars:
                warnings.append(
                    f"{self.path(scope)} holds {len(text):,} characters, over the "
                    f"{max_chars:,} limit; the rest was cut from the system prompt."
                )
                text = text[:max_chars] + "\n[... cut: over the size limit]"
            sections.append(f"## {title} ({label})\n\n{text}")
        if not sections:
            return "", warnings
        head = "# Memory\n\nNotes the user asked you to remember. Follow them."
        return "\n\n".join([head, *sections]), warnings
