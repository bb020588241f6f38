"""Reading ``.mcp.json``, the MCP server list Claude Code (and Claude
Desktop) users already have, so it works unchanged.

Both shapes occur in the wild: ``{"mcpServers": {name: entry}}`` and a bare
``{name: entry}`` map. Entries are checked like ``mcp_servers`` entries of
``.mewcode.yaml``; keys starting with ``_`` (``_docs``, used as comments)
and ``$schema`` are skipped silently, other unknown keys are reported and
ignored. A bad entry is reported with the file (and line) and skipped; the
others load. A file that is not a JSON object is reported and ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError
from ._schema import McpServerEntry
from ._yaml import YamlDoc, read_yaml

__all__ = ["MCP_JSON", "McpJson", "load_mcp_json", "validate_server"]

MCP_JSON = ".mcp.json"
_WRAPPER = "mcpServers"


@dataclass(frozen=True, kw_only=True, slots=True)
class McpJson:
    """The valid servers of one ``.mcp.json`` and where each was written."""

    path: Path
    servers: dict[str, McpServerEntry] = field(default_factory=dict)
    lines: dict[str, int | None] = field(default_factory=dict)


def load_mcp_json(path: Path) -> tuple[McpJson | None, list[ConfigError]]:
    """Load ``path``: ``(None, [])`` when it does not exist, ``(None, problems)``
    when it cannot be used at all, else its servers and the problems met."""
    if not path.exists() or _empty_folder(path):
        return None, []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None, [_ignored(path, "the file is not valid UTF-8")]
    except OSError as exc:
        return None, [_ignored(path, f"cannot be read ({exc.strerror or exc})")]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, [_ignored(path, f"invalid JSON: {exc.msg}", line=exc.lineno)]
    doc = _positions(path)
    if not isinstance(data, dict):
        return None, [_ignored(path, "the top level must be a JSON object of servers", line=1)]
    prefix: tuple[str, ...] = ()
    if _WRAPPER in data:
        servers = data[_WRAPPER]
        prefix = (_WRAPPER,)
        if servers is None:
            servers = {}
        if not isinstance(servers, dict):
            return None, [
                _ignored(
                    path, f"'{_WRAPPER}' must be an object of servers", line=_line(doc, prefix)
                )
            ]
    else:
        servers = {k: v for k, v in data.items() if k != "$schema"}
    found = McpJson(path=path)
    problems: list[ConfigError] = []
    for name, raw in servers.items():
        line = _line(doc, (*prefix, name))
        entry, issues = validate_server(name, raw, path=str(path), line=line)
        problems += issues
        if entry is not None:
            found.servers[name] = entry
            found.lines[name] = line
    return found, problems


def validate_server(
    name: str, raw: Any, *, path: str, line: int | None
) -> tuple[McpServerEntry | None, list[ConfigError]]:
    """Check one server entry. Unknown keys are reported and dropped; any
    other problem rejects the entry (``None``) with one message naming it."""
    where = f"mcpServers.{name}"
    if not isinstance(raw, dict):
        return None, [
            ConfigError(
                f"server {name!r} must be an object with 'command' or 'url'; it was ignored",
                path=path,
                line=line,
                field=where,
            )
        ]
    data = {k: v for k, v in raw.items() if not (isinstance(k, str) and k.startswith("_"))}
    warnings: list[ConfigError] = []
    while True:
        try:
            return McpServerEntry.model_validate(data), warnings
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_input=False)
            unknown = [e for e in errors if e["type"] == "extra_forbidden" and len(e["loc"]) == 1]
            if len(unknown) == len(errors):
                for err in unknown:
                    key = str(err["loc"][0])
                    warnings.append(
                        ConfigError(
                            f"unknown key {key!r}; it is ignored",
                            path=path,
                            line=line,
                            field=f"{where}.{key}",
                        )
                    )
                    data.pop(key, None)
                continue
            detail = "; ".join(_describe(e) for e in errors if e not in unknown)
            return None, [
                *warnings,
                ConfigError(
                    f"{detail}; server {name!r} was ignored", path=path, line=line, field=where
                ),
            ]


def _describe(err: Any) -> str:
    msg = str(err["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix) :]
    loc = ".".join(str(p) for p in err["loc"])
    return f"{loc}: {msg}" if loc else msg


def _positions(path: Path) -> YamlDoc | None:
    """JSON is (nearly) YAML: the YAML reader gives the lines for messages."""
    try:
        return read_yaml(path)
    except (ConfigError, ValueError):
        return None


def _line(doc: YamlDoc | None, loc: tuple[str, ...]) -> int | None:
    return doc.line_of(loc) if doc is not None else None


def _ignored(path: Path, message: str, *, line: int | None = None) -> ConfigError:
    return ConfigError(f"{message}; this file was ignored", path=str(path), line=line)


def _empty_folder(path: Path) -> bool:
    """An empty folder where the file belongs: the OS sandbox's stand-in
    while a sandboxed process runs (it keeps the file from being created)."""
    try:
        return path.is_dir() and not any(path.iterdir())
    except OSError:
        return False
