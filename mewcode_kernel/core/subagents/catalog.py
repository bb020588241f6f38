"""The catalog of subagent definitions, in layers: the built-ins (package
data) < the user's (``~/.mewcode/agents``, ``~/.claude/agents``) < the
project's (``.mewcode/agents``, ``.claude/agents``). A later layer replaces
a definition of the same name; a file that cannot be used is reported (file
and reason) and skipped, the others load.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ..errors import ConfigError
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


def _load_dir(
    folder: Path, source: DefinitionSource, problems: list[CatalogProblem]
) -> list[AgentDefinition]:
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix == ".md" and p.is_file())
    except FileNotFoundError:
        return []
    except OSError as exc:
        problems.append(CatalogProblem(path=str(folder), message=f"cannot be read: {exc.strerror}"))
        return []
    found = []
    for path in files:
        if path.name.startswith("."):
            continue
        try:
            definition = parse_definition(
                path.read_text(encoding="utf-8", errors="strict"), path=path, source=source
            )
        except (DefinitionError, UnicodeDecodeError, OSError) as exc:
            problems.append(CatalogProblem(path=str(path), message=str(exc)))
            continue
        problems += [
            CatalogProblem(path=str(path), message=w, severity="warning")
            for w in definition.warnings
        ]
        found.append(definition)
    return found


def load_catalog(root: Path, *, home: Path | None = None) -> AgentCatalog:
    """The definitions for project ``root`` (``home``: the user's home)."""
    state = mewcode_home(home)
    home = home if home is not None else Path.home()
    problems: list[CatalogProblem] = []
    layers: list[list[AgentDefinition]] = [_builtins()]
    user_dirs = [state / "agents"] if state is not None else []
    user_dirs.append(home / ".claude" / "agents")
    layers += [_load_dir(d, "user", problems) for d in user_dirs]
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
