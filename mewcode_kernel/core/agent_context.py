"""``SessionContext``: the context side of an ``AgentSession``: system prompt
refreshes, the per-turn message, memory notes, compaction and its record on
disk, and the ``/context`` report.

A helper the session holds (composition), with its own small interface: it
works on the session's agent of the moment (``agent()``) and the
conversation it is given, hands a refreshed system prompt to ``on_prompt``,
and leaves notices for the person in the session's queue.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .context import COMPACT_META
from .context.report import ContextReport, context_report
from .conversation import Conversation
from .events import AgentEvent, Notice
from .messages import Message
from .prompt import MemoryNote, MemoryStore, PromptAssembler
from .prompt.environment import IDLE_GAP
from .prompt.instructions import InstructionFile
from .prompt.memory import Scope
from .skills import active_skills_block

if TYPE_CHECKING:
    from .agent import Agent
    from .session import LoadedSession, SessionWriter

__all__ = ["Attach", "SessionContext"]

Attach = Callable[[str], Awaitable[tuple[list[str], list[Notice]]]]
"""What a prompt attaches (``@server:uri``): context blocks, and notices for the person."""


class SessionContext:
    """Context management for one session's ``agent``; ``notices`` is the
    session's queue of things to show before the next turn; ``attach`` reads
    what a prompt names for its turn (MCP resources)."""

    def __init__(
        self,
        *,
        agent: Callable[[], Agent],
        prompts: PromptAssembler,
        notices: list[Notice],
        on_prompt: Callable[[str], None],
        attach: Attach | None = None,
    ) -> None:
        self._agent = agent
        self._attach = attach
        self._on_prompt = on_prompt
        self.prompts = prompts
        self._notices = notices
        self._warned: set[str] = set()
        #: ``InstructionsLoaded`` payloads not yet fired (see ``take_loaded``)
        self._loaded: list[dict[str, Any]] = []
        self._loads = 0
        self.check_size = False

    # --- system prompt and memory ----------------------------------------------

    @property
    def memory(self) -> MemoryStore:
        """The project's and the user's memory notes."""
        return self.prompts.memory

    def refresh_system_prompt(self) -> None:
        """Re-read instruction files and memory into the system prompt. Called
        at session boundaries (start, ``/clear``, resume) and after a
        compaction only, so the prompt is byte-stable between compactions."""
        prompt, warnings = self.prompts.system_prompt()
        self._on_prompt(prompt)
        reason = "session_start" if self._loads == 0 else "compact"
        self._loads += 1
        self._loaded = [_loaded(f, reason) for f in self.prompts.files]
        for warning in warnings:
            if warning not in self._warned:
                self._warned.add(warning)
                self._notices.append(Notice(level="warning", message=warning))

    def take_loaded(self) -> list[dict[str, Any]]:
        """The instruction files read into the prompt since last asked, as
        ``InstructionsLoaded`` payloads (Claude Code's keys)."""
        loaded, self._loaded = self._loaded, []
        return loaded

    def remember(self, note: str, *, scope: Scope = "project") -> MemoryNote:
        """Save a memory note (``/memory add``; the front end routes ``# note``
        prompts here). It joins the system prompt at the next session boundary
        or compaction; meanwhile the next turn carries it as a reminder."""
        saved = self.memory.add(note, scope=scope)
        self._agent().state.add_reminder(
            f"The user asked you to remember this from now on ({scope} memory): {saved.text}"
        )
        return saved

    # --- turns -------------------------------------------------------------------

    async def turn_message(self, prompt: str, extra: list[str] | None = None) -> Message:
        """The user message starting a turn: environment, the active skills,
        reminders (queued ones, then ``extra``), then ``prompt``."""
        state = self._agent().state
        gap, state.idle_gap = state.idle_gap, None
        reminders = [*state.take_reminders(), *(extra or ())]
        if self._attach is not None:  # what the prompt names with @server:uri
            blocks, notes = await self._attach(prompt)
            reminders += blocks
            self._notices += notes
        # a skill run with /name is this turn's prompt already: not repeated as context
        active = {name: body for name, body in state.active_skills.items() if body != prompt}
        return await self.prompts.turn_message(
            prompt, reminders=reminders, idle_gap=gap, blocks=[active_skills_block(active)]
        )

    def note_resumed(self, loaded: LoadedSession) -> None:
        """After a resume: check the size before the next turn, note a long idle gap."""
        self.check_size = True
        if loaded.last_activity is not None:
            gap = datetime.now(UTC) - loaded.last_activity
            if gap > IDLE_GAP:
                self._agent().state.idle_gap = gap
        if loaded.compacted_from:
            self._notices.append(
                Notice(
                    level="info",
                    message=f"Resumed from the session's last compaction ({loaded.compacted_from} "
                    "earlier messages are summarised).",
                )
            )

    async def compact_if_too_large(self, conversation: Conversation) -> AsyncIterator[AgentEvent]:
        """Compact a resumed conversation that would not fit."""
        self.check_size = False
        context = self._agent().context
        if context is None or not len(conversation):
            return
        request = self._agent().build_request(conversation)
        if context.estimate(request) >= context.compact_threshold:
            async for event in self._agent().compact(conversation, trigger="resume"):
                yield event

    # --- compaction ----------------------------------------------------------------

    async def compact(
        self, conversation: Conversation, instructions: str | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Summarise older turns now (``/compact [instructions]``)."""
        if not len(conversation):
            yield Notice(level="info", message="Nothing to compact: the conversation is empty.")
            return
        async for event in self._agent().compact(
            conversation, trigger="manual", instructions=instructions
        ):
            yield event

    @staticmethod
    def persist_replace(writer: SessionWriter | None, messages: list[Message]) -> None:
        """``Conversation.on_replace``: a compaction is appended behind a
        ``compact`` marker (history kept); any other replace rewrites the file."""
        if writer is None:
            return
        record = messages[0].meta.get(COMPACT_META) if messages else None
        if isinstance(record, dict):
            writer.append_compaction(messages, record)
        else:
            writer.replace(messages)

    def report(self, conversation: Conversation) -> ContextReport:
        """How full the context is (``/context``)."""
        if self._agent().context is None:
            raise RuntimeError("this session has no context manager")
        return context_report(self._agent().context, self._agent().build_request(conversation))


def _loaded(file: InstructionFile, reason: str) -> dict[str, Any]:
    if file.origin == "user":
        kind = "User"
    else:
        kind = "Local" if ".local." in file.path.name.lower() else "Project"
    payload: dict[str, Any] = {
        "file_path": str(file.path),
        "memory_type": kind,
        "load_reason": "include" if file.imported_by else reason,
    }
    if file.imported_by:
        payload["parent_file_path"] = file.imported_by
    return payload
