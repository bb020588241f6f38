"""What a project's files could loosen: the ``TrustItem`` list.

Read straight from the files (the config loader and the permission settings
apply them; this module only lists them), so a file that a loader would
reject still shows up here:

* ``.mewcode.yaml``: providers with a non-default ``base_url`` or a
  ``${VAR}`` (the key, or any variable, sent to a server the project names),
  ``permissions.allow``, ``mcp_servers``, ``sandbox`` settings that turn it
  off, open the network or add writable directories;
* ``.claude/settings.json`` and ``.claude/settings.local.json``:
  ``permissions.allow``, ``defaultMode`` ``acceptEdits`` / ``bypassPermissions``,
  ``additionalDirectories``, ``hooks``;
* ``.mcp.json``: ``mcpServers``;
* ``.mewcode/settings.local.yaml``: the same as Claude's settings;
* ``.mewcode/hooks.yaml``: its hooks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

__all__ = ["PROJECT_FILES", "TrustItem", "TrustKind", "hook_items", "project_items"]

TrustKind = Literal[
    "provider", "allow_rule", "mode", "additional_dir", "hooks", "mcp_server", "sandbox"
]
PROJECT_FILES: tuple[str, ...] = (
    ".mewcode.yaml",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
    ".mewcode/settings.local.yaml",
    ".mewcode/hooks.yaml",
)
_OFFICIAL = frozenset(
    {
        "https://api.anthropic.com",
        "https://api.anthropic.com/",
        "https://api.anthropic.com/v1",
        "https://api.openai.com/v1",
        "https://api.openai.com/v1/",
    }
)
_VAR = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}")
_OWN_KEY = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
_LOOSE_MODES = frozenset({"acceptEdits", "bypassPermissions"})
_SHOWN = 160
_SHOWN_WHOLE: frozenset[str] = frozenset({"hooks", "mcp_server"})


@dataclass(frozen=True, kw_only=True, slots=True)
class TrustItem:
    """One setting of the project that would loosen something if trusted.

    ``file`` is relative to the root; ``name`` identifies the entry within
    its kind (a provider or server name, the rule text); ``detail`` says in
    words what it would do; ``key`` is its full content, hashed for the
    approval (so any change to it asks again)."""

    kind: TrustKind
    file: str
    name: str
    detail: str
    key: str


def project_items(root: Path, *, user_network: str | None = None) -> list[TrustItem]:
    """Every loosening setting in the project's files, in file order.

    ``user_network`` is the user's ``sandbox.network`` (a project's ``on``
    only loosens when the user chose ``off``)."""
    found: list[TrustItem] = []
    for rel in PROJECT_FILES:
        path = root / rel
        if not path.is_file():
            continue
        data = _read(path)
        if rel == ".mewcode.yaml":
            found += _mewcode_yaml(rel, data, user_network)
        elif rel == ".mcp.json":
            found += _servers(rel, _get(data, "mcpServers"))
        elif rel == ".mewcode/hooks.yaml":
            found += _hook_file(rel, data)
        else:
            found += _settings(rel, data)
    return found


def hook_items(rel: str, data: Any) -> list[TrustItem]:
    """The ``hooks`` items of one project file's parsed ``data`` (``rel`` one of
    ``PROJECT_FILES``): what the hooks loader compares with the trusted items,
    so that only the content the person approved ever runs."""
    if rel == ".mewcode/hooks.yaml":
        found = _hook_file(rel, data)
    elif rel in (".claude/settings.json", ".claude/settings.local.json"):
        found = _settings(rel, data)
    else:
        return []
    return [i for i in found if i.kind == "hooks"]


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError):
        return None


def _get(data: Any, key: str) -> Any:
    return data.get(key) if isinstance(data, Mapping) else None


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _item(kind: TrustKind, rel: str, name: str, detail: str, content: Any) -> TrustItem:
    return TrustItem(
        kind=kind,
        file=rel,
        name=name,
        # what would run is shown whole: a long harmless start must not hide its end
        detail=detail if kind in _SHOWN_WHOLE else _short(detail),
        key=_canon([kind, rel, name, content]),
    )


def _named(section: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(section, Mapping):
        yield from ((str(k), v) for k, v in section.items())
    elif isinstance(section, list):
        for entry in section:
            if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
                yield entry["name"], entry


def _mewcode_yaml(rel: str, data: Any, user_network: str | None) -> list[TrustItem]:
    found: list[TrustItem] = []
    for name, entry in _named(_get(data, "providers")):
        if not isinstance(entry, Mapping):
            continue
        base = entry.get("base_url")
        texts = [str(entry.get(k)) for k in ("api_key", "base_url") if entry.get(k) is not None]
        variables = sorted({m.group(0) for t in texts for m in _VAR.finditer(t)})
        custom = base is not None and str(base).strip() not in _OFFICIAL
        own_key = _OWN_KEY.get(str(entry.get("protocol") or name))
        if not custom and own_key is not None:
            # the SDK's own key sent to its own endpoint: what the user would do anyway
            variables = [v for v in variables if v != f"${{{own_key}}}"]
        why: list[str] = []
        if custom:
            why.append(f"sends requests (with an API key) to {base}")
        if variables:
            why.append(f"reads {', '.join(variables)} from your environment")
        if why:
            content = {k: entry.get(k) for k in ("protocol", "base_url", "api_key")}
            found.append(
                _item("provider", rel, name, f"provider {name!r} " + " and ".join(why), content)
            )
    found += _allow_rules(rel, _get(_get(data, "permissions"), "allow"))
    found += _servers(rel, _get(data, "mcp_servers"))
    sandbox = _get(data, "sandbox")
    if isinstance(sandbox, Mapping):
        if sandbox.get("enabled") is False:
            found.append(_item("sandbox", rel, "enabled", "turns the command sandbox off", False))
        if sandbox.get("network") == "on" and user_network == "off":
            found.append(_item("sandbox", rel, "network", "opens the sandbox's network", "on"))
        writes = sandbox.get("allow_write")
        for entry in writes if isinstance(writes, list) else ([writes] if writes else []):
            found.append(
                _item("sandbox", rel, f"allow_write:{entry}", f"lets commands write {entry}", entry)
            )
    return found


def _allow_rules(rel: str, entries: Any) -> list[TrustItem]:
    if isinstance(entries, str):
        entries = [entries]
    if not isinstance(entries, list):
        return []
    return [_item("allow_rule", rel, str(e), f"allows {e}", e) for e in entries]


def _servers(rel: str, section: Any) -> list[TrustItem]:
    found = []
    for name, entry in _named(section):
        what = ""
        if isinstance(entry, Mapping):
            if entry.get("command"):
                args = entry.get("args") if isinstance(entry.get("args"), list) else []
                what = "runs " + " ".join(str(a) for a in [entry["command"], *args])
            elif entry.get("url"):
                what = f"connects to {entry['url']}"
        found.append(_item("mcp_server", rel, name, f"MCP server {name!r} {what}".strip(), entry))
    return found


def _settings(rel: str, data: Any) -> list[TrustItem]:
    perms = _get(data, "permissions")
    found = _allow_rules(rel, _get(perms, "allow"))
    mode = _get(perms, "defaultMode")
    if mode in _LOOSE_MODES:
        found.append(_item("mode", rel, str(mode), f"starts sessions in {mode} mode", mode))
    dirs = _get(perms, "additionalDirectories") or _get(perms, "additional_directories")
    for entry in dirs if isinstance(dirs, list) else ([dirs] if dirs else []):
        found.append(
            _item("additional_dir", rel, str(entry), f"lets the agent read and edit {entry}", entry)
        )
    hooks = _get(data, "hooks")
    if hooks:
        found.append(_item("hooks", rel, "hooks", f"runs hooks: {_claude_hooks(hooks)}", hooks))
    return found


def _hook_file(rel: str, data: Any) -> list[TrustItem]:
    hooks = _get(data, "hooks")
    if not isinstance(hooks, list) or not hooks:
        return [_item("hooks", rel, "hooks", "defines hooks", data)] if data else []
    found = []
    for i, hook in enumerate(hooks):
        name = str(_get(hook, "name") or f"#{i + 1}")
        action = _get(hook, "action")
        what = _get(action, "command") or _get(action, "url") or _get(action, "type") or ""
        event = _get(hook, "event") or "?"
        found.append(_item("hooks", rel, name, f"hook {name!r} on {event}: {what}", hook))
    return found


def _claude_hooks(hooks: Any) -> str:
    """Each command of a Claude Code ``hooks`` section, with its event and
    matcher, so trusting it means seeing what runs."""
    if not isinstance(hooks, Mapping):
        return _canon(hooks)
    shown: list[str] = []
    for event, entries in sorted(hooks.items(), key=lambda kv: str(kv[0])):
        for entry in entries if isinstance(entries, list) else [entries]:
            matcher = _get(entry, "matcher")
            where = f"{event} ({matcher})" if matcher else str(event)
            inner = _get(entry, "hooks")
            for hook in inner if isinstance(inner, list) else [entry]:
                what = _get(hook, "command") or _get(hook, "prompt") or _canon(hook)
                shown.append(f"{where}: {what}")
    return "; ".join(shown) or "none"
