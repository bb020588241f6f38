"""What changed on disk between two turns, for ``ConfigChange`` (the
settings files MewCode and Claude Code read) and ``FileChanged`` (the files
``FileChanged`` hooks name in their matcher: ``.envrc|.env``).

Nothing watches in the background: each file's state (whether it exists,
its size, its modification time) is compared with the one seen before the
last turn, so an event fires before the first turn after the change.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..userdirs import mewcode_home, user_home
from .rules import HookRule

__all__ = ["Change", "FileWatch", "settings_files", "watched_names"]

_State = tuple[int, int] | None
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.@+-]+")


@dataclass(frozen=True, kw_only=True, slots=True)
class Change:
    path: Path
    #: Claude Code's: ``change``, ``add`` or ``unlink``
    kind: str
    #: ``ConfigChange``'s ``source`` (empty for a watched file)
    source: str = ""


def settings_files(root: Path, home: Path | None) -> dict[Path, str]:
    """The settings files of a session, each with Claude Code's ``source``."""
    found = {
        root / ".claude" / "settings.json": "project_settings",
        root / ".claude" / "settings.local.json": "local_settings",
        root / ".mewcode.yaml": "project_settings",
        root / ".mewcode" / "hooks.yaml": "project_settings",
    }
    base = user_home(home)
    if base is not None:
        found[base / ".claude" / "settings.json"] = "user_settings"
    state = mewcode_home(home)
    if state is not None:
        found[state / "config.yaml"] = "user_settings"
        found[state / "hooks.yaml"] = "user_settings"
    return found


def watched_names(rules: Iterable[HookRule]) -> set[str]:
    """The file names ``FileChanged`` rules name (a matcher of plain names
    joined by ``|``); a pattern that is not plain names watches nothing."""
    names: set[str] = set()
    for rule in rules:
        if rule.event != "FileChanged" or rule.pattern is None:
            continue
        names |= {n for n in rule.pattern.pattern.split("|") if _PLAIN_NAME.fullmatch(n)}
    return names


def _state(path: Path) -> _State:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


class FileWatch:
    """The states of some files as last seen; ``changes`` compares."""

    def __init__(self) -> None:
        self._seen: dict[Path, _State] = {}

    def changes(self, files: dict[Path, str]) -> list[Change]:
        """What changed in ``files`` (path -> source) since the last call; a
        file seen for the first time is only remembered."""
        found: list[Change] = []
        for path, source in files.items():
            now = _state(path)
            if path not in self._seen:
                self._seen[path] = now
                continue
            before, self._seen[path] = self._seen[path], now
            if now == before:
                continue
            kind = "add" if before is None else "unlink" if now is None else "change"
            found.append(Change(path=path, kind=kind, source=source))
        return found
