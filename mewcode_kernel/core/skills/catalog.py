"""The skill catalog: every skill a session can use, found in five folders.

In precedence order (the first folder holding a name wins): the project's
``.mewcode/skills/``, ``.claude/skills/`` and ``.agents/skills/``, then the
user's ``~/.mewcode/skills/`` and ``~/.claude/skills/``. A skill is a
directory holding ``SKILL.md``; loose files and dot-directories are ignored.
Names are compared case-insensitively and Unicode-normalised (``skill_key``).
A file that cannot be used is reported (file, line, reason) and skipped; a
skill hidden by another of the same name is reported naming both, so a
hand-made skill is never hidden silently; the same folder reached twice
through a symlink is not a duplicate. ``skills_named`` finds every skill
using a name in any folder (also one whose ``SKILL.md`` cannot be parsed, by
its folder's name): ``install_skill`` asks it before taking a name.

The catalog is read at session boundaries and after an install
(``reload``), never mid-turn. Readers share immutable ``Skill`` values and
one snapshot that ``reload`` replaces whole, so nobody sees a half-made
change; ``load`` re-reads a skill's ``SKILL.md`` so edits apply at once.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import SkillError
from ..fs.read_regular import read_regular_file
from ..plugins import discover_plugins
from ..project_paths import PROJECT_SKILL_PARENTS
from ..userdirs import display_path, mewcode_home
from .parse import parse_skill, skill_key
from .plugin_skills import extra_skills, reread
from .skill import InstallRecord, Skill, Source

__all__ = [
    "INSTALL_RECORD",
    "MAX_SKILL_MD_BYTES",
    "SKILL_FILE",
    "SkillCatalog",
    "SkillFolder",
    "read_install_record",
    "skill_folders",
    "skills_named",
]

SKILL_FILE = "SKILL.md"
INSTALL_RECORD = ".mewcode-install.json"
#: A SKILL.md larger than this is refused (it would not fit a prompt anyway).
MAX_SKILL_MD_BYTES = 1 << 20


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillFolder:
    """A folder of skills: where it is, whose it is, and how people write it."""

    path: Path
    source: Source
    label: str


def skill_folders(root: Path, home: Path, state: Path | None = None) -> list[SkillFolder]:
    """The folders skills are read from, highest precedence first (``state``:
    the user's MewCode folder, default ``home/.mewcode``)."""
    project = [
        SkillFolder(path=root / d / "skills", source="project", label=f"{d}/skills")
        for d in PROJECT_SKILL_PARENTS
    ]
    mine = state if state is not None else home / ".mewcode"
    user = [
        SkillFolder(path=mine / "skills", source="user", label=display_path(mine / "skills", home)),
        SkillFolder(path=home / ".claude" / "skills", source="user", label="~/.claude/skills"),
    ]
    return [*project, *user]


def read_install_record(directory: Path) -> InstallRecord | None:
    """The record ``install_skill`` left in ``directory``, if any and readable."""
    try:
        data = json.loads((directory / INSTALL_RECORD).read_text(encoding="utf-8"))
        return InstallRecord(
            url=str(data["url"]),
            sha256=str(data["sha256"]),
            files=int(data["files"]),
            installed_at=str(data.get("installed_at", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _read_skill(path: Path, folder: SkillFolder) -> Skill:
    """Parse one SKILL.md found in ``folder``; raises ``SkillError``."""
    try:  # a FIFO or device planted as SKILL.md must not block the scan
        raw = read_regular_file(os.path.realpath(path), MAX_SKILL_MD_BYTES)
    except OSError as exc:
        raise SkillError(f"cannot be read ({exc.strerror})", path=str(path)) from None
    if len(raw) > MAX_SKILL_MD_BYTES:
        raise SkillError(f"is larger than {MAX_SKILL_MD_BYTES >> 20} MiB", path=str(path))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillError(f"is not UTF-8 text (byte {exc.start})", path=str(path)) from None
    skill = parse_skill(text, path=path)
    return replace(
        skill,
        source=folder.source,
        origin=folder.label,
        install=read_install_record(path.parent),
    )


def skills_named(folders: Iterable[SkillFolder], name: str) -> list[tuple[SkillFolder, Path]]:
    """Every skill folder in ``folders`` that uses ``name``: its ``SKILL.md``
    names it, or (when that file names nothing readable) the folder itself
    is called so. Read now, not from a catalog's snapshot."""
    key = skill_key(name)
    found: list[tuple[SkillFolder, Path]] = []
    for folder in folders:
        try:
            entries = sorted(os.scandir(folder.path), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            path = Path(entry.path) / SKILL_FILE
            if not path.is_file():
                continue
            try:
                named = _read_skill(path, folder).name
            except SkillError:
                named = None
            if named == key or (named is None and skill_key(entry.name) == key):
                found.append((folder, Path(entry.path)))
    return found


@dataclass(frozen=True, kw_only=True, slots=True)
class _Snapshot:
    skills: Mapping[str, Skill] = field(default_factory=dict)
    problems: tuple[str, ...] = ()


def _scan(folders: Iterable[SkillFolder], extra: tuple[list[Skill], list[str]]) -> _Snapshot:
    """The skills of ``folders``, then ``extra`` (plugins' skills and command
    files, with the problems met reading them): a folder's skill keeps its name."""
    found: dict[str, Skill] = {}
    seen: set[str] = set()
    problems: list[str] = []
    for folder in folders:
        try:
            entries = sorted(os.scandir(folder.path), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            path = Path(entry.path) / SKILL_FILE
            if not path.is_file():
                continue
            real = os.path.realpath(path)
            if real in seen:  # the same skill reached again through a symlink
                continue
            seen.add(real)
            try:
                skill = _read_skill(path, folder)
            except SkillError as exc:
                problems.append(f"skipped skill {exc}")
                continue
            problems += [f"{path}: {w}" for w in skill.warnings]
            if skill.name in found:
                kept = found[skill.name]
                problems.append(
                    f"{path}: skill {skill.name!r} in {skill.display_dir} is hidden by the one "
                    f"in {kept.display_dir} ({kept.path.parent}), which takes precedence; "
                    "this one is not used"
                )
                continue
            found[skill.name] = skill
    more, more_problems = extra
    problems += more_problems
    for skill in more:
        kept = found.get(skill.name)
        if kept is not None:
            problems.append(
                f"{skill.path}: {'command' if skill.command else 'skill'} {skill.name!r} is "
                f"hidden by the one in {kept.display_dir} ({kept.path}), which takes precedence"
            )
            continue
        found[skill.name] = skill
    return _Snapshot(skills=dict(sorted(found.items())), problems=tuple(problems))


class SkillCatalog:
    """The skills of project ``root`` and of the user at ``home``.

    ``version`` goes up with every ``reload``. ``problems`` lists files that
    were skipped or read with a fallback, one readable line each.
    """

    def __init__(self, root: Path, *, home: Path | None = None) -> None:
        self.root = root
        self.home = home if home is not None else Path.home()
        #: the home folder asked for (``None``: the user's): plugins are found from it
        self.given_home = home
        self.plugin_roots: dict[str, Path] = {}
        #: the user's MewCode folder (``MEWCODE_HOME``), where user skills are installed
        self.state = mewcode_home(home) or self.home / ".mewcode"
        self.folders = skill_folders(root, self.home, self.state)
        self.version = 0
        self._lock = threading.Lock()
        self._snapshot = _scan(self.folders, self._extra())

    def _extra(self) -> tuple[list[Skill], list[str]]:
        plugins = discover_plugins(self.root, home=self.given_home)
        self.plugin_roots = {p.name: p.root for p in plugins.plugins}
        return extra_skills(self.root, self.given_home, plugins)

    def reload(self) -> None:
        """Read the folders again (blocking file I/O: use a thread in async code)."""
        snapshot = _scan(self.folders, self._extra())
        with self._lock:
            self._snapshot = snapshot
            self.version += 1

    # --- reading -----------------------------------------------------------------

    @property
    def problems(self) -> tuple[str, ...]:
        return self._snapshot.problems

    def skills(self) -> list[Skill]:
        """Every usable skill, sorted by name."""
        return list(self._snapshot.skills.values())

    def get(self, name: str) -> Skill | None:
        """The skill called ``name`` (any case), or ``None``."""
        return self._snapshot.skills.get(skill_key(name))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __len__(self) -> int:
        return len(self._snapshot.skills)

    def load(self, name: str) -> tuple[Skill, str | None]:
        """The skill called ``name`` re-read from its ``SKILL.md`` (so edits made
        since the catalog was read apply), and a note when the file could not
        be read again and the catalog's copy is used. Raises ``SkillError`` for
        an unknown name."""
        known = self.get(name)
        if known is None:
            raise SkillError(self.unknown(name))
        folder = SkillFolder(path=known.directory.parent, source=known.source, label=known.origin)
        try:
            if known.prefix or known.command:
                fresh = reread(known, self.plugin_roots.get(known.prefix.rstrip(":")))
            else:
                fresh = _read_skill(known.path, folder)
        except SkillError as exc:
            return known, f"{exc}; using the copy read at session start"
        if fresh.name != known.name:
            return known, (
                f"{known.path} now names the skill {fresh.name!r}; using the copy read at "
                "session start until the catalog is read again"
            )
        return fresh, None

    def unknown(self, name: str) -> str:
        """The message for a skill name that is not in the catalog."""
        names = ", ".join(s.name for s in self.skills()) or "none"
        return f"there is no skill called {name.strip()!r} (available: {names})"
