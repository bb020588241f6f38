"""Marketplaces: ``.claude-plugin/marketplace.json`` (a name, an owner, and
plugin entries with a ``source``), read the way Claude Code writes them.

A plugin's ``source`` is a path inside the marketplace (``./plugins/x``,
below ``metadata.pluginRoot`` when set), ``{"source": "github", "repo":
"owner/repo"}``, or ``{"source": "url" | "git-subdir", "url": ..., "path":
...}``; ``ref`` may name a branch or tag. A source that breaks the rules
(a path leaving the marketplace, a host or scheme ``install_skill`` would
refuse, a kind MewCode cannot fetch such as ``npm``) is reported with the
file and the reason, and the marketplace's other plugins stay installable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .manifest import NAME
from .paths import PathRefused, read_json, resolve_component

__all__ = [
    "MARKETPLACE",
    "GitSource",
    "MarketEntry",
    "Marketplace",
    "MarketplaceError",
    "git_source",
    "read_marketplace",
]

MARKETPLACE = ".claude-plugin/marketplace.json"
_GITHUB = frozenset({"github.com", "www.github.com"})
_REPO_PART = NAME


class MarketplaceError(ValueError):
    """A marketplace or a source that cannot be used; the message says why."""


@dataclass(frozen=True, kw_only=True, slots=True)
class GitSource:
    """A git repository to clone (``https://github.com/<owner>/<repo>.git``),
    at ``ref`` (``None``: its default branch), the plugin in ``path`` of it."""

    url: str
    ref: str | None = None
    path: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class MarketEntry:
    """One plugin a marketplace offers: where it is (a folder inside the
    marketplace, or a git source) and its description."""

    name: str
    description: str = ""
    version: str = ""
    folder: Path | None = None
    git: GitSource | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Marketplace:
    name: str
    root: Path
    entries: Mapping[str, MarketEntry] = field(default_factory=dict)
    problems: tuple[str, ...] = ()


def git_source(url: str, *, ref: str | None = None, path: str = "") -> GitSource:
    """The git source ``url`` names, under ``install_skill``'s rules: https
    only, GitHub only, no user info or port, plain path segments (``owner/repo``
    alone means GitHub). ``MarketplaceError`` otherwise."""
    text = url.strip()
    if text.count("/") == 1 and "://" not in text and not text.startswith((".", "/", "~")):
        text = f"https://github.com/{text}"
    parts = urlsplit(text)
    if parts.scheme != "https":
        raise MarketplaceError(f"refusing {url!r}: only https git URLs are supported")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.username is not None or parts.password is not None or port is not None:
        raise MarketplaceError(f"refusing {url!r}: user info and ports are not allowed")
    if (parts.hostname or "").lower() not in _GITHUB:
        raise MarketplaceError(
            f"refusing {url!r}: unsupported host {parts.hostname!r}; plugins install from "
            "github.com (or a local folder)"
        )
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) != 2 or parts.query or parts.fragment:
        raise MarketplaceError(f"refusing {url!r}: expected https://github.com/<owner>/<repo>")
    owner, repo = segments[0], segments[1].removesuffix(".git")
    if not (_REPO_PART.match(owner) and _REPO_PART.match(repo)):
        raise MarketplaceError(f"refusing {url!r}: {owner}/{repo} is not a repository name")
    if ref is not None and (
        not isinstance(ref, str) or not _REPO_PART.match(ref.replace("/", "-"))
    ):
        raise MarketplaceError(f"refusing ref {ref!r}: not a branch or tag name")
    if path and (os.path.isabs(path) or ".." in Path(path).parts or "\\" in path):
        raise MarketplaceError(f"refusing path {path!r}: it must stay inside the repository")
    return GitSource(url=f"https://github.com/{owner}/{repo}.git", ref=ref, path=path.strip("/"))


def _entry(raw: Any, base: str, top: str) -> MarketEntry:
    if not isinstance(raw, Mapping):
        raise MarketplaceError("must be an object with 'name' and 'source'")
    name = raw.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise MarketplaceError(f"'name' must be a plugin name, not {name!r}")
    source = raw.get("source")
    text = {
        k: raw.get(k) if isinstance(raw.get(k), str) else "" for k in ("description", "version")
    }
    common = {"name": name, "description": text["description"], "version": text["version"]}
    if isinstance(source, str):
        try:
            folder = resolve_component(top, os.path.join(base, source), "source")
        except PathRefused as exc:
            raise MarketplaceError(f"plugin {name!r}: {exc}") from None
        if not folder.is_dir():
            raise MarketplaceError(f"plugin {name!r}: source {source!r} is not a folder")
        return MarketEntry(folder=folder, **common)
    if not isinstance(source, Mapping):
        raise MarketplaceError(f"plugin {name!r}: 'source' must be a path or an object")
    kind = source.get("source")
    ref = source.get("ref") if isinstance(source.get("ref"), str) else None
    try:
        if kind == "github" and isinstance(source.get("repo"), str):
            repo = f"https://github.com/{source['repo']}"
            return MarketEntry(git=git_source(repo, ref=ref), **common)
        if kind in ("url", "git") and isinstance(source.get("url"), str):
            return MarketEntry(git=git_source(source["url"], ref=ref), **common)
        if kind == "git-subdir" and isinstance(source.get("url"), str):
            sub = source.get("path") if isinstance(source.get("path"), str) else ""
            return MarketEntry(git=git_source(source["url"], ref=ref, path=sub), **common)
    except MarketplaceError as exc:
        raise MarketplaceError(f"plugin {name!r}: {exc}") from None
    raise MarketplaceError(f"plugin {name!r}: source kind {kind!r} is not supported here")


def read_marketplace(folder: Path) -> Marketplace:
    """The marketplace in ``folder``; ``MarketplaceError`` when its file is
    missing or unusable. Bad plugin entries are in ``problems``."""
    top = os.path.realpath(folder)
    path = Path(top) / MARKETPLACE
    if not os.path.lexists(path):
        raise MarketplaceError(f"{folder}: has no {MARKETPLACE}")
    try:
        data = read_json(path, top)
    except ValueError as exc:
        raise MarketplaceError(f"{path}: {exc}") from None
    if not isinstance(data, Mapping):
        raise MarketplaceError(f"{path}: must be a JSON object")
    name = data.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise MarketplaceError(f"{path}: 'name' must be a marketplace name, not {name!r}")
    plugins = data.get("plugins")
    if not isinstance(plugins, list):
        raise MarketplaceError(f"{path}: needs a 'plugins' list")
    meta = data.get("metadata")
    base = meta.get("pluginRoot") if isinstance(meta, Mapping) else None
    base = base if isinstance(base, str) else "."
    entries: dict[str, MarketEntry] = {}
    problems: list[str] = []
    for i, raw in enumerate(plugins):
        try:
            entry = _entry(raw, base, top)
        except MarketplaceError as exc:
            problems.append(f"{path}: plugins[{i}]: {exc}; not installable")
            continue
        if entry.name in entries:
            problems.append(f"{path}: plugins[{i}]: {entry.name!r} is listed twice; first kept")
            continue
        entries[entry.name] = entry
    return Marketplace(name=name, root=Path(top), entries=entries, problems=tuple(problems))
