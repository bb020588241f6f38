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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from ..errors import ConfigError
from ..userdirs import mewcode_home, user_home
from ._expand import expand_vars
from ._layer import Layer, load_layer
from ._mcp_json import MCP_JSON, McpJson, load_mcp_json
from ._schema import McpServerEntry
from .providers import ENV_API_KEY, ENV_BASE_URL, default_model
from .resolved import (
    ConfiguredProvider,
    ConfiguredRule,
    McpScope,
    McpServerConfig,
    ResolvedConfig,
    SandboxSettings,
    SubagentSettings,
    TaskSettings,
)
from .trust_items import (
    TrustItem,
    TrustPolicy,
    allow_rule_item,
    provider_item,
    sandbox_items,
    server_item,
)

__all__ = ["MCP_JSON", "PROJECT_CONFIG", "USER_CONFIG", "load_config"]

PROJECT_CONFIG = ".mewcode.yaml"
USER_CONFIG = Path(".mewcode") / "config.yaml"
#: the user's config file inside their MewCode folder (``MEWCODE_HOME``)
USER_CONFIG_NAME = "config.yaml"

_EXPANDED = ("api_key", "base_url")


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

    providers, invalid = _merge_providers(layers, env, project, allowed)
    for layer in layers:
        invalid.update(layer.invalid_providers)
    if not providers and not invalid:
        providers = _env_providers(env)
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
        sandbox=_merge_sandbox(
            layers, root, project, allowed, user_home(home), user_path, warnings
        ),
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


class _Draft:
    """One provider's fields while layers are merged; problems kept per field
    so a later layer that overrides a field also clears its problem."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.values: dict[str, Any] = {}
        self.problems: dict[str, ConfigError] = {}
        self.origin = ""
        self.path = ""
        self.line: int | None = None

    def overlay(self, layer: Layer, env: Mapping[str, str]) -> None:
        entry = layer.file.providers[self.name]
        fields = entry.model_fields_set
        new: dict[str, Any] = {f: getattr(entry, f) for f in fields}
        problems: dict[str, ConfigError] = {}
        for f in _EXPANDED:
            raw = new.get(f)
            if raw is None:
                continue
            text = raw.get_secret_value() if isinstance(raw, SecretStr) else raw
            value, missing = expand_vars(text, env)
            if missing:
                names = ", ".join(f"${{{m}}}" for m in missing)
                problems[f] = ConfigError(
                    f"{f} uses {names}, which is not set",
                    path=str(layer.path),
                    line=layer.line_of(("providers", self.name, f)),
                    field=f"providers.{self.name}.{f}",
                )
            new[f] = value or None
        if self.values and "api_key" not in fields:
            moved = any(
                f in fields and new[f] != self.values.get(f) for f in ("protocol", "base_url")
            )
            if moved:
                self.values.pop("api_key", None)
                self.problems.pop("api_key", None)
        for f in fields:
            self.problems.pop(f, None)
        self.values.update(new)
        self.problems.update(problems)
        self.path = str(layer.path)
        self.line = layer.line_of(("providers", self.name))
        self.origin = f"{self.path}:{self.line}" if self.line else self.path

    def _error(self, field: str, message: str) -> ConfigError:
        """A problem with ``field`` of this provider, located at its entry."""
        return ConfigError(
            message, path=self.path, line=self.line, field=f"providers.{self.name}.{field}"
        )

    def build(self, env: Mapping[str, str]) -> ConfiguredProvider:
        v = self.values
        problems = list(self.problems.values())
        # ``providers: {anthropic: {model: ...}}`` needs no protocol line.
        protocol = v.get("protocol") or (self.name if self.name in ENV_API_KEY else None)
        base_url = v.get("base_url")
        api_key = v.get("api_key")
        if protocol is None:
            problems.insert(
                0,
                self._error(
                    "protocol", f"provider {self.name!r} has no 'protocol' (anthropic or openai)"
                ),
            )
        elif base_url is not None and not v.get("model"):
            # Defaults are for the official endpoints; a custom server needs its model named.
            problems.append(
                self._error("model", f"provider {self.name!r} sets base_url but no 'model'")
            )
        elif base_url is None and "base_url" not in self.problems:
            # The official endpoint: the SDK's own variables apply, as in the SDK.
            base_url = env.get(ENV_BASE_URL[protocol]) or None
            if api_key is None and "api_key" not in self.problems:
                api_key = env.get(ENV_API_KEY[protocol]) or None
                if api_key is None and base_url is None:
                    problems.append(
                        self._error(
                            "api_key",
                            f"no API key: set api_key in this entry or {ENV_API_KEY[protocol]}",
                        )
                    )
        return ConfiguredProvider(
            name=self.name,
            protocol=protocol,
            model=v.get("model"),
            base_url=base_url,
            api_key=SecretStr(api_key) if api_key else None,
            context_window=v.get("context_window"),
            max_tokens=v.get("max_tokens"),
            models=dict(v.get("models") or {}),
            origin=self.origin,
            problems=tuple(problems),
        )


def _merge_providers(
    layers: list[Layer],
    env: Mapping[str, str],
    project: Path,
    allowed: Callable[[TrustItem | None], bool],
) -> tuple[dict[str, ConfiguredProvider], dict[str, ConfigError]]:
    drafts: dict[str, _Draft] = {}
    held: dict[str, ConfigError] = {}
    for layer in layers:
        for name, entry in layer.file.providers.items():
            if layer.path == project and not allowed(provider_item(PROJECT_CONFIG, name, entry)):
                held[name] = ConfigError(
                    "it names its own server or reads your environment variables, and this "
                    "project's settings are not trusted yet (trust them with /trust, or "
                    "MEWCODE_TRUST_PROJECT=1 for headless runs)",
                    path=str(layer.path),
                    line=layer.line_of(("providers", name)),
                    field=f"providers.{name}",
                )
                continue
            drafts.setdefault(name, _Draft(name)).overlay(layer, env)
    built = {name: draft.build(env) for name, draft in drafts.items()}
    return built, {k: v for k, v in held.items() if k not in built}


def _may_hold_deny_rules(path: Path) -> bool:
    """Whether a file that could not be loaded mentions deny rules at all."""
    try:
        return "deny" in path.read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return False


def _merge_sandbox(
    layers: list[Layer],
    root: Path,
    project: Path,
    allowed: Callable[[TrustItem | None], bool],
    user_base: Path | None,
    user_path: Path | None,
    warnings: list[ConfigError],
) -> SandboxSettings:
    """The sandbox settings; a relative ``allow_write`` is taken from the
    root (project file) or the home folder (``user_base``, user file)."""
    enabled, network = True, "on"
    writable: list[Path] = []
    sockets: list[Path] = []
    ignored: list[str] = []
    for layer in layers:
        section = layer.file.sandbox
        fields = section.model_fields_set
        if "allow_unix_sockets" in fields and section.allow_unix_sockets:
            if layer.path != user_path:
                warnings.append(
                    ConfigError(
                        "sandbox.allow_unix_sockets is read from ~/.mewcode/config.yaml only "
                        "(a project cannot open your sockets to commands); it is ignored",
                        path=str(layer.path),
                        line=layer.line_of(("sandbox", "allow_unix_sockets")),
                        field="sandbox.allow_unix_sockets",
                    )
                )
            else:
                home = user_base or layer.path.parent
                for entry in section.allow_unix_sockets:
                    path = Path(os.path.expanduser(entry))
                    sockets.append(Path(os.path.abspath(home / path)))
        held: dict[str, TrustItem] = {}
        if layer.path == project:
            # the items of exactly these validated values: what is trusted is what applies
            held = {i.name: i for i in sandbox_items(PROJECT_CONFIG, section, network)}
        if "enabled" in fields and section.enabled is not None:
            if not allowed(held.get("enabled")):
                ignored.append(f"{layer.path}: sandbox.enabled: false")
            else:
                enabled = section.enabled
        if "network" in fields and section.network is not None:
            if not allowed(held.get("network")):
                ignored.append(f"{layer.path}: sandbox.network: on")
            else:
                network = section.network
        base = root if layer.path == project else (user_base or layer.path.parent)
        for entry in section.allow_write:
            if not allowed(held.get(f"allow_write:{entry}")):
                ignored.append(f"{layer.path}: sandbox.allow_write: {entry}")
                continue
            path = Path(os.path.expanduser(entry))
            writable.append(Path(os.path.realpath(path if path.is_absolute() else base / path)))
    return SandboxSettings(
        enabled=enabled,
        network=network,  # type: ignore[arg-type]
        allow_write=tuple(dict.fromkeys(writable)),
        allow_unix_sockets=tuple(dict.fromkeys(sockets)),
        ignored=tuple(ignored),
    )


def _env_providers(env: Mapping[str, str]) -> dict[str, ConfiguredProvider]:
    out: dict[str, ConfiguredProvider] = {}
    for protocol in ("anthropic", "openai"):
        key = env.get(ENV_API_KEY[protocol])
        if key:
            out[protocol] = ConfiguredProvider(
                name=protocol,
                protocol=protocol,
                model=default_model(protocol),
                base_url=env.get(ENV_BASE_URL[protocol]) or None,
                api_key=SecretStr(key),
                origin=f"environment ({ENV_API_KEY[protocol]})",
            )
    return out


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
            server = _server(name, entry, scope, source, lines.get(name), env)
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


def _server(
    name: str,
    entry: McpServerEntry,
    scope: McpScope,
    source: str,
    line: int | None,
    env: Mapping[str, str],
) -> McpServerConfig:
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
