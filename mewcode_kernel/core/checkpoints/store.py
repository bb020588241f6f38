"""Checkpoints on disk, beside the session they belong to.

Layout: ``<session dir>/checkpoints/turn-<n>.json`` (a ``TurnRecord``) and
``<session dir>/checkpoints/blobs/<sha256>`` (the content of a file before
a turn changed it, stored once per session however many turns saved it).
Both are written atomically and fsynced, so a checkpoint is on disk before
the change it guards is made, and survives a kernel restart or a crash.
Blobs are verified against their name when read back; records against
their signature (``signing``): a record the user's key did not sign is
not a checkpoint.

A record also carries, under the same signature, the project it was made
in (``root``: its resolved path), and is used only there: a cloned
repository whose ``.mewcode/sessions`` leads to another project's would
otherwise bring that project's genuine records (and their paths and
contents) into this one. A signed record without it (made before it
existed, in the same unreleased cycle as the signing) is not used either.
Nothing is read or written through a ``.mewcode``, ``sessions``, session
or ``checkpoints`` folder that is a symlink.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import SessionError
from ..fs.durable import atomic_write
from ..ownership import ensure_private_dir
from ..session._files import SESSIONS_DIR, refuse_symlinks, safe_sessions_dir
from ..session.load import own_session_dirs
from .records import TurnRecord, is_digest
from .signing import sign, verify

__all__ = [
    "CHECKPOINTS_DIR",
    "MAX_SNAPSHOT_BYTES",
    "ROOT_FIELD",
    "CheckpointStore",
    "Snapshot",
    "digest",
    "read_snapshot",
    "stored_turns",
]

CHECKPOINTS_DIR = "checkpoints"
MAX_SNAPSHOT_BYTES = 10_000_000
"""Files larger than this are not saved before a change (they are listed as
not restorable): a checkpoint must not double a project's size on disk."""
_MAX_RECORD_BYTES = 4_000_000
_TURN_FILE = re.compile(r"turn-([1-9][0-9]{0,8})\.json")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
ROOT_FIELD = "root"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, kw_only=True, slots=True)
class Snapshot:
    """A file as it is now: ``exists``; its ``data`` (``None`` when it could
    not be read, ``reason`` says why); its permission bits."""

    exists: bool
    data: bytes | None = None
    mode: int | None = None
    reason: str = ""

    @property
    def digest(self) -> str | None:
        return digest(self.data) if self.data is not None else None


def read_snapshot(path: str, *, limit: int = MAX_SNAPSHOT_BYTES) -> Snapshot:
    """Read ``path`` without following a symlink at its last component and
    without blocking on a FIFO; larger than ``limit`` or not a regular file
    gives no data."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return Snapshot(exists=False)
    except OSError as exc:
        return Snapshot(exists=True, reason=f"cannot read it ({exc.strerror})")
    if not stat.S_ISREG(st.st_mode):
        return Snapshot(exists=True, reason="it is not a regular file")
    if st.st_size > limit:
        return Snapshot(
            exists=True,
            mode=stat.S_IMODE(st.st_mode),
            reason=f"it is larger than {limit:,} bytes ({st.st_size:,})",
        )
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return Snapshot(exists=True, reason=f"cannot read it ({exc.strerror})")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return Snapshot(exists=True, reason="it is not a regular file")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > limit:
                return Snapshot(
                    exists=True, mode=stat.S_IMODE(st.st_mode),
                    reason=f"it is larger than {limit:,} bytes",
                )  # fmt: skip
            chunks.append(chunk)
    except OSError as exc:
        return Snapshot(exists=True, reason=f"cannot read it ({exc.strerror})")
    finally:
        os.close(fd)
    return Snapshot(exists=True, data=b"".join(chunks), mode=stat.S_IMODE(st.st_mode))


class CheckpointStore:
    """The checkpoints of one session (its directory ``session_dir``) of the
    project ``root``, signed and checked with ``key`` (``signing.user_key``).
    A folder on the way that is a symlink makes every call raise ``ValueError``."""

    def __init__(self, session_dir: Path, key: bytes, *, root: Path) -> None:
        self.session_dir = session_dir
        self._key = key
        #: the project the records are signed for (resolved: the same project
        #: reached through another path is still the same)
        self.root = os.path.realpath(root)
        self._mewcode = (root / SESSIONS_DIR.parent, root / SESSIONS_DIR)
        self.path = session_dir / CHECKPOINTS_DIR
        self.blobs = self.path / "blobs"

    def _refuse_links(self, *more: Path) -> None:
        try:
            refuse_symlinks(*self._mewcode, self.session_dir, self.path, *more)
        except SessionError as exc:
            raise ValueError(str(exc)) from None

    def save_blob(self, data: bytes) -> str:
        """Store ``data`` (once) and return its digest."""
        self._refuse_links(self.blobs)
        name = digest(data)
        target = self.blobs / name
        if not target.exists():
            # every folder made on the way is private too (mkdir's parents get the umask's)
            ensure_private_dir(self.blobs)
            atomic_write(target, data)
        return name

    def load_blob(self, name: str) -> bytes:
        """The content saved as ``name``; ``ValueError`` if missing or damaged."""
        if not is_digest(name):
            raise ValueError(f"invalid checkpoint name {name!r}")
        self._refuse_links(self.blobs)
        snap = read_snapshot(str(self.blobs / name))
        if snap.data is None:
            why = "it is missing" if not snap.exists else snap.reason
            raise ValueError(f"the saved content {name[:12]} cannot be read: {why}")
        if digest(snap.data) != name:
            raise ValueError(f"the saved content {name[:12]} is damaged (its digest differs)")
        return snap.data

    def save(self, record: TurnRecord) -> None:
        self._refuse_links()
        ensure_private_dir(self.path)
        signed = sign({**record.to_dict(), ROOT_FIELD: self.root}, self._key)
        data = json.dumps(signed, ensure_ascii=False, indent=1).encode()
        atomic_write(self.path / f"turn-{record.turn}.json", data)

    def load(self, turn: int) -> TurnRecord:
        """Turn ``turn``'s record; ``ValueError`` when missing, damaged, not
        signed with the key or signed for another project."""
        self._refuse_links()
        snap = read_snapshot(str(self.path / f"turn-{turn}.json"), limit=_MAX_RECORD_BYTES)
        if snap.data is None:
            raise ValueError(f"turn {turn} has no checkpoint" if not snap.exists else snap.reason)
        try:
            return self._parse(turn, snap.data)
        except ValueError:
            raise
        except Exception as exc:  # e.g. RecursionError from [[[...]]]: one bad file, not all
            raise ValueError(
                f"the checkpoint of turn {turn} is damaged ({type(exc).__name__})"
            ) from None

    def _parse(self, turn: int, raw: bytes) -> TurnRecord:
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise ValueError(f"the checkpoint of turn {turn} is damaged: {exc}") from None
        if not isinstance(data, dict) or not verify(data, self._key):
            raise ValueError(
                f"the checkpoint of turn {turn} was not made by you (its signature does not "
                "match your key), so it is not used"
            )
        made_in = data.get(ROOT_FIELD)
        if made_in != self.root:
            where = (
                f"in another project ({made_in})"
                if isinstance(made_in, str)
                else "by an earlier MewCode that did not record its project"
            )
            raise ValueError(f"the checkpoint of turn {turn} was made {where}, so it is not used")
        try:
            record = TurnRecord.from_dict(data)
        except ValueError as exc:
            raise ValueError(f"the checkpoint of turn {turn} is damaged: {exc}") from None
        if record.turn != turn or record.session_id != self.session_dir.name:
            raise ValueError(f"the checkpoint of turn {turn} belongs elsewhere")
        return record

    def turns(self) -> list[int]:
        """The turns with a checkpoint, oldest first."""
        try:
            names = os.listdir(self.path)
        except OSError:
            return []
        found = (_TURN_FILE.fullmatch(n) for n in names)
        return sorted(int(m.group(1)) for m in found if m)

    def records(self) -> Iterator[TurnRecord]:
        """Every readable record, oldest first (damaged ones are skipped)."""
        for turn in self.turns():
            with contextlib.suppress(ValueError):
                yield self.load(turn)


def stored_turns(root: Path, key: bytes) -> list[TurnRecord]:
    """Every readable checkpoint signed with ``key`` for the project, of its
    sessions, oldest first (by start time, then turn); ``ValueError`` (a
    readable sentence) when the sessions folder is reached through a symlink."""
    try:
        base = safe_sessions_dir(root)
    except SessionError as exc:
        raise ValueError(str(exc)) from None
    try:
        # the user's own sessions: in a shared project, others' sit beside them
        names = sorted(e.name for e in own_session_dirs(base))
    except OSError:
        return []
    records = [r for name in names for r in CheckpointStore(base / name, key, root=root).records()]
    return sorted(records, key=lambda r: (r.started, r.session_id, r.turn))
