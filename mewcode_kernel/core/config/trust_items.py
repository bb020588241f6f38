"""What a project setting would loosen, built from the VALIDATED setting.

Each loosening setting of a project becomes a ``TrustItem``: its kind, file,
name, what it would do in words, and a ``key`` holding its full content (an
approval is remembered by key, so any change to the setting asks again).

Items are built here from the same parsed and validated values the loaders
use (``ProviderEntry``, ``McpServerEntry``, ``SandboxSection``, rule
strings), never from a second reading of the raw file: whatever shape a file
may take, what is trusted is exactly what loads. Loaders ask a
``TrustPolicy`` whether each item they are about to apply ``allows`` it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import SecretStr

from ..redaction import looks_secret
from ._schema import McpServerEntry, ProviderEntry, SandboxSection

__all__ = [
    "TrustItem",
    "TrustKind",
    "TrustPolicy",
    "allow_rule_item",
    "directory_item",
    "item_hash",
    "make_item",
    "mode_item",
    "provider_item",
    "sandbox_items",
    "server_item",
]

TrustKind = Literal[
    "provider", "allow_rule", "mode", "additional_dir", "hooks", "mcp_server", "sandbox"
]
_OFFICIAL = frozenset(
    {
        "https://api.anthropic.com",
        "https://api.anthropic.com/",
        "https://api.anthropic.com/v1",
        "https://api.openai.com/v1",
        "https://api.openai.com/v1/",
    }
)
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}")
_OWN_KEY = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
}
LOOSE_MODES = frozenset({"acceptEdits", "bypassPermissions"})
_SHOWN = 160
_SHOWN_WHOLE: frozenset[str] = frozenset({"hooks", "mcp_server"})


@dataclass(frozen=True, kw_only=True, slots=True)
class TrustItem:
    """One setting of the project that would loosen something if trusted.

    ``file`` is relative to the root; ``name`` identifies the entry within
    its kind (a provider or server name, the rule text); ``detail`` says in
    words what it would do; ``key`` is its full content (an approval covers
    exactly this content)."""

    kind: TrustKind
    file: str
    name: str
    detail: str
    key: str


class TrustPolicy(Protocol):
    """Whether a project's loosening setting may be applied now."""

    def allows(self, item: TrustItem) -> bool: ...


def item_hash(item: TrustItem) -> str:
    """What the trust store remembers of an approved item."""
    return hashlib.sha256(item.key.encode("utf-8", "surrogatepass")).hexdigest()


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def make_item(kind: TrustKind, rel: str, name: str, detail: str, content: Any) -> TrustItem:
    """An item; what would run is shown whole (a long harmless start must not
    hide its end), anything else is shortened for the card."""
    if kind not in _SHOWN_WHOLE and len(detail) > _SHOWN:
        detail = detail[: _SHOWN - 1] + "…"
    return TrustItem(
        kind=kind, file=rel, name=name, detail=detail, key=_canon([kind, rel, name, content])
    )


def _plain(value: Any) -> Any:
    return value.get_secret_value() if isinstance(value, SecretStr) else value


def provider_item(rel: str, name: str, entry: ProviderEntry) -> TrustItem | None:
    """A provider that sends requests (and a key) to a server the project
    names, or reads the user's environment variables; ``None`` otherwise."""
    base = entry.base_url
    texts = [str(_plain(v)) for v in (entry.api_key, entry.base_url) if v is not None]
    variables = sorted({m.group(0) for t in texts for m in _VAR.finditer(t)})
    custom = base is not None and base.strip() not in _OFFICIAL
    own_key = _OWN_KEY.get(str(entry.protocol or name))
    if not custom and own_key is not None:
        # the SDK's own key sent to its own endpoint: what the user would do anyway
        variables = [v for v in variables if v != f"${{{own_key}}}"]
    why: list[str] = []
    if custom:
        why.append(f"sends requests (with an API key) to {base}")
    if variables:
        why.append(f"reads {', '.join(variables)} from your environment")
    if not why:
        return None
    content = {"protocol": entry.protocol, "base_url": base, "api_key": _plain(entry.api_key)}
    return make_item("provider", rel, name, f"provider {name!r} " + " and ".join(why), content)


def allow_rule_item(rel: str, rule: Any) -> TrustItem:
    return make_item("allow_rule", rel, str(rule), f"allows {rule}", rule)


def mode_item(rel: str, mode: Any) -> TrustItem | None:
    """A lenient default mode; ``None`` for one that loosens nothing."""
    if mode not in LOOSE_MODES:
        return None
    return make_item("mode", rel, str(mode), f"starts sessions in {mode} mode", mode)


def directory_item(rel: str, entry: Any) -> TrustItem:
    return make_item(
        "additional_dir", rel, str(entry), f"lets the agent read and edit {entry}", entry
    )


def _variables(values: Iterable[str]) -> list[str]:
    return sorted({m.group(1) for v in values for m in _VAR.finditer(v)})


def server_item(rel: str, name: str, entry: McpServerEntry) -> TrustItem:
    """An MCP server the project defines: what it runs or connects to, and
    which of the user's variables (secrets named as such) it is handed."""
    if entry.command:
        what = "runs " + " ".join([entry.command, *entry.args])
    else:
        what = f"connects to {entry.url}"
    detail = f"MCP server {name!r} {what}"
    handed = _variables([*entry.env.values(), *entry.headers.values()])
    if handed:
        shown = [
            f"{v} (a secret)" if looks_secret(v) or v in _OWN_KEY.values() else v for v in handed
        ]
        where = "headers" if entry.headers and not entry.env else "environment"
        detail += f"; hands it your {', '.join(shown)} in its {where}"
    content = entry.model_dump(mode="json", exclude_defaults=False)
    return make_item("mcp_server", rel, name, detail, content)


def sandbox_items(rel: str, section: SandboxSection, user_network: str | None) -> list[TrustItem]:
    """The sandbox loosening of one file's validated ``sandbox`` section
    (``user_network``: the user's own choice; a project's ``on`` loosens only
    a user's ``off``)."""
    found: list[TrustItem] = []
    fields = section.model_fields_set
    if "enabled" in fields and section.enabled is False:
        found.append(make_item("sandbox", rel, "enabled", "turns the command sandbox off", False))
    if "network" in fields and section.network == "on" and user_network == "off":
        found.append(make_item("sandbox", rel, "network", "opens the sandbox's network", "on"))
    for entry in section.allow_write:
        found.append(
            make_item("sandbox", rel, f"allow_write:{entry}", f"lets commands write {entry}", entry)
        )
    return found


def secret_variables(values: Mapping[str, str]) -> list[str]:
    """The ``${VAR}`` names in ``values`` whose names say they hold secrets."""
    return [v for v in _variables(values.values()) if looks_secret(v)]
