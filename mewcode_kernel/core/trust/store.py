"""Remembered approvals: ``trusted-projects.json`` in the user's MewCode folder,
one entry per project root (its resolved path) with the approved items.

Each entry keeps the hashes of the items the person approved (``keys``):
a setting is used only while its exact content is among them. Entries
written before items were remembered one by one hold only the ``digest`` of
the whole set; such an entry approves the current settings only while they
are exactly what was approved then.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..ownership import ensure_private_dir
from ..userdirs import mewcode_home

__all__ = ["TRUST_FILE", "Approval", "TrustStore"]

TRUST_FILE = Path(".mewcode") / "trusted-projects.json"


@dataclass(frozen=True, kw_only=True, slots=True)
class Approval:
    """What the person approved for one root."""

    digest: str = ""
    keys: frozenset[str] = frozenset()


class TrustStore:
    """The approvals in the user's MewCode folder (``MEWCODE_HOME``; with
    ``home`` given, ``home/.mewcode``)."""

    def __init__(self, home: Path | None = None) -> None:
        state = mewcode_home(home)
        if state is None:
            raise RuntimeError("no home directory to keep project approvals in")
        self.path = state / TRUST_FILE.name

    def approval_for(self, root: Path) -> Approval | None:
        entry = self._read().get(str(root))
        if not isinstance(entry, dict):
            return None
        keys = entry.get("keys")
        return Approval(
            digest=str(entry.get("digest") or ""),
            keys=frozenset(k for k in keys if isinstance(k, str))
            if isinstance(keys, list)
            else frozenset(),
        )

    def digest_for(self, root: Path) -> str | None:
        found = self.approval_for(root)
        return found.digest if found is not None else None

    def approve(
        self, root: Path, digest: str, details: list[str], keys: Iterable[str] = ()
    ) -> None:
        """Remember that exactly the items with ``keys`` (and, as a whole, the
        set with ``digest``) are trusted for ``root``."""
        projects = self._read()
        projects[str(root)] = {
            "digest": digest,
            "keys": sorted(set(keys)),
            "approved_at": time.time(),
            "items": details,
        }
        self._write(projects)

    def revoke(self, root: Path) -> None:
        projects = self._read()
        if projects.pop(str(root), None) is not None:
            self._write(projects)

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        return dict(projects) if isinstance(projects, dict) else {}

    def _write(self, projects: dict[str, Any]) -> None:
        ensure_private_dir(self.path.parent)
        text = json.dumps({"version": 2, "projects": projects}, indent=2, ensure_ascii=False)
        tmp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
            os.replace(tmp, self.path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
