"""Tool caches for the user's own programs in the sandbox: each hook scope and
each stdio MCP server gets a cache folder of its own, writable and kept
between runs, so ``uv run``, ``npx -y``, ``pip`` and the like work inside
the sandbox as they do outside it.

They are never the user's real caches (``~/.cache``, ``~/.npm``): what
runs later outside the sandbox (the user's own ``uv run``, ``npx``) reads
those, so a sandboxed process that could write them could plant code that
runs unconfined. Each folder lives in the user's MewCode folder, which the
sandbox hides from every process, and is shown (writable) only to its
owner: the user's hooks, one project's hooks, one MCP server. No owner sees
another's, and the model's own commands (``bash``) see none.

A process finds its folder through the variables the tools read:
``XDG_CACHE_HOME`` (uv, pip, pre-commit, yarn, pnpm, deno, go, ...),
``npm_config_cache`` (npm and npx, whose packages live in their cache,
servers keeping state in their package folder included) and
``BUN_INSTALL_CACHE_DIR``. A server's own ``env`` still wins.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["CACHE_DIR", "CACHE_VARIABLES", "ToolCache", "cache_owner", "tool_cache"]

#: the folder, in the user's MewCode folder, holding one cache folder per owner
CACHE_DIR = "sandbox-cache"
#: the variables a process finds its cache folder by (values: below the folder)
CACHE_VARIABLES: dict[str, str] = {
    "XDG_CACHE_HOME": "",
    "npm_config_cache": "npm",
    "BUN_INSTALL_CACHE_DIR": "bun",
}
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")

Kind = Literal["hooks", "mcp"]
Scope = Literal["user", "project"]


@dataclass(frozen=True, slots=True)
class ToolCache:
    """One owner's cache folder (absolute, resolved)."""

    path: str

    def env(self) -> dict[str, str]:
        """The variables that point the tools at this folder."""
        return {name: os.path.join(self.path, sub) if sub else self.path
                for name, sub in CACHE_VARIABLES.items()}  # fmt: skip


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def cache_owner(kind: Kind, scope: Scope, *, root: str | os.PathLike[str], name: str = "") -> str:
    """The folder name of one owner: the user's hooks, one project's hooks,
    one MCP server (of the user, or of one project). Readable, and unique
    however ``name`` is spelled (a digest of the exact name and project)."""
    project = os.path.realpath(root) if scope == "project" else ""
    label = _SAFE.sub("_", name)[:40].strip("._") if name else ""
    pieces = [kind, scope, *([label] if label else [])]
    if name or project:
        pieces.append(_digest(kind, scope, project, name))
    return "-".join(pieces)


def tool_cache(state_dir: Path | None, owner: str) -> ToolCache | None:
    """``owner``'s cache folder in ``state_dir`` (the user's MewCode folder),
    made (0700) if needed; ``None`` when there is no such folder or a part
    of the way is not a plain folder (a symlink is never followed)."""
    if state_dir is None or not owner or _SAFE.search(owner) or owner.startswith("."):
        return None
    path = Path(os.path.realpath(state_dir))  # the user's own link (dotfiles) is fine
    for part in (None, CACHE_DIR, owner):
        if part is not None:
            path = path / part
        try:
            path.mkdir(mode=0o700, exist_ok=True)
            info = os.lstat(path)
        except OSError:
            return None
        if not stat.S_ISDIR(info.st_mode):
            return None
    return ToolCache(os.path.realpath(path))
