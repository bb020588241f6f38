"""The context side of ``AgentSession``: system prompt refreshes, the
per-turn message, memory notes, compaction and its record on disk.

Kept apart from ``agent_session`` so that module stays about wiring and
session management. ``AgentSession`` mixes this in; the attributes below are
set by its constructor.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from .context import COMPACT_META
from .context.report import ContextReport, context_report
from .conversation import Conversation
from .events import AgentEvent, Notice
from .messages import Message
from .prompt import MemoryNote, MemoryStore, PromptAssembler
from .prompt.environment import IDLE_GAP
from .prompt.memory import Scope

if TYPE_CHECKING:
    from .agent import Agent, SessionRuntime
    from .session import LoadedSession, SessionWriter

__all__ = ["SessionContextMixin"]


class SessionContextMixin:
    """Context management for an ``AgentSession``."""

    agent: Agent
    runtime: SessionRuntime
    conversation: Conversation
    prompts: PromptAssembler
    _writer: SessionWriter | None
    _pending_notices: list[Notice]
    _warned: set[str]
    _check_size: bool

    if TYPE_CHECKING:

        def _ensure_writer(self) -> None: ...

    # --- system prompt and memory ----------------------------------------------

    @property
    def memory(self) -> MemoryStore:
        """The project's and the user's memory notes."""
        return self.prompts.memory

    def _refresh_system_prompt(self) -> None:
        """Re-read instruction files and memory into the system prompt. Called
        at session boundaries (start, ``/clear``, resume) and after a
        compaction only, so the prompt is byte-stable between compactions."""
        prompt, warnings = self.prompts.system_prompt()
        self.agent.system_prompt = prompt
        for warning in warnings:
            if warning not in self._warned:
                self._warned.add(warning)
                self._pending_notices.append(Notice(level="warning", message=warning))

    def remember(self, note: str, *, scope: Scope = "project") -> MemoryNote:
        """Save a memory note (``/memory add``; the front end routes ``# note``
        prompts here). It joins the system prompt at the next session boundary
        or compaction; meanwhile the next turn carries it as a reminder."""
        saved = self.memory.add(note, scope=scope)
        self.runtime.add_reminder(
            f"The user asked you to remember this from now on ({scope} memory): {saved.text}"
        )
        return saved

    # --- turns -------------------------------------------------------------------

    async def _turn_message(self, prompt: str) -> Message:
        gap, self.runtime.idle_gap = self.runtime.idle_gap, None
        reminders = self.runtime.take_reminders()
        return await self.prompts.turn_message(prompt, reminders=reminders, idle_gap=gap)

    def _note_resumed(self, loaded: LoadedSession) -> None:
        """After a resume: check the size before the next turn, note a long idle gap."""
        self._check_size = True
        if loaded.last_activity is not None:
            gap = datetime.now(UTC) - loaded.last_activity
            if gap > IDLE_GAP:
                self.runtime.idle_gap = gap
        if loaded.compacted_from:
            self._pending_notices.append(
                Notice(
                    level="info",
                    message=f"Resumed from the session's last compaction ({loaded.compacted_from} "
                    "earlier messages are summarised).",
                )
            )

    async def _compact_if_too_large(self) -> AsyncIterator[AgentEvent]:
        """Compact a resumed conversation that would not fit."""
        self._check_size = False
        context = self.agent.context
        if context is None or not len(self.conversation):
            return
        request = self.agent.build_request(self.conversation)
        if context.estimate(request) >= context.compact_threshold:
            async for event in self.agent.compact(self.conversation, trigger="resume"):
                yield event

    # --- compaction ----------------------------------------------------------------

    async def compact(self, instructions: str | None = None) -> AsyncIterator[AgentEvent]:
        """Summarise older turns now (``/compact [instructions]``)."""
        if not len(self.conversation):
            yield Notice(level="info", message="Nothing to compact: the conversation is empty.")
            return
        self._ensure_writer()
        async for event in self.agent.compact(
            self.conversation, trigger="manual", instructions=instructions
        ):
            yield event

    def _persist_replace(self, messages: list[Message]) -> None:
        """``Conversation.on_replace``: a compaction is appended behind a
        ``compact`` marker (history kept); any other replace rewrites the file."""
        if self._writer is None:
            return
        record = messages[0].meta.get(COMPACT_META) if messages else None
        if isinstance(record, dict):
            self._writer.append_compaction(messages, record)
        else:
            self._writer.replace(messages)

    def context_report(self) -> ContextReport:
        """How full the context is (``/context``)."""
        if self.agent.context is None:
            raise RuntimeError("this session has no context manager")
        return context_report(self.agent.context, self.agent.build_request(self.conversation))
