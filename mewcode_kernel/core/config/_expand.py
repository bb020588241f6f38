"""``${VAR}`` and ``${VAR:-default}`` expansion from an explicit environment."""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["expand_vars"]

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_vars(value: str, env: Mapping[str, str]) -> tuple[str, list[str]]:
    """Expand ``value``; returns the result and the names that were unset and
    had no default (they expand to ``""``). As in the shell, ``:-default`` is
    used when the variable is unset or empty. Nothing else is interpreted."""
    missing: list[str] = []

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = env.get(name)
        if found:
            return found
        if default is not None:
            return default
        if found is None:
            missing.append(name)
        return ""

    return _VAR.sub(one, value), missing
