"""Installing a skill: download into a staging folder beside the target,
check it, then swap it in with one rename.

Only a skill that ``install_skill`` put there (it holds the install record)
is ever replaced: a folder of the same name written by hand is refused. Nor
does an install take a name any other skill already uses in any folder the
catalog reads (``skills_named``, asked just before the swap): a project
install would hide the user's skill of that name, a user install would be
hidden by the project's, and both without a word. Updating the same
installed skill in place stays allowed.
The staging folder is a dot-folder inside the skills folder the skill goes
to, so the final rename never crosses a file system. Nothing is swapped in
until the whole download passed every check (quotas, no traversal, no
symlinks, a valid ``SKILL.md`` at the top); a failure, a timeout or an
interrupt removes the staging folder and leaves any installed skill of the
same name as it was. Replacing a skill exchanges the two folders in one
``renameat2(RENAME_EXCHANGE)`` where Linux offers it; elsewhere the old
folder is renamed aside first and put back if the second rename fails.

The installed folder holds ``.mewcode-install.json``: the URL, a SHA-256
over every file's path and bytes, the file count and the time.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..errors import SkillError
from .catalog import INSTALL_RECORD, SKILL_FILE, SkillFolder, read_install_record, skills_named
from .download import download
from .parse import parse_skill
from .sources import InstallSettings, parse_source

__all__ = ["Installed", "content_hash", "install"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Installed:
    """What an install did: the skill's name, where it went, how many files,
    their content hash, and whether it replaced a skill of the same name."""

    name: str
    directory: Path
    files: int
    sha256: str
    replaced: bool


def content_hash(folder: Path) -> str:
    """SHA-256 over every file under ``folder`` (sorted relative path and the
    hash of its bytes), leaving out the install record."""
    digest = hashlib.sha256()
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != INSTALL_RECORD)
    for path in files:
        rel = path.relative_to(folder).as_posix()
        digest.update(rel.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


async def install(
    url: str,
    skills_dir: Path,
    settings: InstallSettings,
    *,
    folders: Sequence[SkillFolder] = (),
) -> Installed:
    """Install the skill at ``url`` into ``skills_dir`` (created if missing).
    ``folders``: every folder skills are read from (the catalog's), none of
    which may hold another skill of the same name. Raises ``SkillError``
    saying why nothing was installed."""
    source = parse_source(url, settings)
    staging = _make_staging(skills_dir)
    try:
        files = await download(source, staging, settings)
        # checks and the swap stay on this thread: an interrupt must not find them half done
        return _finish(source.url, staging, skills_dir, files, folders)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _make_staging(skills_dir: Path) -> Path:
    """A fresh staging folder inside ``skills_dir``: the swap never crosses file systems."""
    try:
        skills_dir.mkdir(parents=True, exist_ok=True)
        staging = skills_dir / f".staging-{secrets.token_hex(6)}"
        os.mkdir(staging, 0o755)
    except OSError as exc:
        raise SkillError(f"cannot create a folder in {skills_dir}: {exc.strerror}") from None
    return staging


def _finish(
    url: str, staging: Path, skills_dir: Path, files: int, folders: Sequence[SkillFolder]
) -> Installed:
    """Check the download, record where it came from, and swap it in."""
    skill_md = staging / SKILL_FILE
    if not skill_md.is_file() or skill_md.is_symlink():
        raise SkillError(f"{url} holds no SKILL.md at its top; refusing to install it")
    try:
        skill = parse_skill(skill_md.read_text(encoding="utf-8"), path=Path(SKILL_FILE))
    except (SkillError, UnicodeDecodeError) as exc:
        raise SkillError(f"the downloaded SKILL.md is not valid: {exc}") from None
    sha = content_hash(staging)
    record = {
        "url": url,
        "sha256": sha,
        "files": files,
        "installed_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    (staging / INSTALL_RECORD).write_text(json.dumps(record, indent=2) + "\n")
    target = skills_dir / skill.name
    _refuse_name_in_use(skill.name, target, folders)
    if target.is_dir() and not target.is_symlink() and not (target / INSTALL_RECORD).is_file():
        raise SkillError(
            f"{target} holds a skill that was not installed by install_skill (it may be your own "
            "work); move or remove it to install this one there"
        )
    replaced = _swap(staging, target)
    return Installed(name=skill.name, directory=target, files=files, sha256=sha, replaced=replaced)


def _refuse_name_in_use(name: str, target: Path, folders: Sequence[SkillFolder]) -> None:
    """Raise unless no skill uses ``name`` but the installed one at ``target``."""
    here = os.path.realpath(target)
    for folder, directory in skills_named(folders, name):
        record = read_install_record(directory)
        if os.path.realpath(directory) == here and record is not None:
            continue  # the installed skill this install updates
        whose = (
            f"installed by install_skill from {record.url}"
            if record is not None
            else "it was not installed by install_skill and may be your own work"
        )
        raise SkillError(
            f"a skill called {name!r} already exists in {folder.label}/{directory.name} "
            f"({directory}; {whose}); installing another into {target.parent} would replace it, "
            "hide it or be hidden by it. Rename, move or remove that one first"
        )


def _swap(
    staging: Path,
    target: Path,
    *,
    exchange: Callable[[Path, Path], bool] | None = None,
    rename: Callable[[Path, Path], None] = os.rename,
) -> bool:
    """Put ``staging`` at ``target``; whatever was there ends up at
    ``staging`` (for the caller to remove). ``True`` if a skill was replaced.
    ``exchange`` and ``rename`` are the system calls (replaced in tests)."""
    exchange = exchange or _exchange
    if target.is_symlink():
        raise SkillError(f"{target} is a symlink; remove it to install a skill there")
    if not target.exists():
        try:
            rename(staging, target)
        except OSError as exc:
            raise SkillError(f"cannot move the skill into {target}: {exc.strerror}") from None
        return False
    if not target.is_dir():
        raise SkillError(f"{target} exists and is not a folder")
    if exchange(staging, target):
        return True
    aside = target.with_name(f".old-{target.name}-{secrets.token_hex(4)}")
    try:
        rename(target, aside)
    except OSError as exc:
        raise SkillError(f"cannot replace {target}: {exc.strerror}") from None
    try:
        rename(staging, target)
    except OSError as exc:
        rename(aside, target)
        raise SkillError(f"cannot move the skill into {target}: {exc.strerror}") from None
    rename(aside, staging)
    return True


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one step (Linux ``renameat2``); ``False`` where
    that is not available, so the caller falls back."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    renameat2.restype = ctypes.c_int
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return result == 0
