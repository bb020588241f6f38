"""The catalog of subagent definitions, in layers: the built-ins (package
data) < the user's (``~/.mewcode/agents``, ``~/.claude/agents``) < the
project's (``.mewcode/agents``, ``.claude/agents``). Each folder is read
with its subfolders, as Claude Code reads them (``.claude/agents/team/
builder.md``). A later layer replaces a definition of the same name; two
files of one folder with the same name are a clash, reported (the
shallower, then the first by path, is used); a file that cannot be used is
reported (file and reason) and skipped, the others load.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

from ..errors import ConfigError
from ..fs.read_regular import read_regular_file
from ..plugins import PluginSet, discover_plugins, substitute_root
from ..plugins.paths import inside
from ..project_paths import PROJECT_AGENT_DIRS
from ..userdirs import mewcode_home
from .definition import AgentDefinition, DefinitionError, DefinitionSource, parse_definition

__all__ = ["AgentCatalog", "CatalogProblem", "load_catalog"]

PROJECT_DIRS = tuple(Path(d) for d in PROJECT_AGENT_DIRS)


@dataclass(frozen=True, kw_only=True, slots=True)
class CatalogProblem:
    path: str
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        what = "skipped" if self.severity == "error" else "loaded with a warning"
        return f"{self.path}: subagent definition {what}: {self.message}"


@dataclass(frozen=True, kw_only=True)
class AgentCatalog:
    """Definitions by name (the winning layer's), and what went wrong."""

    definitions: dict[str, AgentDefinition] = field(default_factory=dict)
    problems: tuple[CatalogProblem, ...] = ()
    overridden: tuple[AgentDefinition, ...] = ()

    def resolve(self, name: str) -> AgentDefinition | None:
        """The definition called ``name``; a case-insensitive match if it is the only one."""
        found = self.definitions.get(name)
        if found is not None:
            return found
        folded = [d for n, d in self.definitions.items() if n.lower() == name.lower()]
        return folded[0] if len(folded) == 1 else None

    def require(self, name: str) -> AgentDefinition:
        """``resolve``, or a ``ConfigError`` naming the definitions there are."""
        found = self.resolve(name)
        if found is None:
            raise ConfigError(
                f"no subagent definition named {name!r}; available: {', '.join(self.names)}"
            )
        return found

    def list(self) -> list[AgentDefinition]:
        return sorted(self.definitions.values(), key=lambda d: d.name.lower())

    @property
    def names(self) -> list[str]:
        return [d.name for d in self.list()]


def _builtins() -> list[AgentDefinition]:
    folder = resources.files("mewcode_kernel") / "data" / "agents"
    found = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md") and not entry.name.startswith("."):
            # a broken built-in is a packaging bug: let it raise
            found.append(parse_definition(entry.read_text(encoding="utf-8"), source="built-in"))
    return found


#: how deep subfolders are read (``agents/team/builder.md`` is one level)
MAX_DEPTH = 8
#: definition files read from one folder tree at most
MAX_FILES = 500
#: a definition larger than this is refused (it is a system prompt)
MAX_DEFINITION_BYTES = 1 << 20


def _definition_files(folder: Path, problems: list[CatalogProblem], *, confine: bool) -> list[Path]:
    """The ``.md`` files in ``folder`` and its subfolders (as Claude Code reads
    ``.claude/agents/team/builder.md``), shallowest first, then by path.
    Dot-files and dot-folders are skipped, each folder is read once however
    it is reached, and with ``confine`` (a project's folder) nothing that
    leads out of ``folder`` through a symlink is read."""
    try:
        top = os.path.realpath(folder)
        if not os.path.isdir(top):
            return []
    except OSError:
        return []
    found: list[tuple[int, str, Path]] = []
    seen: set[str] = set()
    pending: list[tuple[Path, int]] = [(folder, 0)]
    while pending:
        here, depth = pending.pop()
        real = os.path.realpath(here)
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name)
        except OSError as exc:
            problems.append(
                CatalogProblem(path=str(here), message=f"cannot be read: {exc.strerror}")
            )
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.name.startswith("."):
                continue
            if confine and _leaves(path, top):
                problems.append(
                    CatalogProblem(path=str(path), message="a symlink out of the folder; not read")
                )
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                if depth + 1 > MAX_DEPTH:
                    problems.append(
                        CatalogProblem(path=str(path), message=f"deeper than {MAX_DEPTH} folders")
                    )
                else:
                    pending.append((path, depth + 1))
            elif entry.name.endswith(".md"):
                found.append((depth, str(path.relative_to(folder)), path))
    found.sort(key=lambda f: (f[0], f[1]))
    if len(found) > MAX_FILES:
        problems.append(
            CatalogProblem(
                path=str(folder),
                message=f"holds {len(found):,} definition files; the first {MAX_FILES} are read",
            )
        )
    return [path for _, _, path in found[:MAX_FILES]]


def _leaves(path: Path, top: str) -> bool:
    real = os.path.realpath(path)
    return real != top and not real.startswith(top.rstrip("/") + "/")


def _read_definition(path: Path, source: DefinitionSource) -> AgentDefinition:
    try:  # a FIFO or device planted as x.md must not block the scan
        raw = read_regular_file(os.path.realpath(path), MAX_DEFINITION_BYTES)
    except OSError as exc:
        raise DefinitionError(f"cannot be read ({exc.strerror})") from None
    if len(raw) > MAX_DEFINITION_BYTES:
        raise DefinitionError(f"is larger than {MAX_DEFINITION_BYTES >> 20} MiB")
    return parse_definition(raw.decode("utf-8", errors="strict"), path=path, source=source)


def _load_dir(
    folder: Path, source: DefinitionSource, problems: list[CatalogProblem]
) -> list[AgentDefinition]:
    found: list[AgentDefinition] = []
    used: dict[str, AgentDefinition] = {}
    for path in _definition_files(folder, problems, confine=source == "project"):
        try:
            definition = _read_definition(path, source)
        except (DefinitionError, UnicodeDecodeError) as exc:
            problems.append(CatalogProblem(path=str(path), message=str(exc)))
            continue
        kept = used.get(definition.name.casefold())
        if kept is not None:  # two files of one folder claim a name: the first keeps it
            problems.append(
                CatalogProblem(
                    path=str(path),
                    message=f"its name {definition.name!r} is taken by {kept.where} in the same "
                    "folder, which is used instead",
                )
            )
            continue
        used[definition.name.casefold()] = definition
        problems += [
            CatalogProblem(path=str(path), message=w, severity="warning")
            for w in definition.warnings
        ]
        found.append(definition)
    return found


def _plugin_agents(plugins: PluginSet, problems: list[CatalogProblem]) -> list[AgentDefinition]:
    """Each plugin's agents as ``<plugin>:<agent>``, read under its path rules,
    with ``${CLAUDE_PLUGIN_ROOT}`` put in their text."""
    found: list[AgentDefinition] = []
    for plugin in plugins.plugins:
        top = str(plugin.root)
        for path in plugin.agent_files:
            real = os.path.realpath(path)
            if not inside(real, top):
                problems.append(
                    CatalogProblem(path=str(path), message="a symlink out of the plugin; not read")
                )
                continue
            try:
                raw = read_regular_file(real, MAX_DEFINITION_BYTES)
                text = substitute_root(raw.decode("utf-8", errors="strict"), plugin.root)
                definition = parse_definition(text, path=path, source=plugin.scope)
            except (OSError, DefinitionError, UnicodeDecodeError) as exc:
                problems.append(CatalogProblem(path=str(path), message=str(exc)))
                continue
            problems += [
                CatalogProblem(path=str(path), message=w, severity="warning")
                for w in definition.warnings
            ]
            found.append(replace(definition, name=f"{plugin.name}:{definition.name}"))
    return found


def load_catalog(root: Path, *, home: Path | None = None) -> AgentCatalog:
    """The definitions for project ``root`` (``home``: the user's home)."""
    plugins = discover_plugins(root, home=home)
    state = mewcode_home(home)
    home = home if home is not None else Path.home()
    problems: list[CatalogProblem] = []
    layers: list[list[AgentDefinition]] = [_builtins()]
    user_dirs = [state / "agents"] if state is not None else []
    user_dirs.append(home / ".claude" / "agents")
    layers += [_load_dir(d, "user", problems) for d in user_dirs]
    layers.append(_plugin_agents(plugins, problems))
    layers += [_load_dir(root / d, "project", problems) for d in PROJECT_DIRS]
    definitions: dict[str, AgentDefinition] = {}
    overridden: list[AgentDefinition] = []
    for layer in layers:
        for definition in layer:
            previous = definitions.get(definition.name)
            if previous is not None:
                overridden.append(previous)
            definitions[definition.name] = definition
    return AgentCatalog(
        definitions=definitions, problems=tuple(problems), overridden=tuple(overridden)
    )
