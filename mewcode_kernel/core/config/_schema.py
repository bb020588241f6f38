"""The schema of one config file (``.mewcode.yaml`` or ``~/.mewcode/config.yaml``).

Every field is optional here: a project file may override a single field of a
provider the user file defines, so completeness is checked after layering.
Unknown keys are rejected by the schema and turned into warnings by the loader.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveFloat,
    PositiveInt,
    SecretStr,
    StrictBool,
    field_validator,
    model_validator,
)

__all__ = [
    "STRICT_SANDBOX",
    "ConfigFile",
    "McpServerEntry",
    "PermissionsSection",
    "ProviderEntry",
    "SandboxSection",
    "SubagentsSection",
    "TasksSection",
    "TelemetrySection",
    "ToolSearchSection",
]

WireProtocol = Literal["anthropic", "openai", "openai-responses"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProviderEntry(_Section):
    """``providers.<name>``: one model endpoint."""

    protocol: WireProtocol | None = None
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    context_window: PositiveInt | None = None
    max_tokens: PositiveInt | None = None
    models: dict[str, str] | None = None
    #: ``openai-responses`` only: let OpenAI keep the responses (default: no)
    store: StrictBool | None = None


class TasksSection(_Section):
    """``tasks``: background work (background turns and subagents)."""

    max_running: PositiveInt | None = None
    approval_timeout: PositiveFloat | None = None


class SubagentsSection(_Section):
    """``subagents``: how the Agent tool runs children."""

    foreground_timeout: PositiveFloat | None = None
    #: how deep subagents may start subagents (0 and 1: not at all); bounded
    #: so a project file cannot ask for an unbounded chain of model calls
    max_depth: Annotated[int, Field(ge=0, le=10, strict=True)] | None = None


class ToolSearchSection(_Section):
    """``tool_search``: leave MCP tool definitions out of requests when they
    would take more than ``share`` of the context window (0 < share <= 1)."""

    enabled: StrictBool | None = None
    share: float | None = Field(default=None, gt=0, le=1)


class TelemetrySection(_Section):
    """``telemetry``: OpenTelemetry export (the user's file only). Strict
    booleans, like the sandbox's: a string is an error, never a guess."""

    enabled: StrictBool | None = None
    log_user_prompts: StrictBool | None = None
    log_tool_details: StrictBool | None = None


class SkillsSection(_Section):
    """``skills``: ``install_tool: true`` offers the model ``install_skill``
    from the first turn (otherwise only once a prompt asks for an install)."""

    install_tool: StrictBool | None = None


class PermissionsSection(_Section):
    """``permissions``: rule strings, parsed later by the permission engine."""

    # Any entries: one that is not a string is reported by the permission
    # engine, and a bad deny entry makes what it may cover ask (fail closed),
    # where a schema error here would drop the whole file and its deny rules.
    allow: list[Any] = Field(default_factory=list)
    ask: list[Any] = Field(default_factory=list)
    deny: list[Any] = Field(default_factory=list)

    @field_validator("allow", "ask", "deny", mode="before")
    @classmethod
    def _one_rule_is_a_list(cls, value: Any) -> Any:
        if value is None:
            return []
        return [value] if isinstance(value, str) else value


class SandboxSection(_Section):
    """``sandbox``: the OS sandbox for commands (bubblewrap).

    Read strictly: ``enabled`` is a real boolean (YAML ``true``/``false``,
    ``yes``/``no``, ``on``/``off``), never a string or a number that some
    reader might take the other way; ``network`` is ``on`` or ``off`` (a bare
    YAML ``on``/``off`` is a boolean and means the same). Anything else is an
    error, and the loader applies the strict value (``STRICT``)."""

    enabled: StrictBool | None = None
    network: Literal["on", "off"] | None = None
    allow_write: list[str] = Field(default_factory=list)
    #: unix sockets kept reachable with ``network: off`` (the user's file only)
    allow_unix_sockets: list[str] = Field(default_factory=list)

    @field_validator("allow_write", "allow_unix_sockets", mode="before")
    @classmethod
    def _one_path_is_a_list(cls, value: Any) -> Any:
        if value is None:
            return []
        return [value] if isinstance(value, str) else value

    @field_validator("network", mode="before")
    @classmethod
    def _yaml_booleans(cls, value: Any) -> Any:
        # YAML 1.1 reads a bare on/off as a boolean
        return {True: "on", False: "off"}.get(value, value) if isinstance(value, bool) else value


#: What a security setting becomes when its value cannot be read: the strict one.
STRICT_SANDBOX: dict[str, Any] = {"enabled": True, "network": "off", "allow_write": []}


class McpServerEntry(_Section):
    """``mcp_servers.<name>`` (or an entry of ``.mcp.json``): one MCP server.

    ``type`` is ``stdio`` or ``http`` (``streamable-http`` is read as
    ``http``); when left out it is ``stdio`` if ``command`` is given, ``http``
    if ``url`` is, and the entry is rejected otherwise. Numbers in
    ``args``/``env``/``headers`` are taken as strings (``PORT: 8080``).
    ``timeout`` bounds one tool call, ``connect_timeout`` the connection and
    the first tool listing (seconds)."""

    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)
    type: Literal["stdio", "http", "streamable-http"] | None = None
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict, repr=False)
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    timeout: PositiveFloat | None = None
    connect_timeout: PositiveFloat | None = None

    @field_validator("args", mode="before")
    @classmethod
    def _no_args(cls, value: Any) -> Any:
        return [] if value is None else value

    @field_validator("env", "headers", mode="before")
    @classmethod
    def _no_mapping(cls, value: Any) -> Any:
        return {} if value is None else value

    @model_validator(mode="after")
    def _transport_is_complete(self) -> McpServerEntry:
        kind = "http" if self.type == "streamable-http" else self.type
        if kind is None:
            if self.command:
                kind = "stdio"
            elif self.url:
                kind = "http"
            else:
                raise ValueError(
                    "missing type: set 'type' (stdio or http), or give 'command' (a stdio "
                    "server) or 'url' (an http server)"
                )
        if kind == "stdio" and not self.command:
            raise ValueError("a stdio server needs 'command'")
        if kind == "http" and not self.url:
            raise ValueError("an http server needs 'url'")
        object.__setattr__(self, "type", kind)
        return self


# sections a file may leave empty (``tasks:`` alone): read as no settings
_NULLABLE_SECTIONS = (
    "providers", "mcp_servers", "permissions", "tasks", "subagents", "skills", "sandbox",
    "telemetry", "tool_search",
)  # fmt: skip


class ConfigFile(_Section):
    """The whole file. Named lists of providers are normalised to mappings
    before validation (see ``_layer``)."""

    providers: dict[str, ProviderEntry] = Field(default_factory=dict)
    default_provider: str | None = None
    default_model: str | None = None
    permissions: PermissionsSection = Field(default_factory=PermissionsSection)
    mcp_servers: dict[str, McpServerEntry] = Field(default_factory=dict)
    tasks: TasksSection = Field(default_factory=TasksSection)
    subagents: SubagentsSection = Field(default_factory=SubagentsSection)
    skills: SkillsSection = Field(default_factory=SkillsSection)
    tool_search: ToolSearchSection = Field(default_factory=ToolSearchSection)
    sandbox: SandboxSection = Field(default_factory=SandboxSection)
    telemetry: TelemetrySection = Field(default_factory=TelemetrySection)
    mcp_env_allowlist: list[str] = Field(default_factory=list)
    env_allowlist: list[str] = Field(default_factory=list)
    #: plugin folders to load (``core.plugins``); a project's stay inside it
    plugins: list[str] = Field(default_factory=list)

    @field_validator(*_NULLABLE_SECTIONS, mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("mcp_env_allowlist", "env_allowlist", "plugins", mode="before")
    @classmethod
    def _one_name_is_a_list(cls, value: Any) -> Any:
        if value is None:
            return []
        return [value] if isinstance(value, str) else value
