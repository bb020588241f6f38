"""Loading one config file into a validated layer, turning every problem into
a ``ConfigError`` that names the file, the line and the field.

Granularity of failure: an unknown key is dropped with a warning; an invalid
``providers.<name>`` or ``mcp_servers.<name>`` entry is dropped with a warning
(the rest of the file still applies); any other schema error, or a YAML syntax
error, makes the whole file be ignored.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from ._schema import (
    STRICT_SANDBOX,
    ConfigFile,
    McpServerEntry,
    PermissionsSection,
    ProviderEntry,
)
from ._yaml import YamlDoc, read_yaml

__all__ = ["PROJECT_CONFIG", "Layer", "load_layer"]

#: the project's own config file, at its root
PROJECT_CONFIG = ".mewcode.yaml"

_NAMED_SECTIONS = {"providers": "provider", "mcp_servers": "server"}
_MAX_PASSES = 100


@dataclass(frozen=True, kw_only=True, slots=True)
class Layer:
    """A validated file plus what is needed to point back into it."""

    path: Path
    file: ConfigFile
    doc: YamlDoc
    invalid_providers: dict[str, ConfigError] = field(default_factory=dict)
    # name -> index, for sections written as lists of entries with a ``name``
    list_index: dict[str, dict[str, int]] = field(default_factory=dict)

    def line_of(self, loc: Sequence[str | int]) -> int | None:
        """The line of ``loc`` (a path in the normalised data) in the file."""
        return self.doc.line_of(_yaml_loc(loc, self.list_index))


def load_layer(path: Path) -> tuple[Layer | None, list[ConfigError]]:
    """Load ``path``. Returns ``(None, [])`` when it does not exist, ``(None,
    problems)`` when it cannot be used at all, else the layer and its warnings."""
    if not path.exists() or _empty_folder(path):
        return None, []
    try:
        doc = read_yaml(path)
    except ConfigError as exc:
        return None, [_ignored(exc)]
    warnings = list(doc.warnings)
    data = doc.data
    if data is None:
        data = {}
    if not isinstance(data, dict):
        line = doc.line_of(())
        return None, [
            *warnings,
            ConfigError(
                "the top level must be a mapping of settings; this file was ignored",
                path=str(path),
                line=line,
            ),
        ]
    list_index: dict[str, dict[str, int]] = {}
    for section in _NAMED_SECTIONS:
        warnings += _normalise_named_list(data, section, doc, list_index)
    invalid: dict[str, ConfigError] = {}
    for _ in range(_MAX_PASSES):
        try:
            file = ConfigFile.model_validate(data)
        except ValidationError as exc:
            fatal = _absorb_errors(exc, data, doc, list_index, warnings, invalid)
            if fatal:
                return None, [*warnings, *fatal]
            continue
        layer = Layer(
            path=path, file=file, doc=doc, invalid_providers=invalid, list_index=list_index
        )
        return layer, sorted(warnings, key=lambda w: w.line or 0)
    return None, [
        *warnings,
        ConfigError("too many problems; this file was ignored", path=str(path)),
    ]


def _absorb_errors(
    exc: ValidationError,
    data: dict[str, Any],
    doc: YamlDoc,
    list_index: dict[str, dict[str, int]],
    warnings: list[ConfigError],
    invalid: dict[str, ConfigError],
) -> list[ConfigError]:
    """Drop unknown keys and invalid named entries from ``data``, recording a
    warning for each; return the errors that make the whole file unusable."""
    path = str(doc.path)
    fatal: list[ConfigError] = []
    to_drop: list[tuple[str | int, ...]] = []
    strict_done: set[tuple[str | int, ...]] = set()
    for err in exc.errors(include_url=False, include_input=False):
        loc = tuple(err["loc"])
        line = doc.line_of(_yaml_loc(loc, list_index))
        where = _dotted(loc)
        if err["type"] == "extra_forbidden":
            key = str(loc[-1])
            warnings.append(
                ConfigError(_unknown_key_message(key, loc), path=path, line=line, field=where)
            )
            to_drop.append(loc)
            continue
        message = _clean(err["msg"])
        section = loc[0] if loc else None
        if section == "sandbox" and len(loc) >= 2 and isinstance(data.get("sandbox"), dict):
            # a security setting that cannot be read is not skipped (that would
            # leave another reader's idea of it in force): its strict value applies
            key = str(loc[1])
            strict = STRICT_SANDBOX.get(key)
            given = _get_path(data, loc)
            if (key, given) == ("allow_write", None) or loc[:2] in strict_done:
                continue  # one message per setting
            strict_done.add(loc[:2])
            warnings.append(
                ConfigError(
                    f"{_sandbox_message(key, given, message)}; the strict value "
                    f"({_strict_text(key, strict)}) applies",
                    path=path,
                    line=line,
                    field=where,
                )
            )
            if key in STRICT_SANDBOX:
                data["sandbox"][key] = strict
            else:
                to_drop.append(loc[:2])
            continue
        if section == "sandbox" and len(loc) == 1:
            warnings.append(
                ConfigError(
                    f"'sandbox' must be a mapping of settings, not {data['sandbox']!r}; the "
                    "sandbox keeps its defaults (enabled)",
                    path=path,
                    line=line,
                    field=where,
                )
            )
            data["sandbox"] = {}
            continue
        if section == "telemetry" and isinstance(data.get("telemetry"), dict) and len(loc) >= 2:
            # a privacy setting that cannot be read is left out: nothing more is exported
            warnings.append(
                ConfigError(
                    f"{message}; telemetry.{loc[1]} was ignored (it stays off)",
                    path=path,
                    line=line,
                    field=where,
                )
            )
            to_drop.append(loc[:2])
            continue
        if section == "telemetry" and len(loc) == 1:
            warnings.append(
                ConfigError(
                    f"'telemetry' must be a mapping of settings, not {data['telemetry']!r}; "
                    "it was ignored (telemetry stays off)",
                    path=path,
                    line=line,
                    field=where,
                )
            )
            data["telemetry"] = {}
            continue
        if section == "tool_search" and len(loc) <= 2:
            # a tuning knob: a bad value is dropped and its default applies
            warnings.append(
                ConfigError(
                    f"{message}; tool_search{'.' + str(loc[1]) if len(loc) == 2 else ''} was "
                    "ignored (the default applies)",
                    path=path,
                    line=line,
                    field=where,
                )
            )
            to_drop.append(loc[:2])
            continue
        if (
            isinstance(section, str)
            and section in _NAMED_SECTIONS
            and len(loc) >= 2
            and isinstance(data.get(section), dict)
            and loc[1] in data[section]
        ):
            kind = _NAMED_SECTIONS[section]
            problem = ConfigError(
                f"{message}; {kind} {loc[1]!r} was ignored", path=path, line=line, field=where
            )
            warnings.append(problem)
            if section == "providers":
                invalid.setdefault(str(loc[1]), problem)
            to_drop.append(loc[:2])
            continue
        fatal.append(
            ConfigError(f"{message}; this file was ignored", path=path, line=line, field=where)
        )
    if not fatal:
        for loc in to_drop:
            _delete(data, loc)
    return fatal


def _normalise_named_list(
    data: dict[str, Any], section: str, doc: YamlDoc, list_index: dict[str, dict[str, int]]
) -> list[ConfigError]:
    """``section: [{name: x, ...}, ...]`` becomes ``section: {x: {...}}``."""
    entries = data.get(section)
    if not isinstance(entries, list):
        return []
    warnings: list[ConfigError] = []
    mapping: dict[str, Any] = {}
    index: dict[str, int] = {}
    for i, item in enumerate(entries):
        line = doc.line_of((section, i))
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name:
            warnings.append(
                ConfigError(
                    f"a {_NAMED_SECTIONS[section]} listed here needs a 'name'; entry ignored",
                    path=str(doc.path),
                    line=line,
                    field=f"{section}[{i}]",
                )
            )
            continue
        if name in mapping:
            warnings.append(
                ConfigError(
                    f"{name!r} is listed twice; the last one is used",
                    path=str(doc.path),
                    line=line,
                    field=f"{section}[{i}]",
                )
            )
        mapping[name] = {k: v for k, v in item.items() if k != "name"}
        index[name] = i
    data[section] = mapping
    list_index[section] = index
    return warnings


def _yaml_loc(
    loc: Sequence[str | int], list_index: dict[str, dict[str, int]]
) -> tuple[str | int, ...]:
    loc = tuple(loc)
    if len(loc) >= 2 and isinstance(loc[0], str) and loc[0] in list_index:
        i = list_index[loc[0]].get(str(loc[1]))
        if i is not None:
            return (loc[0], i, *loc[2:])
    return loc


def _delete(data: dict[str, Any], loc: tuple[str | int, ...]) -> None:
    node: Any = data
    for part in loc[:-1]:
        if not isinstance(node, dict) or part not in node:
            return
        node = node[part]
    if isinstance(node, dict):
        node.pop(loc[-1], None)


def _fields_at(loc: tuple[str | int, ...]) -> list[str]:
    model: type[BaseModel] | None = None
    if len(loc) == 1:
        model = ConfigFile
    elif len(loc) == 2 and loc[0] == "permissions":
        model = PermissionsSection
    elif len(loc) == 3 and loc[0] == "providers":
        model = ProviderEntry
    elif len(loc) == 3 and loc[0] == "mcp_servers":
        model = McpServerEntry
    return list(model.model_fields) if model else []


def _unknown_key_message(key: str, loc: tuple[str | int, ...]) -> str:
    close = difflib.get_close_matches(key, _fields_at(loc), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown key {key!r}{hint}; it is ignored"


def _get_path(data: Any, loc: tuple[str | int, ...]) -> Any:
    node = data
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _sandbox_message(key: str, given: Any, message: str) -> str:
    what = f"{given!r} ({type(given).__name__})"
    if key == "enabled":
        return f"sandbox.enabled must be true or false, not {what}"
    if key == "network":
        return f"sandbox.network must be on or off, not {what}"
    if key == "allow_write":
        return f"sandbox.allow_write must list paths, not {what}"
    return message


def _strict_text(key: str, value: Any) -> str:
    if key == "allow_write":
        return "no extra writable directories"
    return f"{key}: {str(value).lower()}"


def _dotted(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _clean(msg: str) -> str:
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            return msg[len(prefix) :]
    return msg


def _ignored(exc: ConfigError) -> ConfigError:
    return ConfigError(
        f"{exc.message}; this file was ignored", path=exc.path, line=exc.line, field=exc.field
    )


def _empty_folder(path: Path) -> bool:
    """An empty folder where the file belongs: the OS sandbox's stand-in
    while a sandboxed process runs (it keeps the file from being created)."""
    try:
        return path.is_dir() and not any(path.iterdir())
    except OSError:
        return False
