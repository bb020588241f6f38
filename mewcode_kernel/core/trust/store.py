"""Remembered approvals: ``~/.mewcode/trusted-projects.json``, one entry per
project root (its resolved path) with the digest of the settings approved."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

from ..userdirs import mewcode_home

__all__ = ["TRUST_FILE", "TrustStore"]

TRUST_FILE = Path(".mewcode") / "trusted-projects.json"


class TrustStore:
    """The approvals in the user's MewCode folder (``MEWCODE_HOME``; with
    ``home`` given, ``home/.mewcode``)."""

    def __init__(self, home: Path | None = None) -> None:
        state = mewcode_home(home)
        if state is None:
            raise RuntimeError("no home directory to keep project approvals in")
        self.path = state / TRUST_FILE.name

    def digest_for(self, root: Path) -> str | None:
        entry = self._read().get(str(root))
        return entry.get("digest") if isinstance(entry, dict) else None

    def approve(self, root: Path, digest: str, details: list[str]) -> None:
        """Remember that the settings with ``digest`` are trusted for ``root``."""
        projects = self._read()
        projects[str(root)] = {"digest": digest, "approved_at": time.time(), "items": details}
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"version": 1, "projects": projects}, indent=2, ensure_ascii=False)
        tmp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
            os.replace(tmp, self.path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
