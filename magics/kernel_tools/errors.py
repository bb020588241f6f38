"""The last exception a notebook cell raised, kept for ``last_error``.

IPython's ``post_run_cell`` event gives each cell's result: its exception
and its source. Agent cells run in the same shell and are left out (their
own failures, ``AgentCellError`` and the like, are not the user's error),
so the error an agent sees is the one the person just hit. ``fresh`` says
the cell right before the agent cell raised, for the one line the turn's
context gets about it.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any

from ..transformer import rewrite, rewrite_slash

__all__ = ["MAX_TRACEBACK", "ErrorRecord", "ErrorTracker"]

MAX_TRACEBACK = 8000
"""Characters of a traceback the model gets (its end is kept: where it raised)."""


@dataclass(frozen=True, slots=True)
class ErrorRecord:
    """One exception, the cell that raised it and that cell's number."""

    error: BaseException
    cell: str
    execution_count: int | None

    @property
    def headline(self) -> str:
        message = str(self.error).strip().splitlines()
        first = f": {message[0][:160]}" if message else ""
        return f"{type(self.error).__name__}{first}"

    def report(self) -> str:
        tb = "".join(traceback.format_exception(self.error)).rstrip()
        if len(tb) > MAX_TRACEBACK:
            tb = "[… the start of the traceback is cut]\n" + tb[-MAX_TRACEBACK:]
        from .namespace import mask_keys  # the core's patterns: loaded with the first turn

        number = f" [{self.execution_count}]" if self.execution_count else ""
        return mask_keys(
            f"{self.headline}\n\nThe cell{number} that raised it:\n{self.cell.rstrip()}\n\n{tb}"
        )


def _is_agent_cell(raw: str) -> bool:
    stripped = raw.lstrip()
    return rewrite(stripped) is not None or rewrite_slash(stripped) is not None


class ErrorTracker:
    """Follows one shell's cells (``post_run_cell``)."""

    def __init__(self) -> None:
        self.last: ErrorRecord | None = None
        self.fresh = False

    def post_run_cell(self, result: Any) -> None:
        info = getattr(result, "info", None)
        raw = getattr(info, "raw_cell", None) or ""
        if _is_agent_cell(raw):
            return
        error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
        if error is None:
            self.fresh = False
            return
        self.last = ErrorRecord(
            error=error, cell=raw, execution_count=getattr(result, "execution_count", None)
        )
        self.fresh = True

    def take_fresh(self) -> ErrorRecord | None:
        """The error of the cell just before, once (the next turn is offered it)."""
        if not self.fresh:
            return None
        self.fresh = False
        return self.last

    def context_line(self) -> str | None:
        """The one line a turn right after a failed cell gets (``None``: none)."""
        record = self.take_fresh()
        if record is None:
            return None
        from .namespace import mask_keys

        number = f" [{record.execution_count}]" if record.execution_count else ""
        return mask_keys(
            f"The user's last notebook cell{number} raised {record.headline}; "
            "call last_error for its traceback and the cell's source."
        )
