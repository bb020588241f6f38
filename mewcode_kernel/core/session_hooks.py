"""``SessionHooks``: the hook rules a session runs on its lifecycle events.

It attaches a ``HookEngine`` to the session's lifecycle (subagents share
it), gives the engine the session's way to run a subagent action, reads
the rule files again when a conversation begins or the project is
trusted, and leaves what was rejected or failed late as notices.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from .events import Notice
from .hooks import HookEngine
from .lifecycle import Lifecycle

__all__ = ["SessionHooks"]


class SessionHooks:
    """The hooks of one session (``engine``: ``None`` when the lifecycle's
    dispatcher is someone else's, or there is none)."""

    def __init__(
        self,
        lifecycle: Lifecycle,
        notify: Callable[[Notice], None],
        run_subagent: Callable[[str, str], Awaitable[str]],
    ) -> None:
        self.lifecycle = lifecycle
        self._notify = notify
        self._run_subagent = run_subagent
        self.engine: HookEngine | None = None

    def use(self, engine: HookEngine) -> None:
        """Run ``engine``'s rules on the lifecycle's events; the rules it
        rejected are said before the next turn."""
        self.engine = engine
        self.lifecycle.dispatcher = engine
        engine.run_subagent = self._run_subagent
        engine.on_late = lambda message: self._notify(Notice(level="warning", message=message))
        self._problems(engine.problems())

    def reload(self) -> None:
        """Read the hook files again: a new conversation, or the project was trusted."""
        if self.engine is not None:
            self._problems(self.engine.reload())

    async def aclose(self) -> None:
        if self.engine is not None:
            await self.engine.aclose()

    def _problems(self, problems: list[str]) -> None:
        for problem in problems:
            self._notify(Notice(level="warning", message=problem))
