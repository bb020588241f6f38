"""The sandbox settings from the config layers: the project wins per key,
``allow_write`` lists are joined (a relative path from the root for the
project file, from the home folder for the user's), ``allow_unix_sockets``
is read from the user file only, and a project's loosening is left out
while the project is not trusted."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigError
from ._layer import PROJECT_CONFIG, Layer
from .resolved import SandboxSettings
from .trust_items import TrustItem, sandbox_items

__all__ = ["merge_sandbox"]


def merge_sandbox(
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
