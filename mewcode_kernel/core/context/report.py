"""What ``/context`` shows: how full the window is and what fills it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..providers.base import ModelRequest
from .manager import ContextManager
from .tokens import estimate_messages, estimate_text, estimate_tools

__all__ = ["ContextReport", "context_report"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ContextReport:
    """A snapshot of the context. ``used`` is the size of the next request
    (the provider-reported anchor plus an estimate when ``anchored``, else a
    whole estimate); the parts are estimates."""

    window: int
    used: int
    anchored: bool
    compact_threshold: int
    system_tokens: int
    tools_tokens: int
    messages_tokens: int
    messages: int
    offloaded_results: int
    offloaded_chars: int
    compactions: int
    compact_failures: int
    breaker_open: bool

    @property
    def share(self) -> float:
        """``used`` as a share of the window."""
        return self.used / self.window if self.window else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "share": round(self.share, 4)}

    def markdown(self) -> str:
        how = "reported by the provider + estimate" if self.anchored else "estimated"
        breaker = (
            " Automatic compaction is **off** after repeated failures (use `/compact`)."
            if self.breaker_open
            else ""
        )
        lines = [
            f"Context: **{self.used:,}** of {self.window:,} tokens ({self.share:.0%}; {how}). "
            f"Older turns are compacted past {self.compact_threshold:,}.{breaker}",
            "",
            "| part | tokens (est.) |",
            "| --- | ---: |",
            f"| system prompt | {self.system_tokens:,} |",
            f"| tool definitions | {self.tools_tokens:,} |",
            f"| messages ({self.messages}) | {self.messages_tokens:,} |",
            "",
            f"{self.offloaded_results} large tool result(s) kept as previews "
            f"({self.offloaded_chars:,} characters moved to files); "
            f"{self.compactions} compaction(s) this session.",
        ]
        return "\n".join(lines)


def context_report(manager: ContextManager, request: ModelRequest) -> ContextReport:
    """The report for ``request`` (what would be sent now)."""
    state = manager.state
    used, anchored = manager.measure(request)
    offloaded = state.offloaded
    return ContextReport(
        window=manager.window,
        used=used,
        anchored=anchored,
        compact_threshold=manager.compact_threshold,
        system_tokens=estimate_text(request.system),
        tools_tokens=estimate_tools(request.tools),
        messages_tokens=estimate_messages(request.messages),
        messages=len(request.messages),
        offloaded_results=len(offloaded),
        offloaded_chars=sum(o.chars - o.kept_chars for o in offloaded),
        compactions=len(state.compactions),
        compact_failures=state.compact_failures,
        breaker_open=state.breaker_open,
    )
