"""Recording a turn's checkpoint as it goes (``TurnCheckpoints``).

The file tools call ``before_write`` just before they change a file and
``after_write`` once the change is made; tools whose changes cannot be
followed (``bash``) are noted with ``note_command``. The first change to a
file in a turn saves its content (or records it as created) and the
record is on disk before the change is made. Calls come from the tools'
worker threads, hence the lock.

In a git repository (and only when ``git_allowed()`` says so: a trusted
project), the first command of a turn takes a git snapshot of the work
tree and ``finish`` another: what git sees changed between them joins the
turn's files (see ``git``), so revert can restore it too; MewCode's own
state there (``project_paths.MEWCODE_STATE_PATHS``: the sessions, the
checkpoint being written among them, and logs) is never one of them.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..notebook import DiskNotebooks, NotebookAccess
from ..project_paths import MEWCODE_STATE_PATHS
from . import git
from .records import GONE, CellMark, FileEntry, NotebookEntry, TurnRecord
from .store import MAX_SNAPSHOT_BYTES, CheckpointStore, digest, read_snapshot

__all__ = ["TurnCheckpoints"]


class TurnCheckpoints:
    """The session's checkpoint recorder: ``begin`` starts each turn (in the
    session's directory, numbering on from the turns already stored there)."""

    def __init__(
        self,
        root: Path,
        *,
        key: bytes,
        git_allowed: Callable[[], bool] = lambda: False,
        notebooks: NotebookAccess | None = None,
    ) -> None:
        self.root = root
        #: where a turn's notebook cells are read and restored (the open
        #: document through the front end, else the file)
        self.notebooks: NotebookAccess = notebooks or DiskNotebooks()
        #: signs the records (``signing.user_key``)
        self.key = key
        self._git_allowed = git_allowed
        self._git_before: git.GitSnapshot | None = None
        self._lock = threading.Lock()
        self._store: CheckpointStore | None = None
        self._session_id = ""
        self._turn = 0
        self._begun = 0
        self._origin: dict[str, Any] = {}
        self._record: TurnRecord | None = None

    @property
    def turn(self) -> int:
        """The number of the running (or last) turn; 0 before the first."""
        return self._turn

    @property
    def begun(self) -> int:
        """How many turns this recorder began (a turn ran since you last looked
        if it changed)."""
        return self._begun

    @property
    def store(self) -> CheckpointStore | None:
        return self._store

    @property
    def record(self) -> TurnRecord | None:
        """The running (or last) turn's record, ``None`` when it changed nothing."""
        return self._record

    def begin(
        self,
        session_dir: Path,
        session_id: str,
        origin: Mapping[str, Any] | None = None,
        *,
        after: int | None = None,
    ) -> int:
        """Start a new turn of the session in ``session_dir``; returns its
        number: the one after ``after`` (the session's last turn, as its log
        says), and after every turn with a checkpoint there, so no record is
        ever written over."""
        with self._lock:
            if self._store is None or self._store.session_dir != session_dir:
                self._store = CheckpointStore(session_dir, self.key, root=self.root)
                self._turn = 0
            if after is not None:
                self._turn = after
            stored = self._store.turns()
            self._turn = max(self._turn, stored[-1] if stored else 0) + 1
            self._begun += 1
            self._session_id = session_id
            self._origin = dict(origin or {})
            self._record = None
            self._git_before = None
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

    def before_cells(
        self,
        path: Path,
        shown: str,
        order: Sequence[str],
        cells: Mapping[str, tuple[int, dict[str, Any]] | None],
    ) -> None:
        """A notebook's cells are about to change: ``order`` is its cell order
        now, ``cells`` each touched cell's (index, JSON) now, or ``None`` for a
        cell about to be inserted. Saved unless this turn already saved it."""
        with self._lock:
            if self._store is None:
                return
            record = self._current()
            entry = record.notebook(str(path))
            if entry is None:
                entry = NotebookEntry(path=str(path), shown=shown, order=list(order))
                record.notebooks.append(entry)
            for cid, now in cells.items():
                if entry.mark(cid) is not None:
                    continue
                if now is None:
                    entry.cells.append(CellMark(id=cid, before=None, index=None))
                    continue
                blob = json.dumps(now[1], ensure_ascii=False, sort_keys=True).encode()
                if len(blob) > MAX_SNAPSHOT_BYTES:  # a huge output is not kept, the cell is
                    cell = {**now[1], "outputs": []} if "outputs" in now[1] else now[1]
                    blob = json.dumps(cell, ensure_ascii=False, sort_keys=True).encode()
                entry.cells.append(
                    CellMark(id=cid, before=self._store.save_blob(blob), index=now[0])
                )
            self._store.save(record)

    def after_cells(self, path: Path, sources: Mapping[str, str | None]) -> None:
        """The touched cells' sources now (``None``: the cell is gone)."""
        with self._lock:
            record = self._record
            entry = record.notebook(str(path)) if record is not None else None
            if record is None or entry is None or self._store is None:
                return
            for cid, source in sources.items():
                mark = entry.mark(cid)
                if mark is not None:
                    mark.after = GONE if source is None else digest(source.encode())
            self._store.save(record)

    def note_command(self, summary: str) -> None:
        """A command is about to run (its changes are only followed through git).
        Blocking (it may run git): call it from a worker thread."""
        with self._lock:
            if self._store is None:
                return
            record = self._current()
            if summary not in record.commands:
                record.commands.append(summary)
            if not record.git and git.is_repository(self.root) and self._git_allowed():
                try:
                    self._git_before = git.snapshot(self.root)
                    record.git = "tracked"
                except git.GitFailed as exc:
                    record.git = f"git could not take a snapshot: {exc}"
            self._store.save(record)

    def finish(self) -> None:
        """The turn ended: fold in what git saw its commands change (blocking)."""
        with self._lock:
            before, self._git_before = self._git_before, None
            record, store = self._record, self._store
            if before is None or record is None or store is None:
                return
            try:
                after = git.snapshot(self.root)
                changes = git.changes_between(self.root, before, after, MAX_SNAPSHOT_BYTES)
            except git.GitFailed as exc:
                record.git = f"git could not compare the work tree: {exc}"
                store.save(record)
                return
            top = os.path.realpath(self.root)
            for change in changes:
                if not _own_state(change.path):
                    self._fold(record, store, os.path.join(top, change.path), change)
            store.save(record)

    def _fold(
        self, record: TurnRecord, store: CheckpointStore, path: str, change: git.GitChange
    ) -> None:
        now = read_snapshot(path)
        entry = record.entry(path)
        if entry is not None:  # a file tool saved it first: only where the turn left it changes
            entry.after = now.digest if now.exists else GONE
            if now.exists and now.data is None:
                entry.status, entry.reason = "unsaved", now.reason
            return
        shown = os.path.relpath(path, os.path.realpath(self.root))
        if os.path.realpath(path) != path:
            return  # reached through a symlinked directory: not a file of its own
        problem = change.problem or (now.reason if now.exists and now.data is None else "")
        if not problem and change.after is not None and now.digest != digest(change.after):
            # git stores it converted (line endings, a filter) or it changed since
            problem = "git's copy differs from the file on disk"
        if problem:
            record.files.append(FileEntry(path=path, shown=shown, status="unsaved", reason=problem))
        elif change.untracked or change.before is None:
            if now.exists:
                record.files.append(
                    FileEntry(path=path, shown=shown, status="created", after=now.digest)
                )
        else:
            record.files.append(
                FileEntry(
                    path=path,
                    shown=shown,
                    status="edited",
                    before=store.save_blob(change.before),
                    before_size=len(change.before),
                    after=now.digest if now.exists else GONE,
                )
            )

    def _current(self) -> TurnRecord:
        if self._record is None:
            self._record = TurnRecord(
                session_id=self._session_id,
                turn=self._turn,
                started=datetime.now(UTC).isoformat(timespec="milliseconds"),
                origin=self._origin,
            )
        return self._record


def _own_state(path: str) -> bool:
    """Whether ``path`` (relative to the root, as git names it) is MewCode's own
    state: its sessions (this turn's checkpoint included) and logs."""
    return any(path == own or path.startswith(own + "/") for own in MEWCODE_STATE_PATHS)
