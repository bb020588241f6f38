"""What a project's files could loosen: the ``TrustItem`` list.

Every item comes from the file as the session's own loader reads it (the
config layer loader for ``.mewcode.yaml``, the ``.mcp.json`` reader with
both of its shapes, the JSON/YAML readers of the permission settings and
hook files) and is built by the same functions the loaders check with
(``core.config.trust_items``), so what is trusted is exactly what loads:

* ``.mewcode.yaml``: providers with a non-default ``base_url`` or a
  ``${VAR}``, ``permissions.allow``, ``mcp_servers``, ``sandbox`` settings
  that turn it off, open the network or add writable directories;
* ``.claude/settings.json`` and ``.claude/settings.local.json``:
  ``permissions.allow``, ``defaultMode`` ``acceptEdits`` / ``bypassPermissions``,
  ``additionalDirectories``, ``hooks``;
* ``.mcp.json``: its servers (``{"mcpServers": {...}}`` or a bare map);
* ``.mewcode/settings.local.yaml``: the same as Claude's settings;
* ``.mewcode/hooks.yaml``: its hooks.

A hook's item also covers the script files its command runs where they lie
in the project (``hook_scripts``): editing such a script asks again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ..config._layer import load_layer
from ..config._mcp_json import load_mcp_json
from ..config.trust_items import (
    TrustItem,
    allow_rule_item,
    directory_item,
    make_item,
    mode_item,
    provider_item,
    sandbox_items,
    server_item,
)
from ..project_paths import PROJECT_SETTINGS_FILES

__all__ = [
    "PROJECT_FILES",
    "hook_items",
    "hook_scripts",
    "project_items",
    "read_settings_file",
    "script_digest",
    "settings_items",
]

PROJECT_FILES: tuple[str, ...] = PROJECT_SETTINGS_FILES
_PROJECT_DIR_VARS = (
    "${CLAUDE_PROJECT_DIR}",
    "$CLAUDE_PROJECT_DIR",
    "${MEWCODE_PROJECT_DIR}",
    "$MEWCODE_PROJECT_DIR",
)
_SCRIPT_BYTES = 16 << 20
_OPERATORS = ";&|()<>`"


def project_items(root: Path, *, user_network: str | None = None) -> list[TrustItem]:
    """Every loosening setting in the project's files, in file order.

    ``user_network`` is the user's ``sandbox.network`` (a project's ``on``
    only loosens when the user chose ``off``)."""
    found: list[TrustItem] = []
    for rel in PROJECT_FILES:
        path = root / rel
        if not path.is_file():
            continue
        if rel == ".mewcode.yaml":
            found += _mewcode_yaml(path, rel, user_network)
        elif rel == ".mcp.json":
            loaded, _ = load_mcp_json(path)
            if loaded is not None:
                found += [server_item(rel, n, e) for n, e in loaded.servers.items()]
        elif rel == ".mewcode/hooks.yaml":
            found += _hook_file(rel, read_settings_file(path), root)
        else:
            found += settings_items(rel, read_settings_file(path), root)
    return found


def read_settings_file(path: Path) -> Any:
    """A settings or hooks file as its loader parses it (``None`` if unreadable)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError):
        return None


def hook_items(rel: str, data: Any, root: Path) -> list[TrustItem]:
    """The ``hooks`` items of one project file's parsed ``data`` (``rel`` one of
    ``PROJECT_FILES``): what the hooks loader compares with the trusted items,
    so that only the content the person approved ever runs."""
    if rel == ".mewcode/hooks.yaml":
        found = _hook_file(rel, data, root)
    elif rel in (".claude/settings.json", ".claude/settings.local.json"):
        found = settings_items(rel, data, root)
    else:
        return []
    return [i for i in found if i.kind == "hooks"]


def _get(data: Any, key: str) -> Any:
    return data.get(key) if isinstance(data, Mapping) else None


def _mewcode_yaml(path: Path, rel: str, user_network: str | None) -> list[TrustItem]:
    layer, _ = load_layer(path)
    if layer is None:
        return []
    file = layer.file
    found = [item for n, e in file.providers.items() if (item := provider_item(rel, n, e))]
    found += [allow_rule_item(rel, r) for r in file.permissions.allow]
    found += [server_item(rel, n, e) for n, e in file.mcp_servers.items()]
    found += sandbox_items(rel, file.sandbox, user_network)
    return found


def settings_items(rel: str, data: Any, root: Path) -> list[TrustItem]:
    """The items of a Claude Code settings file or ``.mewcode/settings.local.yaml``,
    read as ``core.permission.settings`` and the hooks loader read them."""
    perms = _get(data, "permissions")
    found: list[TrustItem] = []
    if isinstance(perms, Mapping):
        allow = perms.get("allow")
        for rule in [allow] if isinstance(allow, str) else allow if isinstance(allow, list) else []:
            found.append(allow_rule_item(rel, rule))
        mode = mode_item(rel, perms.get("defaultMode"))
        if mode is not None:
            found.append(mode)
        dirs = perms.get("additionalDirectories", perms.get("additional_directories"))
        for entry in dirs if isinstance(dirs, list) else ([] if dirs is None else [dirs]):
            found.append(directory_item(rel, entry))
    hooks = _get(data, "hooks")
    if hooks:
        scripts = [s for c in _claude_commands(hooks) for s in hook_scripts(c, root)]
        found.append(
            make_item(
                "hooks", rel, "hooks", f"runs hooks: {_claude_hooks(hooks)}", [hooks, scripts]
            )
        )
    return found


def _hook_file(rel: str, data: Any, root: Path) -> list[TrustItem]:
    hooks = _get(data, "hooks")
    if not isinstance(hooks, list) or not hooks:
        return [make_item("hooks", rel, "hooks", "defines hooks", data)] if data else []
    found = []
    for i, hook in enumerate(hooks):
        name = str(_get(hook, "name") or f"#{i + 1}")
        action = _get(hook, "action")
        what = _get(action, "command") or _get(action, "url") or _get(action, "type") or ""
        event = _get(hook, "event") or "?"
        command = _get(action, "command")
        scripts = hook_scripts(command, root) if isinstance(command, str) else []
        found.append(
            make_item("hooks", rel, name, f"hook {name!r} on {event}: {what}", [hook, scripts])
        )
    return found


def _claude_commands(hooks: Any) -> list[str]:
    out: list[str] = []
    if not isinstance(hooks, Mapping):
        return out
    for entries in hooks.values():
        for entry in entries if isinstance(entries, list) else [entries]:
            inner = _get(entry, "hooks")
            for hook in inner if isinstance(inner, list) else [entry]:
                command = _get(hook, "command")
                args = _get(hook, "args")
                if isinstance(command, str):
                    out.append(command)
                elif isinstance(args, list) and all(isinstance(a, str) for a in args):
                    out.append(shlex.join(args))  # the exec form: its scripts are pinned too
    return out


def _claude_hooks(hooks: Any) -> str:
    """Each command of a Claude Code ``hooks`` section, with its event and
    matcher, so trusting it means seeing what runs."""
    if not isinstance(hooks, Mapping):
        return json.dumps(hooks, sort_keys=True, ensure_ascii=False, default=str)
    shown: list[str] = []
    for event, entries in sorted(hooks.items(), key=lambda kv: str(kv[0])):
        for entry in entries if isinstance(entries, list) else [entries]:
            matcher = _get(entry, "matcher")
            where = f"{event} ({matcher})" if matcher else str(event)
            inner = _get(entry, "hooks")
            for hook in inner if isinstance(inner, list) else [entry]:
                args = _get(hook, "args")
                what = (
                    _get(hook, "command")
                    or (shlex.join(map(str, args)) if isinstance(args, list) else None)
                    or _get(hook, "prompt")
                    or json.dumps(hook, sort_keys=True, ensure_ascii=False, default=str)
                )
                shown.append(f"{where}: {what}")
    return "; ".join(shown) or "none"


def hook_scripts(command: str, root: Path) -> list[tuple[str, str]]:
    """The files inside ``root`` that ``command`` names (a script it runs, a
    program in the project), each with the SHA-256 of its content now: a
    hook's trust covers them, so editing one asks again. Read the way the
    hook's shell would find them: relative to the root (hooks run there), or
    through ``$CLAUDE_PROJECT_DIR`` / ``$MEWCODE_PROJECT_DIR``."""
    real_root = os.path.realpath(root)
    text = command
    for var in _PROJECT_DIR_VARS:
        text = text.replace(var, real_root)
    try:
        words = shlex.split(text, comments=False, posix=True)
    except ValueError:
        words = text.split()
    found: dict[str, str] = {}
    for word in words:
        for candidate in _candidates(word):
            path = candidate if os.path.isabs(candidate) else os.path.join(real_root, candidate)
            real = os.path.realpath(path)
            if not real.startswith(real_root + os.sep) or real in found:
                continue
            digest = _file_digest(real)
            if digest is not None:
                found[real] = digest
    return [(os.path.relpath(p, real_root), d) for p, d in sorted(found.items())]


def _candidates(word: str, depth: int = 0) -> list[str]:
    """``word`` and the paths inside it (``--opt=path``, ``a;b``, ``(cd x``,
    the words of a command string handed to ``sh -c``)."""
    pieces = [word]
    for sep in ("=", ":", *_OPERATORS):
        pieces = [p for piece in pieces for p in piece.split(sep)]
    if depth < 3 and any(c.isspace() for c in word):
        try:
            inner = shlex.split(word, posix=True)
        except ValueError:
            inner = word.split()
        pieces += [p for w in inner for p in _candidates(w, depth + 1)]
    return [p.strip() for p in dict.fromkeys([word, *pieces]) if p.strip() and p.strip() != "."]


def script_digest(root: Path, rel: str) -> str | None:
    """The SHA-256 of ``rel`` under ``root`` now (``None``: not a regular file
    inside the root)."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, rel))
    if not real.startswith(real_root + os.sep):
        return None
    return _file_digest(real)


def _file_digest(path: str) -> str | None:
    try:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read(_SCRIPT_BYTES)).hexdigest()
    except OSError:
        return None
