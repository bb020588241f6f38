"""Skills that come from plugins and from command files.

A plugin's skills are ``/<plugin>:<skill>`` and its commands
(``commands/<name>.md``, with ``$ARGUMENTS``) ``/<plugin>:<name>``; command
files without a plugin (``.claude/commands/*.md`` in the project,
``~/.claude/commands/*.md`` for the user) are ``/<name>``. A command is an
inline skill named after its file: its frontmatter (``description``,
``argument-hint``, ``allowed-tools``, ``model``) is read like a skill's, and
without a ``description`` its first line describes it.
``${CLAUDE_PLUGIN_ROOT}`` in a plugin's skill or command text becomes the
plugin's folder, as Claude Code does. Every file is read under the plugin's
path rules (a symlink out of the plugin is never read).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from ..errors import SkillError
from ..fs.read_regular import read_regular_file
from ..plugins import PluginSet, substitute_root
from ..plugins.paths import inside
from ..userdirs import user_home
from .parse import parse_skill
from .skill import Skill, Source

__all__ = ["COMMAND_DIRS", "extra_skills", "reread"]

#: command files without a plugin: the project's, then the user's (under ``~``)
COMMAND_DIRS = ".claude/commands"
_MAX_BYTES = 1 << 20
_MAX_FILES = 500


def _read(path: Path, top: str | None) -> str:
    real = os.path.realpath(path)
    if top is not None and not inside(real, top):
        raise SkillError("leads out of its folder through a symlink; not read", path=str(path))
    try:
        raw = read_regular_file(real, _MAX_BYTES)
    except OSError as exc:
        raise SkillError(f"cannot be read ({exc.strerror})", path=str(path)) from None
    if len(raw) > _MAX_BYTES:
        raise SkillError(f"is larger than {_MAX_BYTES >> 20} MiB", path=str(path))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillError(f"is not UTF-8 text (byte {exc.start})", path=str(path)) from None


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text[:200]
    return ""


def _parse(path: Path, *, prefix: str, command: bool, root: Path | None, top: str | None) -> Skill:
    text = _read(path, top)
    if root is not None:
        text = substitute_root(text, root)
    skill = parse_skill(text, path=path, default_name=path.stem if command else None)
    if command and not skill.description:
        skill = replace(skill, description=_first_line(skill.body))
    return replace(skill, name=prefix + skill.name, prefix=prefix, command=command)


def reread(skill: Skill, root: Path | None) -> Skill:
    """``skill`` read again from its file, the way it was first read."""
    top = os.path.realpath(root) if root is not None else None
    fresh = _parse(skill.path, prefix=skill.prefix, command=skill.command, root=root, top=top)
    return replace(fresh, source=skill.source, origin=skill.origin)


def _skill_files(folder: Path, top: str, problems: list[str]) -> list[Path]:
    if (folder / "SKILL.md").is_file():
        return [folder / "SKILL.md"]
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    found = []
    for entry in entries:
        path = Path(entry.path) / "SKILL.md"
        if entry.name.startswith(".") or not entry.is_dir() or not path.is_file():
            continue
        if not inside(path, top):
            problems.append(f"{path}: leads out of the plugin through a symlink; not read")
            continue
        found.append(path)
    return found


def _command_files(folder: Path, top: str, problems: list[str]) -> list[Path]:
    found = []
    for path in sorted(folder.rglob("*.md")):
        if any(p.startswith(".") for p in path.relative_to(folder).parts):
            continue
        if not inside(path, top):
            problems.append(f"{path}: leads out of its folder through a symlink; not read")
            continue
        found.append(path)
        if len(found) >= _MAX_FILES:
            break
    return found


def extra_skills(
    root: Path, home: Path | None, plugins: PluginSet
) -> tuple[list[Skill], list[str]]:
    """The skills of ``plugins`` and the command files of ``root`` and the
    user, and the files that could not be used (``file: reason``)."""
    found: list[Skill] = []
    problems: list[str] = []

    def add(path: Path, *, prefix: str, command: bool, origin: str, source: Source,
            plugin_root: Path | None, top: str) -> None:  # fmt: skip
        try:
            skill = _parse(path, prefix=prefix, command=command, root=plugin_root, top=top)
        except SkillError as exc:
            problems.append(f"skipped {'command' if command else 'skill'} {exc}")
            return
        problems.extend(f"{path}: {w}" for w in skill.warnings)
        found.append(replace(skill, source=source, origin=origin))

    for plugin in plugins.plugins:
        top = str(plugin.root)
        for folder in plugin.skill_dirs:
            for path in _skill_files(folder, top, problems):
                add(path, prefix=f"{plugin.name}:", command=False, origin=f"plugin {plugin.name}",
                    source=plugin.scope, plugin_root=plugin.root, top=top)  # fmt: skip
        for path in plugin.command_files:
            add(path, prefix=f"{plugin.name}:", command=True, origin=f"plugin {plugin.name}",
                source=plugin.scope, plugin_root=plugin.root, top=top)  # fmt: skip
    base = user_home(home)
    places: list[tuple[Path, Source, str]] = [(root / COMMAND_DIRS, "project", COMMAND_DIRS)]
    if base is not None:
        places.append((base / COMMAND_DIRS, "user", f"~/{COMMAND_DIRS}"))
    for folder, source, label in places:
        if not folder.is_dir():
            continue
        top = os.path.realpath(root if source == "project" else folder)
        for path in _command_files(folder, top, problems):
            add(path, prefix="", command=True, origin=label, source=source,
                plugin_root=None, top=top)  # fmt: skip
    return found, problems
