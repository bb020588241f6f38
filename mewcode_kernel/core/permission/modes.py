"""The permission modes: one list shared by ``--mode``, ``/mode`` and the engine.

Kept free of imports so the notebook front end can read it at kernel start.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["LENIENT", "MODES", "Mode", "parse_mode"]

Mode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
MODES: tuple[Mode, ...] = get_args(Mode)

LENIENT: frozenset[Mode] = frozenset({"bypassPermissions"})
"""Modes that allow what no rule decided (everything but what escapes the
root or is denied). ``dontAsk`` is not one: it decides as ``default`` does,
then denies what would ask."""


def parse_mode(value: str) -> Mode:
    """``value`` as a mode; raises ``ValueError`` naming the valid ones."""
    if value not in MODES:
        raise ValueError(f"unknown permission mode {value!r}; expected one of {', '.join(MODES)}")
    return value  # type: ignore[return-value]
