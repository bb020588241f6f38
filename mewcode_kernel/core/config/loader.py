"""``load_config``: read the user and project files and layer them.

Layering rules (user first, then project on top):

* ``default_provider`` / ``default_model``: the project value wins.
* ``providers``: merged per entry *and per field*; a project entry that only
  says ``model: x`` keeps the user entry's other fields. One exception guards
  the user's key: when the project entry changes ``protocol`` or ``base_url``
  and does not set ``api_key`` itself, the user's ``api_key`` is not
  inherited (it would otherwise be sent to an endpoint it was not meant for).
* ``mcp_servers``: read from the user file, then ``.mcp.json`` at the root,
  then the project file; a later entry replaces an earlier one of the same
  name whole (command, args and env belong together). ``${VAR}`` and
  ``${VAR:-default}`` are expanded in ``env`` and ``headers`` values only,
  per file before merging; an unset variable becomes ``""`` and is listed in
  the server's ``unset_vars``. A project entry that replaces a user entry
  keeps it as ``shadows`` (used while the project is not trusted). ``mcp_env_allowlist`` is read from the user
  file only (a project cannot widen what reaches the user's servers).
* ``env_allowlist``: host variables every child process inherits beyond the
  default allowlist (``core.child_env``); user file only, like
  ``mcp_env_allowlist``. A lone ``*`` is refused (it would pass everything).
* ``permissions``: both files' rules are kept, user rules first; each rule
  remembers its file and line.

* ``sandbox``: the project wins per key; ``allow_write`` lists are joined;
  ``allow_unix_sockets`` is read from the user file only.
* ``telemetry``: the user file only (a project cannot turn on export, or
  put prompts and tool details in it).

``${VAR}`` / ``${VAR:-default}`` are expanded in provider ``api_key`` and
``base_url`` only, from the ``env`` mapping given. With no configured provider
at all, ``anthropic`` / ``openai`` exist when their SDK key variable is set.

Given the project's ``trust`` (``core.trust``) and it is not trusted, the
project file can only tighten: its providers with their own URL or
``${VAR}``, its allow rules and its sandbox loosening are left out (each
named in ``warnings``); deny and ask rules apply.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..userdirs import mewcode_home, user_home
from ._expand import expand_vars
from ._layer import PROJECT_CONFIG, Layer, load_layer
from ._mcp_json import MCP_JSON, McpJson, load_mcp_json
from ._provider_merge import env_providers, merge_providers
from ._sandbox_merge import merge_sandbox
from ._schema import McpServerEntry
from .resolved import (
    ConfiguredRule,
    McpScope,
    McpServerConfig,
    ResolvedConfig,
    SkillSettings,
    SubagentSettings,
    TaskSettings,
    TelemetrySettings,
    ToolSearchSettings,
)
from .trust_items import (
    TrustItem,
    TrustPolicy,
    allow_rule_item,
    server_item,
)

__all__ = ["MCP_JSON", "PROJECT_CONFIG", "USER_CONFIG", "load_config", "server_config"]

USER_CONFIG = Path(".mewcode") / "config.yaml"
#: the user's config file inside their MewCode folder (``MEWCODE_HOME``)
USER_CONFIG_NAME = "config.yaml"


def load_config(
    root: Path,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    *,
    trust: TrustPolicy | None = None,
) -> ResolvedConfig:
    """Load ``<home>/.mewcode/config.yaml`` then ``<root>/.mewcode.yaml``.

    Never raises for a bad file: a file that cannot be used is skipped and
    every problem lands in ``ResolvedConfig.warnings``. ``home`` defaults to
    the user's home directory and ``env`` to ``os.environ`` (pass both in tests).
    ``trust`` (``None``: every project setting applies) keeps the project's
    loosening settings out unless it ``allows`` each one's exact item;
    ``open_session`` passes the project's trust.
    """
    env = os.environ if env is None else env
    state = mewcode_home(home)
    user_path = state / USER_CONFIG_NAME if state is not None else None
    paths = ([user_path] if user_path is not None else []) + [root / PROJECT_CONFIG]
    layers: list[Layer] = []
    warnings: list[ConfigError] = []
    unreadable: list[str] = []
    for path in paths:
        layer, problems = load_layer(path)
        warnings += problems
        if layer is not None:
            layers.append(layer)
        elif problems and _may_hold_deny_rules(path):
            unreadable.append(str(path))
    project = root / PROJECT_CONFIG
    mcp_json, problems = load_mcp_json(root / MCP_JSON)
    warnings += problems

    def allowed(item: TrustItem | None) -> bool:
        return item is None or trust is None or trust.allows(item)

    providers, invalid = merge_providers(layers, env, project, allowed)
    for layer in layers:
        invalid.update(layer.invalid_providers)
    if not providers and not invalid:
        providers = env_providers(env)
    for name in providers:
        invalid.pop(name, None)

    default_provider: str | None = None
    default_at: tuple[str, int | None] | None = None
    default_model_: str | None = None
    for layer in layers:
        fields = layer.file.model_fields_set
        if "default_provider" in fields:
            default_provider = layer.file.default_provider
            default_at = (str(layer.path), layer.line_of(("default_provider",)))
        if "default_model" in fields:
            default_model_ = layer.file.default_model

    return ResolvedConfig(
        root=root,
        files=tuple(layer.path for layer in layers),
        providers=providers,
        invalid_providers=invalid,
        default_provider=default_provider,
        default_provider_at=default_at,
        default_model=default_model_,
        env_provider=env.get("MEWCODE_PROVIDER") or None,
        env_model=env.get("MEWCODE_MODEL") or None,
        permission_rules=tuple(
            r
            for layer in layers
            for r in _rules(layer)
            if not (
                layer.path == project
                and r.action == "allow"
                and not allowed(allow_rule_item(PROJECT_CONFIG, r.rule))
            )
        ),
        mcp_servers=_merge_servers(layers, mcp_json, user_path, env),
        mcp_env_allowlist=_allowlist(layers, user_path, warnings, "mcp_env_allowlist"),
        env_allowlist=_allowlist(layers, user_path, warnings, "env_allowlist"),
        tasks=TaskSettings(**_merged(layers, "tasks")),
        subagents=SubagentSettings(**_merged(layers, "subagents")),
        skills=SkillSettings(**_merged(layers, "skills")),
        tool_search=ToolSearchSettings(
            **{k: v for k, v in _merged(layers, "tool_search").items() if v is not None}
        ),
        sandbox=merge_sandbox(layers, root, project, allowed, user_home(home), user_path, warnings),
        telemetry=_telemetry(layers, user_path, warnings),
        warnings=warnings,
        unreadable_rule_files=tuple(unreadable),
    )


def _merged(layers: list[Layer], section: str) -> dict[str, Any]:
    """The keys of ``section`` set in any layer, the project's winning."""
    found: dict[str, Any] = {}
    for layer in layers:
        block = getattr(layer.file, section)
        found.update({k: getattr(block, k) for k in block.model_fields_set})
    return found


def _telemetry(
    layers: list[Layer], user_path: Path | None, warnings: list[ConfigError]
) -> TelemetrySettings:
    """``telemetry`` from the user's file; a project's is ignored, with a warning."""
    found = TelemetrySettings()
    for layer in layers:
        section = layer.file.telemetry
        if not section.model_fields_set:
            continue
        if layer.path == user_path:
            found = TelemetrySettings(**{k: getattr(section, k) for k in section.model_fields_set})
            continue
        warnings.append(
            ConfigError(
                "telemetry is read from ~/.mewcode/config.yaml only (a project cannot choose "
                "what is exported about your sessions); it is ignored",
                path=str(layer.path),
                line=layer.line_of(("telemetry",)),
                field="telemetry",
            )
        )
    return found


def _may_hold_deny_rules(path: Path) -> bool:
    """Whether a file that could not be loaded mentions deny rules at all."""
    try:
        return "deny" in path.read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return False


def _rules(layer: Layer) -> list[ConfiguredRule]:
    perms = layer.file.permissions
    return [
        ConfiguredRule(
            action=action,
            rule=rule,
            source=str(layer.path),
            line=layer.line_of(("permissions", action, i)),
        )
        for action in ("allow", "ask", "deny")
        for i, rule in enumerate(getattr(perms, action))
    ]


def _merge_servers(
    layers: list[Layer], mcp_json: McpJson | None, user_path: Path | None, env: Mapping[str, str]
) -> dict[str, McpServerConfig]:
    """User file, then ``.mcp.json``, then the project file; a later entry of a
    name replaces the earlier one whole."""
    sources: list[tuple[McpScope, str, dict[str, McpServerEntry], dict[str, int | None]]] = []
    for layer in layers:
        entries = layer.file.mcp_servers
        lines = {name: layer.line_of(("mcp_servers", name)) for name in entries}
        scope: McpScope = "user" if layer.path == user_path else "project"
        sources.append((scope, str(layer.path), entries, lines))
    if mcp_json is not None:
        # between the user file and the project's own file: .mewcode.yaml has the last word
        at = 1 if sources and sources[0][0] == "user" else 0
        sources.insert(at, ("project", str(mcp_json.path), mcp_json.servers, mcp_json.lines))
    out: dict[str, McpServerConfig] = {}
    for scope, source, entries, lines in sources:
        for name, entry in entries.items():
            earlier = out.pop(name, None)  # a replaced entry moves to its new file's place
            server = server_config(name, entry, scope, source, lines.get(name), env)
            if scope == "project":
                # what the trust must cover for this very entry to start
                rel = (
                    MCP_JSON
                    if mcp_json is not None and source == str(mcp_json.path)
                    else PROJECT_CONFIG
                )
                server = dataclasses.replace(server, trust_item=server_item(rel, name, entry))
            if earlier is not None and scope == "project":
                shadows = earlier if earlier.scope == "user" else earlier.shadows
                server = dataclasses.replace(server, shadows=shadows)
            out[name] = server
    return out


def server_config(
    name: str,
    entry: McpServerEntry,
    scope: McpScope,
    source: str,
    line: int | None,
    env: Mapping[str, str],
) -> McpServerConfig:
    """A configured server from its validated entry, ``${VAR}`` expanded in
    its environment and headers from ``env`` (the unset ones are noted)."""
    unset: list[str] = []

    def expand(values: Mapping[str, str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for key, raw in values.items():
            value, missing = expand_vars(raw, env)
            unset.extend(m for m in missing if m not in unset)
            out[key] = value
        return out

    return McpServerConfig(
        name=name,
        type="http" if entry.type == "http" else "stdio",
        command=entry.command,
        args=tuple(entry.args),
        env=expand(entry.env),
        url=entry.url,
        headers=expand(entry.headers),
        timeout=entry.timeout,
        connect_timeout=entry.connect_timeout,
        scope=scope,
        unset_vars=tuple(unset),
        source=source,
        line=line,
    )


_ALLOWLIST_WHY = {
    "mcp_env_allowlist": "which of your variables reach MCP servers",
    "env_allowlist": "which of your variables reach the commands and servers it starts",
}


def _allowlist(
    layers: list[Layer], user_path: Path | None, warnings: list[ConfigError], key: str
) -> tuple[str, ...]:
    """The names the user's file lists under ``key`` (a project's are ignored, with a warning)."""
    names: list[str] = []
    for layer in layers:
        if key not in layer.file.model_fields_set:
            continue
        if layer.path != user_path:
            warnings.append(
                ConfigError(
                    f"{key} is read from ~/.mewcode/config.yaml only (a project cannot choose "
                    f"{_ALLOWLIST_WHY[key]}); it is ignored",
                    path=str(layer.path),
                    line=layer.line_of((key,)),
                    field=key,
                )
            )
            continue
        for name in getattr(layer.file, key):
            if name.strip() == "*":
                warnings.append(
                    ConfigError(
                        f"{key}: a lone '*' would pass every variable; it is ignored "
                        "(name a family as PREFIX_*)",
                        path=str(layer.path),
                        line=layer.line_of((key,)),
                        field=key,
                    )
                )
            elif name not in names:
                names.append(name)
    return tuple(names)
