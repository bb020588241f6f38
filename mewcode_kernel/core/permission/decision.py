"""What the permission engine answers for one call: ``Decision``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .rules import Rule

__all__ = ["Decision", "Layer", "Outcome"]

Outcome = Literal["allow", "deny", "ask"]
Layer = Literal[
    "plan", "read-only", "input", "catastrophic", "hook", "deny-rule", "sandbox", "ask-rule", "allow-rule",
    "protected", "mode", "session",
]  # fmt: skip


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    """The outcome, why, and which layer or rules decided.

    An "ask" from the ``sandbox`` layer (a write outside the root, a
    suspicious name, a hard link) is ``personal``: only a person may answer
    it, never the headless policy.
    """

    outcome: Outcome
    reason: str
    layer: Layer
    rules: tuple[Rule, ...] = ()

    @property
    def rule(self) -> Rule | None:
        return self.rules[0] if self.rules else None

    @property
    def personal(self) -> bool:
        return self.outcome == "ask" and self.layer == "sandbox"

    @property
    def decided_by(self) -> str:
        """The deciding rule(s) with their sources, or the layer's name."""
        if not self.rules:
            return self.layer
        shown = ", ".join(f"{r.text} ({r.source.label})" for r in self.rules[:3])
        more = f" and {len(self.rules) - 3} more" if len(self.rules) > 3 else ""
        if self.layer.endswith("-rule"):
            return f"{self.rules[0].behavior} rule {shown}{more}"
        return f"{self.layer}: {shown}{more}"
