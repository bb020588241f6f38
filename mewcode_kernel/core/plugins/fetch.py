"""Bringing a plugin's files into the user's MewCode folder, under the rules
``install_skill`` downloads by: nothing but regular files and folders (a
symlink, FIFO or device anywhere refuses the whole copy), no name with a
control character or backslash, quotas on files, bytes and depth, and git
only over https from GitHub with every program git could run turned off.
The copy goes to a staging folder; the caller swaps it in.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .marketplace import GitSource, MarketplaceError

__all__ = ["Quota", "clone", "content_hash", "copy_tree"]

_BAD_NAME = re.compile(r"[\x00-\x1f\x7f\\]")
_CHUNK = 1 << 16


@dataclass(frozen=True, kw_only=True, slots=True)
class Quota:
    """Limits of one plugin or marketplace copy (plugins carry scripts and
    references, so more than one skill's quota)."""

    max_files: int = 2000
    max_file_bytes: int = 8 << 20
    max_total_bytes: int = 64 << 20
    max_depth: int = 12
    timeout: float = 120.0


def copy_tree(src: Path, dest: Path, quota: Quota) -> int:
    """Copy the folder ``src`` to ``dest`` (which must not exist), leaving out
    a top-level ``.git``; the number of files. ``MarketplaceError`` saying why
    when anything breaks the rules (``dest`` is then incomplete: remove it)."""
    files = 0
    total = 0
    dest.mkdir(mode=0o755)
    pending: list[tuple[Path, Path, int]] = [(src, dest, 0)]
    while pending:
        here, into, depth = pending.pop()
        with os.scandir(here) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                rel = os.path.relpath(entry.path, src)
                if _BAD_NAME.search(entry.name):
                    raise MarketplaceError(f"{rel!r}: a name with a control character or '\\'")
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    raise MarketplaceError(
                        f"{rel}: is a symlink; plugins are installed without links"
                    )
                if stat.S_ISDIR(info.st_mode):
                    if depth == 0 and entry.name == ".git":
                        continue
                    if depth + 1 > quota.max_depth:
                        raise MarketplaceError(f"{rel}: deeper than {quota.max_depth} folders")
                    (into / entry.name).mkdir(mode=0o755)
                    pending.append((Path(entry.path), into / entry.name, depth + 1))
                    continue
                if not stat.S_ISREG(info.st_mode):
                    raise MarketplaceError(f"{rel}: is not a regular file")
                files += 1
                if files > quota.max_files:
                    raise MarketplaceError(f"more than {quota.max_files} files")
                total += _copy_file(Path(entry.path), into / entry.name, info, quota, rel)
                if total > quota.max_total_bytes:
                    raise MarketplaceError(f"more than {quota.max_total_bytes >> 20} MiB in all")
    return files


def _copy_file(src: Path, dest: Path, info: os.stat_result, quota: Quota, rel: str) -> int:
    if info.st_size > quota.max_file_bytes:
        raise MarketplaceError(f"{rel}: larger than {quota.max_file_bytes >> 20} MiB")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(src, flags)
    written = 0
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since it was listed
            raise MarketplaceError(f"{rel}: is not a regular file")
        mode = 0o755 if info.st_mode & 0o111 else 0o644
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        try:
            while chunk := os.read(fd, _CHUNK):
                written += len(chunk)
                if written > quota.max_file_bytes:
                    raise MarketplaceError(f"{rel}: larger than {quota.max_file_bytes >> 20} MiB")
                os.write(out, chunk)
        finally:
            os.close(out)
    finally:
        os.close(fd)
    return written


def content_hash(folder: Path) -> str:
    """SHA-256 over every file under ``folder`` (sorted path and bytes' hash)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        rel = path.relative_to(folder).as_posix()
        digest.update(rel.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


_GIT_SAFE = (
    "-c", "protocol.allow=never", "-c", "protocol.https.allow=always",
    "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.symlinks=false",
    "-c", "submodule.recurse=false", "-c", "http.followRedirects=false",
)  # fmt: skip


async def clone(source: GitSource, into: Path, quota: Quota) -> Path:
    """Clone ``source`` (shallow) below ``into``; the folder of its ``path``."""
    target = into / "repo"
    argv = ["git", *_GIT_SAFE, "clone", "--depth", "1", "--no-tags", "--single-branch"]
    if source.ref:
        argv += ["--branch", source.ref]
    argv += ["--", source.url, str(target)]
    with tempfile.TemporaryDirectory(prefix="mewcode-git-home-") as git_home:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": git_home,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
        }
        proc = await asyncio.create_subprocess_exec(
            *argv, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        try:
            _, err = await asyncio.wait_for(proc.communicate(), quota.timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise MarketplaceError(
                f"cloning {source.url} took longer than {quota.timeout:.0f}s"
            ) from None
    if proc.returncode != 0:
        why = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["git failed"]
        raise MarketplaceError(f"cannot clone {source.url}: {why[0]}")
    folder = target / source.path if source.path else target
    if not await asyncio.to_thread(_inside_dir, folder, target):
        raise MarketplaceError(f"{source.url} has no folder {source.path!r}")
    return folder


def _inside_dir(folder: Path, top: Path) -> bool:
    real, base = os.path.realpath(folder), os.path.realpath(top)
    return os.path.isdir(real) and (real == base or real.startswith(base + "/"))
