"""MewCode's own plugin records, in the user's MewCode folder
(``MEWCODE_HOME/plugins/``): the marketplaces added, the plugins installed
from them, and the user's ``/plugin enable|disable`` choices (which also
apply to plugins Claude Code installed).

``installed.json``: ``{"marketplaces": {name: {source, path, added_at}},
"plugins": {"name@market": {path, source, sha256, files, installed_at}},
"enabled": {"name@market": bool}}``. Written whole through a temporary file
and a rename, so a reader never sees half of it.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..userdirs import mewcode_home

__all__ = ["PLUGINS_DIR", "RECORDS", "Records", "plugins_home", "read_records", "write_records"]

PLUGINS_DIR = "plugins"
RECORDS = "installed.json"


@dataclass(kw_only=True)
class Records:
    marketplaces: dict[str, dict[str, Any]] = field(default_factory=dict)
    plugins: dict[str, dict[str, Any]] = field(default_factory=dict)
    enabled: dict[str, bool] = field(default_factory=dict)
    problem: str | None = None


def plugins_home(home: Path | None = None) -> Path | None:
    """``MEWCODE_HOME/plugins`` (``None`` without a MewCode folder)."""
    state = mewcode_home(home)
    return state / PLUGINS_DIR if state is not None else None


def _mapping(value: Any) -> dict[str, Any]:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def read_records(home: Path | None = None) -> Records:
    """The records (empty when there are none; ``problem`` when unreadable)."""
    folder = plugins_home(home)
    if folder is None or not (folder / RECORDS).is_file():
        return Records()
    try:
        data = json.loads((folder / RECORDS).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return Records(problem=f"{folder / RECORDS}: cannot be read ({exc}); ignored")
    if not isinstance(data, dict):
        return Records(problem=f"{folder / RECORDS}: is not a JSON object; ignored")
    return Records(
        marketplaces={
            k: v for k, v in _mapping(data.get("marketplaces")).items() if isinstance(v, dict)
        },
        plugins={k: v for k, v in _mapping(data.get("plugins")).items() if isinstance(v, dict)},
        enabled={k: v for k, v in _mapping(data.get("enabled")).items() if isinstance(v, bool)},
    )


def write_records(records: Records, home: Path | None = None) -> None:
    folder = plugins_home(home)
    if folder is None:
        raise OSError("there is no MewCode folder to keep plugins in")
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = {
        "marketplaces": records.marketplaces,
        "plugins": records.plugins,
        "enabled": records.enabled,
    }
    fd, tmp = tempfile.mkstemp(prefix=".installed-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=True)
        os.replace(tmp, folder / RECORDS)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
