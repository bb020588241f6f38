"""How an agent cell fails: one readable line, never a traceback.

An expected failure (bad config, unknown provider, a provider error, an
interrupt) raises ``AgentCellError``. IPython shows it through
``_render_traceback_``, so the cell ends with an error status (``Run All``
stops, ``jupyter execute`` fails) but the output is one line naming the cause.
Bad options are reported as ``AgentUsageError`` (IPython's own ``UsageError``
would end an awaited cell with ipykernel failing to build its reply).
"""

from __future__ import annotations

__all__ = ["AgentCellError", "AgentInterrupted", "AgentUsageError"]

_RED = "\x1b[0;31m"
_RESET = "\x1b[0m"


class AgentCellError(Exception):
    """An expected failure of an agent cell, shown as ``MewCode: <message>``."""

    title = "MewCode"

    def _render_traceback_(self) -> list[str]:
        return [f"{_RED}{self.title}{_RESET}: {self}"]


class AgentInterrupted(AgentCellError):
    """Kernel › Interrupt cancelled the running turn; the session can continue."""

    title = "Interrupted"


class AgentUsageError(AgentCellError):
    """Bad options or an empty prompt (IPython's ``UsageError``, raised as a cell error)."""

    title = "UsageError"
