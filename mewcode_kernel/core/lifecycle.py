"""Lifecycle events: the points where hooks (and anything else that wants
to watch or steer a session) plug in.

The core fires every event through one ``LifecycleDispatcher``; the default
(``NullDispatcher``) does nothing. A dispatcher answers with a
``HookOutcome``: it may block (``PreToolUse``, ``UserPromptSubmit``), add
context for the model's next request, change a tool's input, decide a
call's permission, ask the turn to stop, or leave messages for the person.

Where each event fires:

* ``SessionStart``: before the first message of a session (new, or after
  ``/clear``); ``SessionEnd``: when a session is left (``/clear``,
  ``/resume``, closing); ``SessionResume``: after a stored session is
  resumed, before its next message.
* ``UserPromptSubmit``: before a prompt is written to the conversation.
* ``PreUserMessage``: before every model request.
* ``PreToolUse``: before each call's permission check; ``PostToolUse``:
  after its result.
* ``PreCompact`` / ``PostCompact``: around a compaction.
* ``Stop``: when a turn ends on its own (the model stopped, the turn limit,
  the unknown-tool limit); not on an interrupt or an error.
* ``Notification``: an approval is shown, a model stream failed.
* ``PermissionRequest``: before a person (or the headless policy) is asked
  about a call; ``PermissionDenied``: after a call's permission is denied.
* ``PostToolUseFailure``: after a call that failed (``PostToolUse`` too).
* ``SubagentStart`` / ``SubagentStop``: a subagent begins / its turn ends
  on its own (a subagent's ``Stop``); ``StopFailure``: a turn ended on a
  model error.
* ``InstructionsLoaded``: an instruction file (``MEWCODE.md``,
  ``CLAUDE.md``, ...) was read into the system prompt.
* ``ConfigChange`` / ``FileChanged``: before a turn, a settings file or a
  file a ``FileChanged`` hook watches changed since the last turn.
* ``TaskCreated`` / ``TaskCompleted``: a background task is launched / ends.

Claude Code events with no counterpart here (``NEVER_FIRING``) are accepted
in hook files and reported as never firing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, get_args

from .events import AgentEvent, HookRan, Notice

__all__ = [
    "BLOCKING_EVENTS",
    "FEEDBACK_EVENTS",
    "HOOK_EVENTS",
    "NEVER_FIRING",
    "STOP_EVENTS",
    "HookEvent",
    "HookOutcome",
    "Lifecycle",
    "LifecycleDispatcher",
    "NullDispatcher",
]

HookEvent = Literal[
    "SessionStart",
    "SessionEnd",
    "SessionResume",
    "UserPromptSubmit",
    "Stop",
    "PreUserMessage",
    "PreToolUse",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "Notification",
    "PermissionRequest",
    "PermissionDenied",
    "PostToolUseFailure",
    "SubagentStart",
    "SubagentStop",
    "StopFailure",
    "InstructionsLoaded",
    "ConfigChange",
    "FileChanged",
    "TaskCreated",
    "TaskCompleted",
]
HOOK_EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)
#: a block (exit 2, ``decision: block``) stops what the event is about, so
#: these run in order and never ``async``
BLOCKING_EVENTS: frozenset[HookEvent] = frozenset(
    {"PreToolUse", "UserPromptSubmit", "PermissionRequest", "TaskCreated", "ConfigChange"}
)
#: a block keeps the (sub)agent's turn going, with the reason as its next message
STOP_EVENTS: frozenset[HookEvent] = frozenset({"Stop", "SubagentStop"})
#: a block (exit 2 with stderr) is told to the model after the call
FEEDBACK_EVENTS: frozenset[HookEvent] = frozenset({"PostToolUse", "PostToolUseFailure"})
#: Claude Code's events that cannot happen in MewCode (agent teams, git
#: worktrees it creates, MCP elicitation, its setup mode, a working
#: directory that moves): a hook on one loads and is listed as never firing
NEVER_FIRING: frozenset[str] = frozenset(
    {
        "CwdChanged",
        "Elicitation",
        "ElicitationResult",
        "Setup",
        "TeammateIdle",
        "WorktreeCreate",
        "WorktreeRemove",
    }
)


@dataclass(frozen=True, kw_only=True, slots=True)
class HookOutcome:
    """What the dispatcher's hooks decided for one event.

    * ``blocked`` with ``reason``, by the hook ``by``: on a blocking event the
      prompt or call does not go ahead; after ``PostToolUse`` the reason is
      told to the model;
    * ``context``: texts for the model's next request;
    * ``updated_input``: a ``PreToolUse`` hook's replacement arguments;
    * ``permission``: a ``PreToolUse`` hook's permission decision
      (``allow`` skips the check, ``deny`` refuses, ``ask`` asks the person);
    * ``stop`` with ``stop_reason``: end the turn after this event;
    * ``messages``: lines to show the person (not the model);
      ``warnings``: the same for what went wrong (a hook that failed);
    * ``runs``: one ``HookRan`` per hook that ran (rows in the cell).
    """

    blocked: bool = False
    reason: str = ""
    by: str = ""
    context: tuple[str, ...] = ()
    updated_input: dict[str, Any] | None = None
    permission: Literal["allow", "deny", "ask"] | None = None
    permission_reason: str = ""
    stop: bool = False
    stop_reason: str = ""
    messages: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    runs: tuple[HookRan, ...] = ()

    @property
    def notices(self) -> list[Notice]:
        """The ``warnings`` and ``messages``, as events for the person."""
        return [Notice(level="warning", message=m) for m in self.warnings] + [
            Notice(level="info", message=m) for m in self.messages
        ]

    @property
    def events(self) -> list[AgentEvent]:
        """What the cell shows: a row per hook run, then the notices."""
        return [*self.runs, *self.notices]


NOTHING = HookOutcome()


class LifecycleDispatcher(Protocol):
    """Receives every lifecycle event. ``payload`` is the event's JSON-ready
    fields (see ``Lifecycle.fire``); the answer is never ``None``."""

    async def dispatch(self, event: HookEvent, payload: Mapping[str, Any]) -> HookOutcome: ...

    def reset(self) -> None:
        """A new conversation began (``/clear``, ``/resume``): forget per-session state."""
        ...


class NullDispatcher:
    """The default: every event passes, nothing is added."""

    async def dispatch(self, event: HookEvent, payload: Mapping[str, Any]) -> HookOutcome:
        return NOTHING

    def reset(self) -> None:
        return None


@dataclass(kw_only=True)
class Lifecycle:
    """Fires events with the session's common fields filled in.

    ``common`` returns the fields every payload carries (``session_id``,
    ``cwd``, ``mode``, ``transcript_path``); each payload also names its
    event twice, as the reference design (``event``) and Claude Code
    (``hook_event_name``) do, and the mode as ``permission_mode``.
    """

    dispatcher: LifecycleDispatcher = field(default_factory=NullDispatcher)
    common: Callable[[], Mapping[str, Any]] = dict

    async def fire(self, event: HookEvent, /, **fields: Any) -> HookOutcome:
        """``fields`` may replace a common one: ``FileChanged``'s ``event``
        is what happened to the file, as in Claude Code (``hook_event_name``
        still names the event)."""
        base = dict(self.common())
        payload: dict[str, Any] = {
            **base,
            "event": event,
            "hook_event_name": event,
            "permission_mode": base.get("mode", ""),
            **fields,
        }
        return await self.dispatcher.dispatch(event, payload)

    def reset(self) -> None:
        self.dispatcher.reset()

    def scoped(self, **fields: Any) -> Lifecycle:
        """The lifecycle of a subagent: the same hooks (whatever dispatcher
        this one has when an event fires), every payload also carrying
        ``fields`` (``agent_id``, ``agent_type``, as Claude Code's do)."""
        common = self.common
        return Lifecycle(dispatcher=_Through(self), common=lambda: {**common(), **fields})


@dataclass(frozen=True, slots=True)
class _Through:
    """Dispatches through another lifecycle's dispatcher of the moment; a
    subagent's new conversation never resets the session's hooks."""

    lifecycle: Lifecycle

    async def dispatch(self, event: HookEvent, payload: Mapping[str, Any]) -> HookOutcome:
        return await self.lifecycle.dispatcher.dispatch(event, payload)

    def reset(self) -> None:
        return None
