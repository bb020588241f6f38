"""``/plugin`` actions: adding a marketplace, installing a plugin from one,
turning plugins on and off. Everything goes into the user's MewCode folder
(``MEWCODE_HOME/plugins``): marketplaces fetched from git under
``marketplaces/<name>``, plugins under ``cache/<market>/<plugin>``, and the
records (``records``). A local marketplace folder is read where it is.

An install copies into a staging folder beside its target (``fetch``: the
download rules of ``install_skill``), checks the result is a plugin, then
swaps it in with one rename; a failure leaves any earlier install as it was.
Only a folder these records name is ever replaced.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from .fetch import Quota, clone, content_hash, copy_tree
from .manifest import NAME, PluginError, read_plugin
from .marketplace import Marketplace, MarketplaceError, git_source, read_marketplace
from .records import Records, plugins_home, read_records, write_records

__all__ = ["Installed", "add_marketplace", "install_plugin", "known_marketplaces", "set_enabled"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Installed:
    key: str
    directory: Path
    files: int
    sha256: str
    replaced: bool
    problems: tuple[str, ...] = ()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _home_folder(home: Path | None) -> Path:
    folder = plugins_home(home)
    if folder is None:
        raise MarketplaceError("there is no MewCode folder to install plugins into")
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def _records(home: Path | None) -> Records:
    records = read_records(home)
    if records.problem:
        raise MarketplaceError(f"{records.problem}; fix or remove it first")
    return records


async def add_marketplace(
    source: str, *, base: Path, home: Path | None = None, quota: Quota | None = None
) -> Marketplace:
    """Add the marketplace at ``source``: a local folder (relative to
    ``base``) or a GitHub git URL (``owner/repo`` too). Raises
    ``MarketplaceError`` saying why nothing was added."""
    quota = quota or Quota()
    text = source.strip()
    if not text:
        raise MarketplaceError("usage: /plugin marketplace add PATH|GIT-URL")
    local = await asyncio.to_thread(_local_folder, base, text)
    records = _records(home)
    if "://" not in text and local is not None:
        market = await asyncio.to_thread(read_marketplace, local)
        entry = {"source": str(market.root), "path": str(market.root), "kind": "folder"}
    else:
        git = git_source(text)
        folder = _home_folder(home) / "marketplaces"
        folder.mkdir(exist_ok=True, mode=0o700)
        with tempfile.TemporaryDirectory(dir=folder, prefix=".clone-") as tmp:
            cloned = await clone(git, Path(tmp), quota)
            staging = Path(tmp) / "copy"
            await asyncio.to_thread(copy_tree, cloned, staging, quota)
            market = await asyncio.to_thread(read_marketplace, staging)
            target = folder / market.name
            _swap(staging, target, replace_ok=_ours(records, market.name, target))
        market = await asyncio.to_thread(read_marketplace, target)
        entry = {"source": git.url, "path": str(target), "kind": "git"}
    known = records.marketplaces.get(market.name)
    if known is not None and known.get("source") != entry["source"]:
        raise MarketplaceError(
            f"a marketplace called {market.name!r} is already added from {known.get('source')}; "
            "the name is taken"
        )
    records.marketplaces[market.name] = {**entry, "added_at": _now()}
    write_records(records, home)
    return market


def _local_folder(base: Path, text: str) -> Path | None:
    path = base / Path(text).expanduser()  # an absolute path stays itself
    return path if path.is_dir() else None


def _ours(records: Records, name: str, target: Path) -> bool:
    known = records.marketplaces.get(name)
    return known is not None and known.get("path") == str(target)


def known_marketplaces(home: Path | None = None) -> tuple[list[Marketplace], list[str]]:
    """The marketplaces added, read now, and the ones that cannot be read."""
    found: list[Marketplace] = []
    problems: list[str] = []
    records = read_records(home)
    if records.problem:
        problems.append(records.problem)
    for name, entry in sorted(records.marketplaces.items()):
        try:
            found.append(read_marketplace(Path(str(entry.get("path")))))
        except MarketplaceError as exc:
            problems.append(f"marketplace {name!r}: {exc}")
    return found, problems


def _swap(staging: Path, target: Path, *, replace_ok: bool) -> bool:
    """Put ``staging`` at ``target``; ``True`` when it replaced an earlier one."""
    if os.path.lexists(target):
        if not replace_ok:
            raise MarketplaceError(f"{target} exists and was not installed by /plugin; left alone")
        aside = target.with_name(f".old-{target.name}-{secrets.token_hex(4)}")
        os.rename(target, aside)
        try:
            os.rename(staging, target)
        except OSError:
            os.rename(aside, target)
            raise
        shutil.rmtree(aside, ignore_errors=True)
        return True
    os.rename(staging, target)
    return False


async def install_plugin(
    spec: str, *, home: Path | None = None, quota: Quota | None = None
) -> Installed:
    """Install ``NAME@MARKET`` (``NAME`` alone: the one marketplace offering
    it). Raises ``MarketplaceError`` saying why nothing was installed."""
    quota = quota or Quota()
    name, _, market_name = spec.strip().partition("@")
    records = _records(home)
    markets, _ = known_marketplaces(home)
    if not market_name:
        offering = [m.name for m in markets if name in m.entries]
        if len(offering) != 1:
            where = ", ".join(offering) or "no marketplace you added"
            raise MarketplaceError(f"say which marketplace: {name}@MARKET ({name!r} is in {where})")
        market_name = offering[0]
    if not NAME.match(name) or not NAME.match(market_name):
        raise MarketplaceError(f"{spec!r} is not NAME@MARKET")
    market = next((m for m in markets if m.name == market_name), None)
    if market is None:
        raise MarketplaceError(
            f"no marketplace {market_name!r}; add it with /plugin marketplace add PATH|GIT-URL"
        )
    entry = market.entries.get(name)
    if entry is None:
        bad = [p for p in market.problems if f"{name!r}" in p]
        why = f" ({bad[0]})" if bad else ""
        raise MarketplaceError(f"marketplace {market_name!r} offers no installable {name!r}{why}")
    key = f"{name}@{market_name}"
    folder = _home_folder(home) / "cache" / market_name
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = folder / name
    with tempfile.TemporaryDirectory(dir=folder, prefix=".staging-") as tmp:
        staging = Path(tmp) / "plugin"
        if entry.git is not None:
            source = await clone(entry.git, Path(tmp), quota)
            shown = entry.git.url + (f" ({entry.git.path})" if entry.git.path else "")
        else:
            assert entry.folder is not None
            source, shown = entry.folder, str(entry.folder)
        files = await asyncio.to_thread(copy_tree, source, staging, quota)
        try:
            _, problems = read_plugin(
                staging, scope="user", origin="install", key=key, name_hint=name
            )
        except PluginError as exc:
            raise MarketplaceError(f"{key} is not a usable plugin: {exc}") from None
        digest = await asyncio.to_thread(content_hash, staging)
        known = records.plugins.get(key)
        replaced = _swap(
            staging, target, replace_ok=known is not None and known.get("path") == str(target)
        )
    records.plugins[key] = {
        "path": str(target), "source": shown, "sha256": digest, "files": files,
        "installed_at": _now(), "version": entry.version,
    }  # fmt: skip
    records.enabled[key] = True
    write_records(records, home)
    return Installed(
        key=key, directory=target, files=files, sha256=digest, replaced=replaced,
        problems=tuple(p.replace(str(staging), str(target)) for p in problems),
    )  # fmt: skip


def set_enabled(key: str, on: bool, *, home: Path | None = None) -> None:
    """Turn the plugin ``key`` (``name@market``, or a listed folder) on or off."""
    records = _records(home)
    records.enabled[key] = on
    write_records(records, home)
