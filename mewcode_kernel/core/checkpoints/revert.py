"""Planning and applying the revert of a turn.

``plan_revert`` compares each file the turn changed with what the turn left
(``FileEntry.after``): a file still as the turn left it is restored (or,
if the turn created it, deleted); one changed since, by anyone, is a
*conflict* and is left alone unless ``force`` is given; one that is now
outside the project, reached through a symlink, protected (settings,
hooks, ``.git``) or was never saved is *refused*, force or not. Every
path read from the record is resolved again against the project, so a
record edited to say ``../elsewhere`` cannot steer a write.

``apply_revert`` checks each file once more just before touching it and
writes through ``fs.atomic_write_within`` / ``fs.safe_unlink_within``: the
directory is reached from the project root without following a link, so a
symlink swapped in between the plan and the write is refused too.
"""

from __future__ import annotations

import asyncio
import difflib
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from ..fs import UnsafeWriteError, Workspace, atomic_write_within, safe_unlink_within
from ..notebook import CellOp, DiskNotebooks, NotebookAccess, NotebookError, StaleCell
from ..permission.targets import is_protected
from .cells import plan_cells
from .records import GONE, FileEntry, NotebookEntry, TurnRecord
from .store import CheckpointStore, Snapshot, digest, read_snapshot

__all__ = [
    "Action",
    "RevertItem",
    "RevertPlan",
    "TurnRevert",
    "apply_all",
    "apply_revert",
    "plan_all",
    "plan_revert",
]

Action = Literal["restore", "delete", "unchanged", "conflict", "refused"]
_DIFF_LINES = 400


@dataclass(frozen=True, kw_only=True, slots=True)
class RevertItem:
    """What reverting does to one file, and why. ``diff`` goes from the file
    as it is now to what the revert leaves; ``outcome`` is set once applied."""

    entry: FileEntry | NotebookEntry
    action: Action
    reason: str = ""
    diff: str = ""
    root: str | None = None
    outcome: str = ""
    #: for a notebook: the cell ops that revert it
    ops: tuple[CellOp, ...] = ()

    @property
    def shown(self) -> str:
        return self.entry.shown

    @property
    def changes(self) -> bool:
        return self.action in ("restore", "delete")


@dataclass(kw_only=True, slots=True)
class RevertPlan:
    record: TurnRecord
    items: list[RevertItem] = field(default_factory=list)
    force: bool = False
    applied: bool = False

    @property
    def changes(self) -> list[RevertItem]:
        """The files the revert changes (with ``force``, conflicts too)."""
        return [i for i in self.items if i.changes or (self.force and i.action == "conflict")]

    @property
    def conflicts(self) -> list[RevertItem]:
        return [i for i in self.items if i.action == "conflict"]

    @property
    def refused(self) -> list[RevertItem]:
        return [i for i in self.items if i.action == "refused"]

    @property
    def untracked(self) -> list[str]:
        return list(self.record.commands)


def plan_revert(
    record: TurnRecord, store: CheckpointStore, workspace: Workspace, *, force: bool = False
) -> RevertPlan:
    """What reverting ``record`` would do now (nothing is changed)."""
    return RevertPlan(
        record=record, items=[_plan_one(e, store, workspace) for e in record.files], force=force
    )


def apply_revert(
    plan: RevertPlan, store: CheckpointStore, workspace: Workspace, *, save: bool = True
) -> RevertPlan:
    """Carry ``plan`` out, file by file, re-checking each one first; returns the
    plan as it turned out (each item's ``outcome``), also written to the record."""
    done: list[RevertItem] = []
    for item in plan.items:
        fresh = _plan_one(item.entry, store, workspace)
        acting = fresh.changes or (plan.force and fresh.action == "conflict")
        if not acting:
            outcome = (
                "already as before the turn"
                if fresh.action == "unchanged"
                else f"not reverted: {fresh.reason}"
            )
            done.append(replace(fresh, outcome=outcome))
            continue
        try:
            outcome = _act(fresh, store, force=plan.force)
        except (UnsafeWriteError, ValueError) as exc:
            outcome = f"not reverted: {exc}"
        except OSError as exc:
            outcome = f"not reverted: {exc.strerror or exc}"
        done.append(replace(fresh, outcome=outcome))
    result = RevertPlan(record=plan.record, items=done, force=plan.force, applied=True)
    if save:
        _mark_reverted(result, store)
    return result


def _mark_reverted(plan: RevertPlan, store: CheckpointStore) -> None:
    plan.record.reverted = {
        "at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "force": plan.force,
        "files": {i.shown: i.outcome for i in plan.items},
    }
    store.save(plan.record)


def _act(item: RevertItem, store: CheckpointStore, *, force: bool) -> str:
    entry = item.entry
    assert item.root is not None
    if entry.status == "created":
        after = entry.after

        def unchanged(data: bytes) -> bool:
            return force or (after is not None and digest(data) == after)

        removed = safe_unlink_within(entry.path, [item.root], expect=unchanged)
        return "deleted" if removed else "already gone"
    assert entry.before is not None
    data = store.load_blob(entry.before)
    atomic_write_within(entry.path, data, [item.root])
    return "restored"


def _plan_one(entry: FileEntry, store: CheckpointStore, workspace: Workspace) -> RevertItem:
    def refused(reason: str) -> RevertItem:
        return RevertItem(entry=entry, action="refused", reason=reason)

    if entry.status == "unsaved":
        return refused(f"its content before the turn was not saved ({entry.reason})")
    resolved = workspace.resolve(entry.path)
    if resolved.path != entry.path:
        return refused(f"the path now leads elsewhere (to {resolved.path}) through a symlink")
    if resolved.root is None:
        return refused("it is outside the project and its additional directories")
    if is_protected(resolved, ignore_case=workspace.case_insensitive):
        return refused(
            "it is protected (MewCode or Claude settings, hooks, .git): restore it by hand"
        )
    now = read_snapshot(entry.path)
    if now.exists and now.data is None:
        return refused(f"it cannot be compared now: {now.reason}")
    before: bytes | None = None
    if entry.status == "edited":
        assert entry.before is not None
        try:
            before = store.load_blob(entry.before)
        except ValueError as exc:
            return refused(str(exc))
    current = now.digest
    if (before is None and not now.exists) or (before is not None and current == entry.before):
        return RevertItem(entry=entry, action="unchanged", reason="already as before the turn")
    diff = _diff(entry.shown, now, before)
    if entry.after == GONE:  # a command deleted it
        as_left = not now.exists
    else:
        as_left = entry.after is not None and current == entry.after
    if not as_left:
        why = "deleted since the turn" if not now.exists else "changed since the turn"
        return RevertItem(entry=entry, action="conflict", reason=why, diff=diff, root=resolved.root)
    action: Action = "delete" if entry.status == "created" else "restore"
    return RevertItem(entry=entry, action=action, diff=diff, root=resolved.root)


def _diff(shown: str, now: Snapshot, before: bytes | None) -> str:
    """A unified diff from the file as it is to what the revert leaves."""
    current = now.data if now.exists else None
    old, new = _text(current), _text(before)
    if (current is not None and old is None) or (before is not None and new is None):
        size = f"{len(current):,} bytes" if current is not None else "missing"
        target = f"{len(before):,} bytes" if before is not None else "deleted"
        return f"binary file {shown}: {size} → {target}"
    lines = list(
        difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            (new or "").splitlines(keepends=True),
            fromfile=f"{shown} (now)" if current is not None else "/dev/null",
            tofile=f"{shown} (reverted)" if before is not None else "/dev/null",
        )
    )
    if len(lines) > _DIFF_LINES:
        lines = [*lines[:_DIFF_LINES], f"... ({len(lines) - _DIFF_LINES} more diff lines)\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _text(data: bytes | None) -> str | None:
    if data is None or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


class TurnRevert:
    """Reverting one turn, for a front end's button: ``plan`` what it would
    do now, ``apply`` it (nothing at all while a file changed since, unless
    ``force``). The record is read from disk each time, so a revert made
    elsewhere (``/rewind``) is seen. Notebook cells are read and restored
    through ``notebooks`` (the open document when a front end has it)."""

    def __init__(
        self,
        record: TurnRecord,
        store: CheckpointStore,
        workspace: Workspace,
        notebooks: NotebookAccess | None = None,
    ) -> None:
        self.label = record.label
        self.turn = record.turn
        self.files = record.changed
        self.commands = list(record.commands)
        self.commands_note = record.commands_note
        self._store = store
        self._workspace = workspace
        self._notebooks = notebooks or DiskNotebooks()

    async def plan(self, *, force: bool = False) -> RevertPlan:
        record = await asyncio.to_thread(self._store.load, self.turn)
        return await plan_all(record, self._store, self._workspace, self._notebooks, force=force)

    def reverted(self) -> dict[str, Any] | None:
        """How the turn was reverted (``at``, ``files``: each file's outcome), by
        a front end's button or ``/rewind``; ``None`` while it is not (or its
        record cannot be read)."""
        try:
            return self._store.load(self.turn).reverted
        except ValueError:
            return None

    async def apply(self, *, force: bool = False) -> RevertPlan:
        plan = await self.plan(force=force)
        if (plan.conflicts and not force) or not plan.changes:
            return plan
        return await apply_all(plan, self._store, self._workspace, self._notebooks)


async def plan_all(
    record: TurnRecord,
    store: CheckpointStore,
    workspace: Workspace,
    notebooks: NotebookAccess,
    *,
    force: bool = False,
) -> RevertPlan:
    """``plan_revert`` for the files, and the turn's notebooks cell by cell."""
    plan = await asyncio.to_thread(plan_revert, record, store, workspace, force=force)
    for entry in record.notebooks:
        plan.items.append(await _plan_notebook(entry, store, workspace, notebooks, force))
    return plan


async def apply_all(
    plan: RevertPlan, store: CheckpointStore, workspace: Workspace, notebooks: NotebookAccess
) -> RevertPlan:
    """``apply_revert`` for the files, then each notebook's cells (re-planned
    first; an op whose cell changed meanwhile reverts nothing of that notebook)."""
    files = RevertPlan(
        record=plan.record, items=[i for i in plan.items if isinstance(i.entry, FileEntry)],
        force=plan.force,
    )  # fmt: skip
    done = await asyncio.to_thread(apply_revert, files, store, workspace, save=False)
    for item in plan.items:
        if not isinstance(item.entry, NotebookEntry):
            continue
        fresh = await _plan_notebook(item.entry, store, workspace, notebooks, plan.force)
        if not (fresh.changes or (plan.force and fresh.action == "conflict")):
            unchanged = fresh.action == "unchanged"
            why = "already as before the turn" if unchanged else f"not reverted: {fresh.reason}"
            done.items.append(replace(fresh, outcome=why))
            continue
        assert fresh.root is not None
        try:
            await notebooks.apply(
                Path(item.entry.path), item.entry.shown, fresh.ops, roots=[fresh.root]
            )
            outcome = "restored"
        except StaleCell as exc:
            outcome = f"not reverted: {exc}"
        except (NotebookError, UnsafeWriteError, ValueError, OSError) as exc:
            outcome = f"not reverted: {exc}"
        done.items.append(replace(fresh, outcome=outcome))
    _mark_reverted(done, store)
    return done


async def _plan_notebook(
    entry: NotebookEntry,
    store: CheckpointStore,
    workspace: Workspace,
    notebooks: NotebookAccess,
    force: bool,
) -> RevertItem:
    root, refused = _refusal(entry.path, workspace)
    if refused:
        return RevertItem(entry=entry, action="refused", reason=refused)
    try:
        ops, diff, conflicts = await plan_cells(entry, store, notebooks, force=force)
    except (NotebookError, ValueError, OSError) as exc:
        return RevertItem(entry=entry, action="refused", reason=str(exc))
    if conflicts:
        return RevertItem(
            entry=entry, action="conflict", reason="; ".join(conflicts), diff=diff,
            root=root, ops=tuple(ops),
        )  # fmt: skip
    if not ops:
        return RevertItem(entry=entry, action="unchanged", reason="already as before the turn")
    return RevertItem(entry=entry, action="restore", diff=diff, root=root, ops=tuple(ops))


def _refusal(path: str, workspace: Workspace) -> tuple[str | None, str]:
    """The allowed directory ``path`` is written back from, or why it may not be."""
    resolved = workspace.resolve(path)
    if resolved.path != path:
        return None, f"the path now leads elsewhere (to {resolved.path}) through a symlink"
    if resolved.root is None:
        return None, "it is outside the project and its additional directories"
    if is_protected(resolved, ignore_case=workspace.case_insensitive):
        return None, "it is protected (MewCode or Claude settings, hooks, .git): restore it by hand"
    return resolved.root, ""
