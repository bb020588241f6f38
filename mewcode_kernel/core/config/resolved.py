"""The layered result of loading config, and provider selection."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import SecretStr

from ..errors import ConfigError
from .providers import (
    REPLAY_PROVIDER,
    ProviderSettings,
    default_context_window,
    default_max_tokens,
    default_model,
    default_model_aliases,
)
from .trust_items import TrustItem

__all__ = [
    "ConfiguredProvider",
    "ConfiguredRule",
    "McpScope",
    "McpServerConfig",
    "ResolvedConfig",
    "SandboxSettings",
    "SkillSettings",
    "SubagentSettings",
    "TaskSettings",
    "TelemetrySettings",
    "ToolSearchSettings",
]

RuleAction = Literal["allow", "ask", "deny"]

# Problems of values that are filled in from the environment: a missing key or
# ``${VAR}`` is reported when the provider is used, not when config is read.
_DEFERRABLE = frozenset({"api_key", "base_url"})


@dataclass(frozen=True, kw_only=True, slots=True)
class ConfiguredProvider:
    """A provider after layering and ``${VAR}`` expansion. ``problems`` is
    non-empty when it cannot be used; they are raised when it is selected."""

    name: str
    protocol: Literal["anthropic", "openai", "openai-responses"] | None
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    context_window: int | None = None
    max_tokens: int | None = None
    models: Mapping[str, str] = field(default_factory=dict)
    origin: str = ""
    problems: tuple[ConfigError, ...] = ()
    store: bool = False

    @property
    def usable(self) -> bool:
        return not self.problems


@dataclass(frozen=True, kw_only=True, slots=True)
class ConfiguredRule:
    """One permission rule string and the file (and line) it came from. A
    ``rule`` that is not a string is kept as written, for the permission
    engine to report (and, for a deny rule, to fail closed on)."""

    action: RuleAction
    rule: Any
    source: str
    line: int | None = None


McpScope = Literal["user", "project"]


@dataclass(frozen=True, kw_only=True, slots=True)
class McpServerConfig:
    """An MCP server after layering. ``${VAR}`` in ``env`` and ``headers`` is
    already expanded (per file, before merging); ``unset_vars`` names the
    variables that were not set and became ``""``. ``scope`` says whether the
    user (``~/.mewcode/config.yaml``) or the project (``.mewcode.yaml``,
    ``.mcp.json``) defined it: project servers start only in a trusted
    project. ``timeout`` / ``connect_timeout`` are ``None`` for the defaults.
    ``shadows``: the user's entry of the same name that this project entry
    replaced (what runs while the project is not trusted)."""

    name: str
    type: Literal["stdio", "http"]
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    timeout: float | None = None
    connect_timeout: float | None = None
    scope: McpScope = "user"
    unset_vars: tuple[str, ...] = ()
    source: str = ""
    line: int | None = None
    shadows: McpServerConfig | None = None
    #: a project entry's trust item: it starts only while the trust allows it
    trust_item: TrustItem | None = field(default=None, repr=False, compare=False)

    @property
    def origin(self) -> str:
        """``file:line`` of the entry, for messages."""
        return f"{self.source}:{self.line}" if self.line else self.source


@dataclass(frozen=True, kw_only=True, slots=True)
class TelemetrySettings:
    """``telemetry`` in the user's file (``None``: not set there, the
    environment decides): export on, prompts and tool details in it."""

    enabled: bool | None = None
    log_user_prompts: bool | None = None
    log_tool_details: bool | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskSettings:
    """``tasks``: at most ``max_running`` background tasks run at once (more
    wait in a queue); a background approval nobody answers within
    ``approval_timeout`` seconds is denied."""

    max_running: int = 4
    approval_timeout: float = 300.0


@dataclass(frozen=True, kw_only=True, slots=True)
class SubagentSettings:
    """``subagents``: a foreground subagent still running after
    ``foreground_timeout`` seconds moves to the background; ``max_depth``:
    how many levels of subagents may run below the session's agent (a
    subagent at depth 1 may start one at depth 2, and so on; 0 and 1 both
    mean subagents never start subagents)."""

    foreground_timeout: float = 120.0
    max_depth: int = 3

    @property
    def depth_limit(self) -> int:
        """The deepest level a subagent may run at (at least 1)."""
        return max(self.max_depth, 1)


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillSettings:
    """``skills``: ``install_tool`` offers ``install_skill`` from the first turn."""

    install_tool: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolSearchSettings:
    """``tool_search``: when the MCP tools' definitions would take more than
    ``share`` of the context window they are left out of requests and the
    model finds them with ``search_tools`` (``enabled: false``: never)."""

    enabled: bool = True
    share: float = 0.1


@dataclass(frozen=True, kw_only=True, slots=True)
class SandboxSettings:
    """``sandbox`` after layering: whether commands run under bubblewrap, the
    network inside it (``on``/``off``), the extra writable directories and
    the unix sockets kept reachable with the network off (absolute; the
    user's config only). ``ignored`` lists what the project asked for but
    may not loosen until it is trusted."""

    enabled: bool = True
    network: Literal["on", "off"] = "on"
    allow_write: tuple[Path, ...] = ()
    allow_unix_sockets: tuple[Path, ...] = ()
    ignored: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class ResolvedConfig:
    """User config overlaid by project config. Never holds the environment
    itself; secrets are ``SecretStr`` and hidden from ``repr``.

    ``warnings`` lists every problem met while loading (files ignored, entries
    dropped, unknown keys), each naming its file and line, for front ends.
    """

    root: Path
    files: tuple[Path, ...] = ()
    providers: Mapping[str, ConfiguredProvider] = field(default_factory=dict)
    invalid_providers: Mapping[str, ConfigError] = field(default_factory=dict)
    default_provider: str | None = None
    default_provider_at: tuple[str, int | None] | None = None
    default_model: str | None = None
    env_provider: str | None = None
    env_model: str | None = None
    permission_rules: tuple[ConfiguredRule, ...] = ()
    mcp_servers: Mapping[str, McpServerConfig] = field(default_factory=dict)
    tasks: TaskSettings = field(default_factory=lambda: TaskSettings())
    subagents: SubagentSettings = field(default_factory=lambda: SubagentSettings())
    skills: SkillSettings = field(default_factory=lambda: SkillSettings())
    tool_search: ToolSearchSettings = field(default_factory=lambda: ToolSearchSettings())
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    #: OpenTelemetry export, from the user file only (``core.telemetry``)
    telemetry: TelemetrySettings = field(default_factory=TelemetrySettings)
    mcp_env_allowlist: tuple[str, ...] = ()
    #: host variables every child process (bash, hooks, MCP servers, run_python's
    #: children) inherits beyond ``child_env.DEFAULT_ALLOWLIST`` (user config only)
    env_allowlist: tuple[str, ...] = ()
    warnings: list[ConfigError] = field(default_factory=list)
    #: files that exist but could not be used at all and may hold deny rules
    #: (the permission gate makes every call ask until they are fixed)
    unreadable_rule_files: tuple[str, ...] = ()

    def available_providers(self) -> list[str]:
        """Names that ``select_provider`` accepts (``replay`` always exists)."""
        names = list(self.providers)
        if REPLAY_PROVIDER not in names:
            names.append(REPLAY_PROVIDER)
        return names

    def default_provider_name(self) -> str:
        """``MEWCODE_PROVIDER``, else ``default_provider``, else ``anthropic``,
        else ``openai``, else the first configured provider, else ``replay``."""
        if self.env_provider:
            return self.env_provider
        if self.default_provider:
            return self.default_provider
        for name in ("anthropic", "openai"):
            if name in self.providers:
                return name
        return next(iter(self.providers), REPLAY_PROVIDER)

    def select_provider(
        self, name: str | None = None, model: str | None = None
    ) -> ProviderSettings:
        """Resolve the provider to use.

        ``name=None`` picks the default (see ``default_provider_name``). The
        model is ``model`` if given; else, for the default provider,
        ``MEWCODE_MODEL`` then ``default_model``; else the provider's own
        model, else the protocol's default. Raises ``ConfigError`` for an
        unknown name (listing the available ones) or an unusable provider;
        except that the default provider (``name=None``) whose only problems
        are values it could not fill (an unset ``${VAR}``, no key) comes back
        with ``problem`` set: it is reported when a request is made, so the
        rest of the session (slash commands, other providers) still works.
        """
        default = self.default_provider_name()
        chosen = name or default
        is_default = chosen == default
        if model is None and is_default:
            model = self.env_model or self.default_model
        entry = self.providers.get(chosen)
        if entry is None:
            if chosen == REPLAY_PROVIDER:
                return _replay_settings(model)
            raise self._unknown(chosen, from_default=name is None)
        problem: str | None = None
        if entry.problems or entry.protocol is None:
            first = entry.problems[0]
            detail = "; ".join(p.message for p in entry.problems)
            error = ConfigError(
                f"provider {chosen!r} cannot be used: {detail}",
                path=first.path,
                line=first.line,
                field=first.field,
            )
            if (
                name is not None
                or entry.protocol is None
                or not all(
                    p.field and p.field.rsplit(".", 1)[-1] in _DEFERRABLE for p in entry.problems
                )
            ):
                raise error
            problem = str(error)
        resolved_model = model or entry.model or default_model(entry.protocol)
        return ProviderSettings(
            name=chosen,
            protocol=entry.protocol,
            model=resolved_model,
            store=entry.store,
            base_url=entry.base_url,
            api_key=entry.api_key,
            context_window=entry.context_window
            or default_context_window(entry.protocol, resolved_model),
            max_tokens=entry.max_tokens or default_max_tokens(entry.protocol, resolved_model),
            models={**default_model_aliases(entry.protocol), **entry.models},
            origin=entry.origin,
            problem=problem,
        )

    def _unknown(self, name: str, *, from_default: bool) -> ConfigError:
        if name in self.invalid_providers:
            bad = self.invalid_providers[name]
            return ConfigError(
                f"provider {name!r} cannot be used: {bad.message}",
                path=bad.path,
                line=bad.line,
                field=bad.field,
            )
        available = ", ".join(self.available_providers())
        message = f"unknown provider {name!r}; available: {available}"
        if from_default and self.env_provider:
            return ConfigError(f"{message} (from MEWCODE_PROVIDER)")
        if from_default and self.default_provider_at is not None:
            path, line = self.default_provider_at
            return ConfigError(message, path=path, line=line, field="default_provider")
        return ConfigError(message)


def _replay_settings(model: str | None) -> ProviderSettings:
    return ProviderSettings(
        name=REPLAY_PROVIDER,
        protocol="replay",
        model=model or default_model("replay"),
        context_window=default_context_window("replay", ""),
        # recordings are made with Anthropic's defaults: route subagents the same way
        models=default_model_aliases("anthropic"),
        origin="offline replay of recorded sessions",
    )
