"""Configuration: ``~/.mewcode/config.yaml`` overlaid by ``<root>/.mewcode.yaml``.

``load_config(root)`` never raises for a bad file; it returns a
``ResolvedConfig`` whose ``warnings`` name each problem's file, line and
field. ``ResolvedConfig.select_provider()`` turns the result into the
``ProviderSettings`` a provider module builds its client from. See
``loader`` for the layering rules.
"""

from __future__ import annotations

from .loader import MCP_JSON, PROJECT_CONFIG, USER_CONFIG, load_config
from .providers import (
    DEFAULT_ANTHROPIC_MODEL,
    DEFAULT_OPENAI_MODEL,
    REPLAY_PROVIDER,
    ProviderSettings,
    default_context_window,
    default_max_tokens,
)
from .resolved import (
    ConfiguredProvider,
    ConfiguredRule,
    McpScope,
    McpServerConfig,
    ResolvedConfig,
    SandboxSettings,
    SkillSettings,
    SubagentSettings,
    TaskSettings,
    TelemetrySettings,
    ToolSearchSettings,
)

__all__ = [
    "DEFAULT_ANTHROPIC_MODEL",
    "DEFAULT_OPENAI_MODEL",
    "MCP_JSON",
    "PROJECT_CONFIG",
    "REPLAY_PROVIDER",
    "USER_CONFIG",
    "ConfiguredProvider",
    "ConfiguredRule",
    "McpScope",
    "McpServerConfig",
    "ProviderSettings",
    "ResolvedConfig",
    "SandboxSettings",
    "SkillSettings",
    "SubagentSettings",
    "TaskSettings",
    "TelemetrySettings",
    "ToolSearchSettings",
    "default_context_window",
    "default_max_tokens",
    "load_config",
]
