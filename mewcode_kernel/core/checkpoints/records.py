"""What a checkpoint holds: the files one turn changed (``FileEntry``) and the
turn itself (``TurnRecord``), with their JSON form.

Records are read back from disk, where anything could have been put: every
field is checked when loaded (``TurnRecord.from_dict`` raises ``ValueError``),
and paths are only trusted again after the revert planner has re-resolved
them against the project (see ``revert``).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = [
    "GONE",
    "CellMark",
    "FileEntry",
    "FileStatus",
    "NotebookEntry",
    "TurnRecord",
    "is_digest",
]

FileStatus = Literal["created", "edited", "unsaved"]
"""``created``: the file did not exist before the turn; ``edited``: its
content before the turn is saved; ``unsaved``: it existed but could not be
saved (too large, not a regular file, unreadable), so it cannot be restored."""

_DIGEST = re.compile(r"[0-9a-f]{64}")
_STATUSES = ("created", "edited", "unsaved")
VERSION = 1
GONE = "0" * 64
"""``FileEntry.after`` of a file the turn deleted (a command did)."""


def is_digest(value: object) -> bool:
    """A SHA-256 hex digest (the only names blobs have)."""
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None


@dataclass(kw_only=True, slots=True)
class FileEntry:
    """One file a turn changed. ``path`` is absolute and resolved (as the
    write saw it); ``shown`` is how to name it to a person (relative to the
    project root when inside). ``before``/``after`` are SHA-256 digests of
    the content before the turn's first change and after its last one
    (``after`` is ``None`` until a write succeeded)."""

    path: str
    shown: str
    status: FileStatus
    before: str | None = None
    before_size: int | None = None
    mode: int | None = None
    after: str | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> FileEntry:
        if not isinstance(data, dict):
            raise ValueError("a file entry is not an object")
        path, shown, status = data.get("path"), data.get("shown"), data.get("status")
        if not isinstance(path, str) or not path.startswith("/") or "\0" in path:
            raise ValueError(f"a file entry has an invalid path: {path!r}")
        if not isinstance(shown, str) or status not in _STATUSES:
            raise ValueError(f"a file entry for {path!r} is damaged")
        before, after = data.get("before"), data.get("after")
        if status == "edited" and not is_digest(before):
            raise ValueError(f"the saved content of {path!r} has no valid digest")
        for digest in (before, after):
            if digest is not None and not is_digest(digest):
                raise ValueError(f"a file entry for {path!r} has an invalid digest")
        size, mode, reason = data.get("before_size"), data.get("mode"), data.get("reason", "")
        if size is not None and (not isinstance(size, int) or size < 0):
            raise ValueError(f"a file entry for {path!r} has an invalid size")
        if mode is not None and (not isinstance(mode, int) or not 0 <= mode <= 0o7777):
            raise ValueError(f"a file entry for {path!r} has an invalid mode")
        return cls(
            path=path, shown=shown, status=status, before=before, before_size=size,
            mode=mode, after=after, reason=str(reason),
        )  # fmt: skip


@dataclass(kw_only=True, slots=True)
class CellMark:
    """One cell a turn touched: ``before`` (blob of its JSON; ``None``: the
    turn inserted it), where it was (``index``), and ``after`` (digest of its
    source as the turn left it, ``GONE`` when it deleted it, ``None`` until a
    change was made)."""

    id: str
    before: str | None
    index: int | None
    after: str | None = None

    @classmethod
    def from_dict(cls, data: Any) -> CellMark:
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            raise ValueError("a cell mark is damaged")
        before, after, index = data.get("before"), data.get("after"), data.get("index")
        for value in (before, after):
            if value is not None and not is_digest(value):
                raise ValueError("a cell mark has an invalid digest")
        if index is not None and (not isinstance(index, int) or index < 0):
            raise ValueError("a cell mark has an invalid index")
        return cls(id=data["id"][:64], before=before, index=index, after=after)


@dataclass(kw_only=True, slots=True)
class NotebookEntry:
    """A notebook a turn edited cell by cell (see the module docstring)."""

    path: str
    shown: str
    order: list[str] = field(default_factory=list)
    cells: list[CellMark] = field(default_factory=list)

    def mark(self, cid: str) -> CellMark | None:
        return next((m for m in self.cells if m.id == cid), None)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> NotebookEntry:
        if not isinstance(data, dict):
            raise ValueError("a notebook entry is not an object")
        path, shown, order = data.get("path"), data.get("shown"), data.get("order", [])
        if not isinstance(path, str) or not path.startswith("/") or "\0" in path:
            raise ValueError(f"a notebook entry has an invalid path: {path!r}")
        if not isinstance(shown, str) or not isinstance(order, list):
            raise ValueError(f"the notebook entry for {path!r} is damaged")
        cells = data.get("cells", [])
        if not isinstance(cells, list):
            raise ValueError(f"the notebook entry for {path!r} is damaged")
        return cls(
            path=path,
            shown=shown,
            order=[str(x)[:64] for x in order],
            cells=[CellMark.from_dict(c) for c in cells],
        )


@dataclass(kw_only=True, slots=True)
class TurnRecord:
    """The checkpoint of one turn: the files it changed, in the order it first
    touched them; the commands it ran whose changes are not tracked; where
    it came from (``origin``: the cell's execution count and id, when a
    notebook ran it); and whether it was reverted (``reverted``: when, and
    what each file's outcome was)."""

    session_id: str
    turn: int
    started: str
    origin: dict[str, Any] = field(default_factory=dict)
    files: list[FileEntry] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    reverted: dict[str, Any] | None = None
    git: str = ""
    #: notebooks it edited cell by cell (``notebook_edit``)
    notebooks: list[NotebookEntry] = field(default_factory=list)

    @property
    def changed(self) -> list[str]:
        """How each file or notebook it changed is named to a person."""
        return [e.shown for e in self.files] + [n.shown for n in self.notebooks]

    def notebook(self, path: str) -> NotebookEntry | None:
        return next((n for n in self.notebooks if n.path == path), None)

    @property
    def label(self) -> str:
        """``SESSION:TURN``, the form ``/rewind`` accepts from any session."""
        return f"{self.session_id}:{self.turn}"

    @property
    def commands_note(self) -> str:
        """What became of the changes of the commands the turn ran."""
        if not self.commands:
            return ""
        if self.git == "tracked":
            return (
                "followed through git: what it changed in files git sees is listed with the "
                "files (ignored files, and untracked files it modified, are not followed)"
            )
        if self.git:
            return f"not tracked: {self.git}"
        return (
            "not tracked: a command's changes are not followed (outside a trusted git repository)"
        )

    def entry(self, path: str) -> FileEntry | None:
        return next((e for e in self.files if e.path == path), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "session_id": self.session_id,
            "turn": self.turn,
            "started": self.started,
            "origin": self.origin,
            "files": [e.to_dict() for e in self.files],
            "commands": self.commands,
            "reverted": self.reverted,
            "git": self.git,
            "notebooks": [n.to_dict() for n in self.notebooks],
        }

    @classmethod
    def from_dict(cls, data: Any) -> TurnRecord:
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError("not a checkpoint record of a known version")
        session_id, turn = data.get("session_id"), data.get("turn")
        if not isinstance(session_id, str) or not isinstance(turn, int) or turn < 1:
            raise ValueError("a checkpoint record has no valid session or turn")
        files = data.get("files")
        commands = data.get("commands", [])
        origin = data.get("origin", {})
        reverted = data.get("reverted")
        notebooks = data.get("notebooks", [])
        if (
            not isinstance(files, list)
            or not isinstance(notebooks, list)
            or not isinstance(commands, list)
        ):
            raise ValueError("a checkpoint record is damaged")
        return cls(
            session_id=session_id,
            turn=turn,
            started=str(data.get("started", "")),
            origin=origin if isinstance(origin, dict) else {},
            files=[FileEntry.from_dict(f) for f in files],
            commands=[str(c) for c in commands],
            reverted=reverted if isinstance(reverted, dict) else None,
            git=str(data.get("git", "")),
            notebooks=[NotebookEntry.from_dict(n) for n in notebooks],
        )
