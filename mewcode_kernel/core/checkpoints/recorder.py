"""Recording a turn's checkpoint as it goes (``TurnCheckpoints``).

The file tools call ``before_write`` just before they change a file and
``after_write`` once the change is made; tools whose changes cannot be
followed (``bash``) are noted with ``note_command``. The first change to a
file in a turn saves its content (or records it as created) and the
record is on disk before the change is made. Calls come from the tools'
worker threads, hence the lock.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .records import FileEntry, TurnRecord
from .store import CheckpointStore, digest, read_snapshot

__all__ = ["TurnCheckpoints"]


class TurnCheckpoints:
    """The session's checkpoint recorder: ``begin`` starts each turn (in the
    session's directory, numbering on from the turns already stored there)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._store: CheckpointStore | None = None
        self._session_id = ""
        self._turn = 0
        self._origin: dict[str, Any] = {}
        self._record: TurnRecord | None = None
        self.errors: list[str] = []

    @property
    def turn(self) -> int:
        """The number of the running (or last) turn; 0 before the first."""
        return self._turn

    @property
    def store(self) -> CheckpointStore | None:
        return self._store

    @property
    def record(self) -> TurnRecord | None:
        """The running (or last) turn's record, ``None`` when it changed nothing."""
        return self._record

    def begin(
        self, session_dir: Path, session_id: str, origin: Mapping[str, Any] | None = None
    ) -> int:
        """Start a new turn of the session in ``session_dir``; returns its number."""
        with self._lock:
            if self._store is None or self._store.session_dir != session_dir:
                self._store = CheckpointStore(session_dir)
                self._turn = 0
            stored = self._store.turns()
            self._turn = max(self._turn, stored[-1] if stored else 0) + 1
            self._session_id = session_id
            self._origin = dict(origin or {})
            self._record = None
            self.errors = []
            return self._turn

    def before_write(self, path: Path, shown: str) -> None:
        """Save ``path`` as it is, unless this turn already did."""
        with self._lock:
            if self._store is None:
                return
            record = self._current()
            key = str(path)
            if record.entry(key) is not None:
                return
            snap = read_snapshot(key)
            if not snap.exists:
                entry = FileEntry(path=key, shown=shown, status="created")
            elif snap.data is None:
                entry = FileEntry(
                    path=key, shown=shown, status="unsaved", mode=snap.mode, reason=snap.reason
                )
            else:
                entry = FileEntry(
                    path=key, shown=shown, status="edited",
                    before=self._store.save_blob(snap.data), before_size=len(snap.data),
                    mode=snap.mode,
                )  # fmt: skip
            record.files.append(entry)
            self._store.save(record)

    def after_write(self, path: Path, data: bytes) -> None:
        """``path`` now holds ``data`` (what this turn wrote)."""
        with self._lock:
            record = self._record
            entry = record.entry(str(path)) if record is not None else None
            if record is None or entry is None or self._store is None:
                return
            entry.after = digest(data)
            self._store.save(record)

    def note_command(self, summary: str) -> None:
        """A command ran whose changes to files are not tracked."""
        with self._lock:
            if self._store is None:
                return
            record = self._current()
            if summary not in record.commands:
                record.commands.append(summary)
                self._store.save(record)

    def _current(self) -> TurnRecord:
        if self._record is None:
            self._record = TurnRecord(
                session_id=self._session_id,
                turn=self._turn,
                started=datetime.now(UTC).isoformat(timespec="milliseconds"),
                origin=self._origin,
            )
        return self._record
