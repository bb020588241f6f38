"""Providers from the config layers: merged per entry and per field (a
later layer's field wins and clears that field's problem), ``${VAR}``
expanded in ``api_key`` and ``base_url``, the user's key kept from an
entry whose project layer moves it to another endpoint, and a project's
provider left out while the project is not trusted to choose one. With no
configured provider at all, ``anthropic`` / ``openai`` come from their SDK
key variables."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from ..errors import ConfigError
from ..locations import forwarding_hint
from ._expand import expand_vars
from ._layer import PROJECT_CONFIG, Layer
from .providers import ENV_API_KEY, ENV_BASE_URL, default_model, sdk_of
from .resolved import ConfiguredProvider
from .trust_items import TrustItem, provider_item

__all__ = ["env_providers", "merge_providers"]

_EXPANDED = ("api_key", "base_url")


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
                hint = forwarding_hint(missing, env)
                problems[f] = ConfigError(
                    f"{f} uses {names}, which is not set" + (f"; {hint}" if hint else ""),
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
                    "protocol",
                    f"provider {self.name!r} has no 'protocol' (anthropic, openai or openai-responses)",
                ),
            )
        elif base_url is not None and not v.get("model"):
            # Defaults are for the official endpoints; a custom server needs its model named.
            problems.append(
                self._error("model", f"provider {self.name!r} sets base_url but no 'model'")
            )
        elif base_url is None and "base_url" not in self.problems:
            # The official endpoint: the SDK's own variables apply, as in the SDK.
            sdk = sdk_of(protocol)
            base_url = env.get(ENV_BASE_URL[sdk]) or None
            if api_key is None and "api_key" not in self.problems:
                api_key = env.get(ENV_API_KEY[sdk]) or None
                if api_key is None and base_url is None:
                    hint = forwarding_hint([ENV_API_KEY[sdk]], env)
                    problems.append(
                        self._error(
                            "api_key",
                            f"no API key: set api_key in this entry or {ENV_API_KEY[sdk]}"
                            + (f"; {hint}" if hint else ""),
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
            store=v.get("store") is True,
        )


def merge_providers(
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


def env_providers(env: Mapping[str, str]) -> dict[str, ConfiguredProvider]:
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
