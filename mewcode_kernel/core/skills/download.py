"""Downloading a skill into a staging folder, within quotas.

A directory is walked through the GitHub contents API: each listing entry is
checked before anything is written (a name that is empty, ``.``, ``..`` or
holds a separator, a ``path`` that is not the listing's own path plus the
name, a symlink or submodule, a directory nested too deep, too many files,
a file or a total over its size limit), and files are fetched from their
``download_url`` only when it points at the configured raw or API server.
Sizes are checked against the listing and again while reading (a listing
may lie). Files are created with ``O_EXCL | O_NOFOLLOW`` under a staging
folder nobody else writes to. The whole download has one time limit.
Any refusal raises ``SkillError``; the caller discards the staging folder.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from ..errors import SkillError
from .sources import InstallSettings, InstallSource

__all__ = ["download"]

_HEADERS = {"Accept": "application/vnd.github.v3+json", "User-Agent": "mewcode"}
_MAX_LISTING_BYTES = 4 << 20
_BAD_NAME = ("/", "\\", "\x00")


@dataclass(kw_only=True)
class _Budget:
    settings: InstallSettings
    files: int = 0
    folders: int = 0
    total: int = 0

    def add_folder(self, shown: str) -> None:
        self.folders += 1  # every folder costs a request: as many as files at most
        if self.folders > self.settings.max_files:
            raise SkillError(f"refusing: the skill has more than {self.settings.max_files} folders")

    def add_file(self, shown: str, size: int) -> None:
        s = self.settings
        self.files += 1
        if self.files > s.max_files:
            raise SkillError(f"refusing: the skill has more than {s.max_files} files")
        if size > s.max_file_bytes:
            raise SkillError(f"refusing: {shown} is larger than {_mib(s.max_file_bytes)}")

    def add_bytes(self, shown: str, written: int, n: int) -> None:
        s = self.settings
        self.total += n
        if written > s.max_file_bytes:
            raise SkillError(f"refusing: {shown} is larger than {_mib(s.max_file_bytes)}")
        if self.total > s.max_total_bytes:
            raise SkillError(f"refusing: the skill is larger than {_mib(s.max_total_bytes)} in all")


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB"


async def download(source: InstallSource, staging: Path, settings: InstallSettings) -> int:
    """Fetch ``source`` into the empty folder ``staging``; the number of files."""
    budget = _Budget(settings=settings)
    try:
        async with (
            asyncio.timeout(settings.timeout),
            httpx2.AsyncClient(
                headers=_HEADERS, timeout=settings.timeout, follow_redirects=False
            ) as client,
        ):
            fetch = _Fetcher(client=client, source=source, settings=settings, budget=budget)
            if source.kind == "file":
                budget.add_file("SKILL.md", 0)
                await fetch.file(source.file_url, staging / "SKILL.md", "SKILL.md")
            else:
                await fetch.tree(staging)
    except TimeoutError:
        raise SkillError(
            f"the download did not finish within {settings.timeout:g} s; nothing was installed"
        ) from None
    except httpx2.HTTPError as exc:
        raise SkillError(f"the download failed: {type(exc).__name__}: {exc}") from None
    except OSError as exc:  # two entries with one name, a name the file system refuses
        name = str(exc.filename or "a file").removeprefix(f"{staging}{os.sep}")
        raise SkillError(f"refusing: cannot write {name}: {exc.strerror}") from None
    return budget.files


@dataclass(kw_only=True)
class _Fetcher:
    client: httpx2.AsyncClient
    source: InstallSource
    settings: InstallSettings
    budget: _Budget

    async def tree(self, staging: Path) -> None:
        """The first of the source's paths that exists, into ``staging``."""
        for n, path in enumerate(self.source.paths):
            url = self.source.listing_url(path)
            try:
                listing = await self._json(url)
            except _NotFound:
                if n + 1 < len(self.source.paths):
                    continue
                tried = ", ".join(repr(p or "/") for p in self.source.paths)
                raise SkillError(f"not found on GitHub: {tried} in {self.source.url}") from None
            await self._dir(listing, path, "", staging)
            return

    async def _dir(self, listing: Any, path: str, rel: str, into: Path) -> None:
        """Write the folder ``listing`` (at repository path ``path``, at ``rel``
        in the skill) into ``into``, refusing its entries before writing any."""
        if not isinstance(listing, list):
            kind = listing.get("type") if isinstance(listing, dict) else type(listing).__name__
            raise SkillError(f"expected a directory listing at {path or '/'}, got a {kind}")
        if len(listing) > self.settings.max_files:
            raise SkillError(f"refusing: the skill has more than {self.settings.max_files} files")
        depth = rel.count("/") + 1 if rel else 0
        entries = [self._entry(e, path) for e in listing]
        for kind, name, _, _ in entries:
            shown = f"{rel}/{name}" if rel else name
            if kind in ("symlink", "submodule"):
                raise SkillError(
                    f"refusing: {shown} is a {kind}; skills holding one are not installed"
                )
            if kind == "dir" and depth + 1 > self.settings.max_depth:
                raise SkillError(
                    f"refusing: {shown} is nested more than {self.settings.max_depth} folders deep"
                )
            if kind not in ("file", "dir"):
                raise SkillError(f"refusing: {shown} has the unknown type {kind!r}")
        for kind, name, sub, entry in entries:
            shown = f"{rel}/{name}" if rel else name
            target = into / name
            if kind == "dir":
                self.budget.add_folder(shown)
                os.mkdir(target, 0o755)
                listing = await self._json(self.source.listing_url(sub))
                await self._dir(listing, sub, shown, target)
                continue
            size = entry.get("size")
            self.budget.add_file(shown, size if isinstance(size, int) else 0)
            url = entry.get("download_url")
            if url is None:  # the contents API lists a submodule as a file without one
                raise SkillError(f"refusing: {shown} cannot be downloaded (a submodule?)")
            if not isinstance(url, str) or not self._trusted(url):
                raise SkillError(f"refusing: {shown} would be downloaded from {url!r}, not GitHub")
            await self.file(url, target, shown)

    def _entry(self, entry: Any, path: str) -> tuple[str, str, str, dict[str, Any]]:
        if not isinstance(entry, dict):
            raise SkillError(f"the listing of {path or '/'} is not a GitHub contents listing")
        name, kind = entry.get("name"), entry.get("type")
        if (
            not isinstance(name, str)
            or name in ("", ".", "..")
            or any(c in name for c in _BAD_NAME)
            or not isinstance(kind, str)
        ):
            raise SkillError(
                f"refusing: the listing of {path or '/'} names {name!r}, which would write "
                "outside the skill's folder"
            )
        sub = f"{path}/{name}" if path else name
        listed = entry.get("path", sub)
        if listed != sub:
            raise SkillError(
                f"refusing: the listing of {path or '/'} puts {name!r} at {listed!r}, outside "
                "the folder listed"
            )
        return kind, name, sub, entry

    def _trusted(self, url: str) -> bool:
        bases = (self.settings.raw_url, self.settings.api_url)
        return any(url.startswith(b + "/") for b in bases)

    async def _json(self, url: str) -> Any:
        body = await self._get(url, limit=_MAX_LISTING_BYTES, shown=url)
        try:
            return json.loads(body)
        except ValueError:
            raise SkillError(f"{url} did not answer with a GitHub contents listing") from None

    async def file(self, url: str, target: Path, shown: str) -> None:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as out:
            written = 0
            async with self.client.stream("GET", url) as response:
                await self._check(response, url)
                async for chunk in response.aiter_bytes():
                    written += len(chunk)
                    self.budget.add_bytes(shown, written, len(chunk))
                    out.write(chunk)

    async def _get(self, url: str, *, limit: int, shown: str) -> bytes:
        parts: list[bytes] = []
        size = 0
        async with self.client.stream("GET", url) as response:
            await self._check(response, url)
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    raise SkillError(f"refusing: {shown} answered with more than {_mib(limit)}")
                parts.append(chunk)
        return b"".join(parts)

    async def _check(self, response: httpx2.Response, url: str) -> None:
        status = response.status_code
        if status == 200:
            return
        if status == 404:
            raise _NotFound(url)
        if 300 <= status < 400:
            where = response.headers.get("location", "?")
            raise SkillError(f"{url} redirects to {where}; redirects are not followed")
        detail = (await response.aread())[:1024].decode("utf-8", errors="replace").strip()
        if status in (403, 429):
            raise SkillError(
                f"GitHub refused {url} ({status}: rate limit or access): {detail}".rstrip(": ")
            )
        raise SkillError(f"{url} answered HTTP {status}: {detail}".rstrip(": "))


class _NotFound(SkillError):
    def __init__(self, url: str) -> None:
        super().__init__(f"not found (404): {url}")
