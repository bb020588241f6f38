"""The event stream: what providers yield and what the agent loop yields.

Two unions, kept apart: ``ModelEvent`` (one model response being streamed)
and ``AgentEvent`` (a whole turn: model events plus tool calls, decisions and
the end of the turn). Every event is a small frozen dataclass with a ``kind``
discriminator, so front ends dispatch with ``getattr(self, "on_" + ev.kind)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .messages import Message, ToolResultBlock, ToolUseBlock
from .usage import Usage

__all__ = [
    "AgentEvent",
    "ApprovalRequested",
    "ApprovalResolved",
    "AssistantMessage",
    "CompactTrigger",
    "HookRan",
    "ModelEvent",
    "ModelRequestStarted",
    "Notice",
    "PermissionDecided",
    "PostCompact",
    "PreCompact",
    "ResponseDone",
    "RetryScheduled",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallStarted",
    "ToolFinished",
    "ToolProgress",
    "ToolStarted",
    "TurnDone",
    "innermost",
]

_EV = {"frozen": True, "kw_only": True, "slots": True}


# --- model stream -----------------------------------------------------------


@dataclass(**_EV)
class TextDelta:
    kind: Literal["text_delta"] = field(default="text_delta", init=False)
    text: str


@dataclass(**_EV)
class ThinkingDelta:
    kind: Literal["thinking_delta"] = field(default="thinking_delta", init=False)
    text: str


@dataclass(**_EV)
class ToolCallStarted:
    """The model began a tool call; its arguments are still streaming."""

    kind: Literal["tool_call_started"] = field(default="tool_call_started", init=False)
    id: str
    name: str


@dataclass(**_EV)
class RetryScheduled:
    """A transient provider failure; the request is retried after ``delay`` seconds."""

    kind: Literal["retry_scheduled"] = field(default="retry_scheduled", init=False)
    attempt: int
    max_attempts: int
    delay: float
    reason: str
    status: int | None = None  # the provider's HTTP status, when the failure had one


@dataclass(**_EV)
class UsageReported:
    """What the provider has billed for the response in flight so far
    (cumulative), sent before it completes so that an interrupted or
    retried response is still counted."""

    kind: Literal["usage_reported"] = field(default="usage_reported", init=False)
    usage: Usage


@dataclass(**_EV)
class ResponseDone:
    """The whole response, assembled. Always the last event of a model stream."""

    kind: Literal["response_done"] = field(default="response_done", init=False)
    message: Message
    stop_reason: str
    usage: Usage
    model: str = ""


ModelEvent = (
    TextDelta | ThinkingDelta | ToolCallStarted | RetryScheduled | UsageReported | ResponseDone
)


# --- agent loop -------------------------------------------------------------


@dataclass(**_EV)
class ModelRequestStarted:
    """A model request is about to be sent: the ``turn``-th of this user
    turn, asking for ``model`` (``""``: the provider's own)."""

    kind: Literal["model_request_started"] = field(default="model_request_started", init=False)
    turn: int
    model: str = ""


@dataclass(**_EV)
class AssistantMessage:
    """The model's message for one round, as appended to the conversation;
    ``model``: the model that answered, as the provider named it."""

    kind: Literal["assistant_message"] = field(default="assistant_message", init=False)
    message: Message
    stop_reason: str
    usage: Usage
    model: str = ""


@dataclass(**_EV)
class PermissionDecided:
    kind: Literal["permission_decided"] = field(default="permission_decided", init=False)
    call: ToolUseBlock
    outcome: Literal["allow", "deny", "ask"]
    reason: str
    decided_by: str


@dataclass(**_EV)
class ApprovalRequested:
    kind: Literal["approval_requested"] = field(default="approval_requested", init=False)
    call: ToolUseBlock
    reason: str


@dataclass(**_EV)
class ApprovalResolved:
    """How an "ask" was answered: by the person, or by the headless policy."""

    kind: Literal["approval_resolved"] = field(default="approval_resolved", init=False)
    call: ToolUseBlock
    allowed: bool
    by: Literal["user", "headless"]
    rules_added: tuple[str, ...] = ()
    note: str | None = None


@dataclass(**_EV)
class ToolStarted:
    kind: Literal["tool_started"] = field(default="tool_started", init=False)
    call: ToolUseBlock


@dataclass(**_EV)
class ToolProgress:
    """A running tool says how it is doing: ``output`` is more of its output
    (appended to what came before, e.g. a command's stdout as it is printed),
    ``status`` a short line replacing the previous one, ``nested`` an event of
    an agent run inside the tool (a subagent)."""

    kind: Literal["tool_progress"] = field(default="tool_progress", init=False)
    call: ToolUseBlock
    output: str = ""
    status: str = ""
    nested: AgentEvent | None = None


@dataclass(**_EV)
class ToolFinished:
    kind: Literal["tool_finished"] = field(default="tool_finished", init=False)
    call: ToolUseBlock
    result: ToolResultBlock
    duration: float


@dataclass(**_EV)
class Notice:
    """Something the user should see that is not part of the conversation."""

    kind: Literal["notice"] = field(default="notice", init=False)
    level: Literal["info", "warning", "error"]
    message: str


@dataclass(**_EV)
class HookRan:
    """One hook ran for a lifecycle event: ``outcome`` in a word (``passed``,
    ``blocked``, ``failed``, ``added context``, ``started`` for an async
    rule, ...), ``detail`` (the block's or failure's reason), ``output``
    (what it printed, secrets taken out) and how long it took."""

    kind: Literal["hook_ran"] = field(default="hook_ran", init=False)
    event: str
    name: str
    outcome: str
    seconds: float
    detail: str = ""
    output: str = ""


CompactTrigger = Literal["auto", "manual", "resume"]


@dataclass(**_EV)
class PreCompact:
    """Older messages are about to be summarised (hooks: PreCompact).
    ``tokens`` is the estimated size of the next request."""

    kind: Literal["pre_compact"] = field(default="pre_compact", init=False)
    trigger: CompactTrigger
    tokens: int
    messages: int


@dataclass(**_EV)
class PostCompact:
    """A compaction ended (hooks: PostCompact). When ``ok`` the conversation is
    now the summary plus ``kept_messages`` recent messages; otherwise ``error``
    says why and the conversation is unchanged. ``usage`` is what the summary
    request cost (already counted in the session's usage)."""

    kind: Literal["post_compact"] = field(default="post_compact", init=False)
    trigger: CompactTrigger
    ok: bool
    tokens_before: int
    tokens_after: int
    summarized_messages: int = 0
    kept_messages: int = 0
    summary: str = ""
    error: str | None = None
    usage: Usage = field(default_factory=Usage)


@dataclass(**_EV)
class TurnDone:
    """The end of a user turn. ``reason``: end_turn, max_turns, cancelled, error, refusal, ...;
    ``status``: the provider's HTTP status when a failed model request ended it."""

    kind: Literal["turn_done"] = field(default="turn_done", init=False)
    reason: str
    text: str
    usage: Usage
    session_usage: Usage
    model_turns: int
    error: str | None = None
    status: int | None = None
    #: the model the turn's requests asked for (a role's own, ``--agent``)
    model: str = ""


AgentEvent = (
    TextDelta
    | ThinkingDelta
    | ToolCallStarted
    | RetryScheduled
    | ModelRequestStarted
    | AssistantMessage
    | PermissionDecided
    | ApprovalRequested
    | ApprovalResolved
    | ToolStarted
    | ToolProgress
    | ToolFinished
    | Notice
    | HookRan
    | PreCompact
    | PostCompact
    | TurnDone
)


def innermost(event: AgentEvent) -> AgentEvent:
    """The event a chain of nested progress carries (a subagent's subagent's
    reply arrives wrapped once per level): what its usage is counted from,
    at every level of the chain."""
    while isinstance(event, ToolProgress) and event.nested is not None:
        event = event.nested
    return event
