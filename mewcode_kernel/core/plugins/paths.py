"""The path rules of a plugin: every file a plugin names stays inside it.

A component path from ``plugin.json`` is relative (Claude Code writes
``./commands``), never absolute, never climbing out with ``..``, and what it
reaches, followed through every symlink, is still inside the plugin's folder
(itself resolved once). The same holds for each file found while scanning a
component folder: a symlink inside ``skills/`` that leads to ``~/.ssh`` is
skipped and reported, never read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..fs.read_regular import read_regular_file

__all__ = ["MAX_JSON_BYTES", "PathRefused", "confined", "inside", "read_json", "resolve_component"]

#: a manifest, hooks file or server list larger than this is refused
MAX_JSON_BYTES = 1 << 20


class PathRefused(ValueError):
    """A path a plugin names that it may not use; the message says why."""


def inside(path: str | os.PathLike[str], top: str) -> bool:
    """Whether ``path``, resolved, is ``top`` (resolved) or below it."""
    real = os.path.realpath(path)
    return real == top or real.startswith(top.rstrip("/") + "/")


def resolve_component(top: str, spec: Any, field: str) -> Path:
    """The path ``spec`` (a component path of ``plugin.json``) names inside
    the plugin folder ``top`` (resolved); ``PathRefused`` when it is not text,
    absolute, climbs out or leads out through a symlink."""
    if not isinstance(spec, str) or not spec.strip():
        raise PathRefused(f"'{field}' paths must be non-empty text, not {spec!r}")
    text = spec.strip()
    if "\x00" in text or "\\" in text:
        raise PathRefused(f"'{field}' path {text!r} holds a NUL or a backslash")
    if os.path.isabs(text) or text.startswith("~"):
        raise PathRefused(f"'{field}' path {text!r} is absolute; it must stay in the plugin")
    if ".." in Path(text).parts:
        raise PathRefused(f"'{field}' path {text!r} climbs out of the plugin with '..'")
    path = Path(top) / text
    if not inside(path, top):
        raise PathRefused(
            f"'{field}' path {text!r} leads out of the plugin through a symlink "
            f"(to {os.path.realpath(path)})"
        )
    return path


def confined(path: Path, top: str) -> str:
    """``path`` resolved, when it stays in ``top``; else ``PathRefused``."""
    real = os.path.realpath(path)
    if not inside(real, top):
        raise PathRefused(f"{path} leads out of the plugin through a symlink (to {real})")
    return real


def read_json(path: Path, top: str | None = None) -> Any:
    """The JSON value of the regular file ``path`` (confined to ``top`` when
    given); ``ValueError`` (``PathRefused`` for the path rules) saying why."""
    real = confined(path, top) if top is not None else os.path.realpath(path)
    try:
        raw = read_regular_file(real, MAX_JSON_BYTES)
    except OSError as exc:
        raise ValueError(f"cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_JSON_BYTES:
        raise ValueError(f"is larger than {MAX_JSON_BYTES >> 20} MiB")
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError("is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"is not valid JSON: {exc.msg} (line {exc.lineno})") from None
