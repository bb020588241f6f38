"""What a provider module needs to build a client: ``ProviderSettings``, and
the defaults used when config leaves something out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import SecretStr

__all__ = [
    "DEFAULT_ANTHROPIC_MODEL",
    "DEFAULT_OPENAI_MODEL",
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "REPLAY_PROVIDER",
    "ProviderSettings",
    "default_context_window",
    "default_max_tokens",
    "default_model",
    "default_model_aliases",
    "sdk_of",
]

ProviderProtocol = Literal["anthropic", "openai", "openai-responses", "replay"]

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-5"
DEFAULT_OPENAI_MODEL = "gpt-4.1"
REPLAY_PROVIDER = "replay"

#: The SDKs' own environment variables, honoured for the official endpoints.
ENV_API_KEY = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
ENV_BASE_URL = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}


def sdk_of(protocol: str) -> str:
    """The SDK (and its environment variables) a wire protocol is spoken with."""
    return "openai" if protocol == "openai-responses" else protocol


# (model prefix, context window); first match wins, checked in order.
_CONTEXT_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
)
_DEFAULT_WINDOW = {
    "anthropic": 200_000,
    "openai": 128_000,
    "openai-responses": 128_000,
    "replay": 200_000,
}

# Anthropic requires max_tokens; older models cap output lower than current ones.
_ANTHROPIC_MAX_TOKENS: tuple[tuple[str, int], ...] = (
    ("claude-3-5", 8_192),
    ("claude-3-", 4_096),
)
_ANTHROPIC_DEFAULT_MAX_TOKENS = 16_384


@dataclass(frozen=True, kw_only=True, slots=True)
class ProviderSettings:
    """A fully resolved provider, ready to build a client from. ``models``
    maps model aliases (``haiku``, ``sonnet``, ``opus``) to this provider's ids.

    ``base_url=None`` means the official endpoint. ``api_key`` is a
    ``SecretStr``: call ``get_secret_value()`` only where the client is built.
    ``origin`` says where the settings came from (``file:line``, an
    environment variable, or the offline replay provider) for display.
    """

    name: str
    protocol: ProviderProtocol
    model: str
    base_url: str | None = None
    api_key: SecretStr | None = None
    context_window: int
    max_tokens: int | None = None
    models: Mapping[str, str] = field(default_factory=dict)
    origin: str = ""
    #: Why this provider cannot be used yet (e.g. its ``${VAR}`` is unset): set only
    #: for the default provider, so that picking it reports the problem at its
    #: first request while slash commands and other providers keep working.
    problem: str | None = None
    #: ``openai-responses``: ``store`` sent with each request (OpenAI keeps the
    #: response when true; the conversation is sent whole either way)
    store: bool = False

    @property
    def is_offline(self) -> bool:
        """True for the replay provider (recorded sessions, no network)."""
        return self.protocol == "replay"


def default_model(protocol: ProviderProtocol) -> str:
    """The model used when config names none."""
    if protocol == "anthropic":
        return DEFAULT_ANTHROPIC_MODEL
    if protocol in ("openai", "openai-responses"):
        return DEFAULT_OPENAI_MODEL
    return REPLAY_PROVIDER


# Subagent definitions name models by family; Anthropic's current ids by default.
_ANTHROPIC_ALIASES = {
    "haiku": "claude-haiku-4-5",
    "sonnet": "claude-sonnet-4-5",
    "opus": "claude-opus-4-1",
}


def default_model_aliases(protocol: ProviderProtocol) -> dict[str, str]:
    """``haiku`` / ``sonnet`` / ``opus`` → model ids, where the protocol has a
    default (a provider's ``models`` map adds to or overrides these)."""
    return dict(_ANTHROPIC_ALIASES) if protocol == "anthropic" else {}


def default_context_window(protocol: ProviderProtocol, model: str) -> int:
    """A conservative context window for ``model`` when config gives none."""
    if protocol in ("openai", "openai-responses"):
        for prefix, window in _CONTEXT_WINDOWS:
            if model.startswith(prefix):
                return window
    return _DEFAULT_WINDOW[protocol]


def default_max_tokens(protocol: ProviderProtocol, model: str) -> int | None:
    """The output cap sent when config gives none (``None``: the server decides)."""
    if protocol != "anthropic":
        return None
    for prefix, cap in _ANTHROPIC_MAX_TOKENS:
        if model.startswith(prefix):
            return cap
    return _ANTHROPIC_DEFAULT_MAX_TOKENS
