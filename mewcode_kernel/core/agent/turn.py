"""One user turn of an ``Agent``: ``Turn``.

Stream a response, run the tools it asks for, repeat until the model stops
calling tools; every model request is preceded by a user-side message (the
prompt, or the results of the last round of calls), and ``PreUserMessage``
fires just before it is written. Nothing inside a turn can leave the
conversation broken: a cancelled turn keeps partial text as an interrupted
assistant message and answers unanswered tool calls with error results.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Protocol

from ..context.tokens import (
    CHARS_PER_TOKEN,
    estimate_messages,
    estimate_request,
    estimate_text,
    estimate_tools,
)
from ..conversation import CANCELLED_RESULT, Conversation
from ..errors import ProviderError
from ..events import (
    AgentEvent,
    AssistantMessage,
    ModelRequestStarted,
    Notice,
    ResponseDone,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    TurnDone,
    UsageReported,
)
from ..messages import Message, TextBlock, ToolResultBlock, scrub_message
from ..prompt.turn import render_reminder
from ..providers.base import ModelRequest, Provider, ToolSpec
from ..tools.context import CancelScope
from ..usage import Usage
from .state import ConversationState
from .tool_calls import Round, RoundHost, run_round

__all__ = ["Turn", "TurnHost"]

_NATURAL_ENDS = frozenset({"end_turn", "stop_sequence", "max_tokens", "max_turns", "unknown_tools"})
#: ends a Stop hook may turn into more work (not a limit being reached)
_CONTINUABLE = frozenset({"end_turn", "stop_sequence"})
#: times in a row a Stop hook may keep one turn going: a hook that always
#: blocks cannot make a turn loop for ever
STOP_BLOCK_LIMIT = 3


class TurnHost(RoundHost, Protocol):
    """What a turn uses of the agent running it."""

    @property
    def provider(self) -> Provider: ...
    @property
    def state(self) -> ConversationState: ...
    @property
    def system_prompt(self) -> str: ...
    @property
    def max_tokens(self) -> int | None: ...
    @property
    def unknown_tool_limit(self) -> int: ...
    @property
    def depth(self) -> int: ...

    def build_request(self, conversation: Conversation) -> ModelRequest: ...

    def request_tools(self) -> list[ToolSpec]: ...

    def relay_compaction(
        self, events: AsyncIterator[AgentEvent], instructions: str = ""
    ) -> AsyncIterator[AgentEvent]: ...

    def done(
        self,
        reason: str,
        text: str,
        usage: Usage,
        turns: int,
        error: str | None = None,
        status: int | None = None,
    ) -> TurnDone: ...


class Turn:
    """One user turn: its counters, what is pending, and how it ends."""

    def __init__(self, agent: TurnHost, conversation: Conversation, limit: int) -> None:
        self.agent = agent
        self.conversation = conversation
        self.limit = limit
        self.usage = Usage()
        self.final_text = ""
        self.turn = 0
        self.pending: Round | None = None
        self.partial: list[str] = []
        self.scope = CancelScope()
        # the response in flight: its request, what the provider has reported
        # so far, and how much it streamed (to estimate an interrupted one)
        self.in_flight: ModelRequest | None = None
        self.reported = Usage()
        self.streamed_chars = 0
        #: why the last rounds stopped (``None``: they ended the turn themselves)
        self.end: str | None = None

    async def run(self, prompt: str | Message) -> AsyncIterator[AgentEvent]:
        agent = self.agent
        message = (
            Message(role="user", content=[TextBlock(text=prompt)])
            if isinstance(prompt, str)
            else prompt
        )
        message, lone = scrub_message(message)
        if lone:
            yield Notice(
                level="warning",
                message=f"The prompt held {lone} invalid character(s) (lone UTF-16 surrogates); "
                "each was replaced by U+FFFD.",
            )
        refusal = self._too_large(message)
        if refusal is not None:
            yield Notice(level="error", message=refusal)
            yield agent.done("refused", "", Usage(), 0, error=refusal)
            return
        agent.state.user_turns += 1
        agent.state.cancelled_turn = None
        try:
            async for event in self._write_user_side(message):
                yield event
            async for event in self._loop():
                yield event
        except (asyncio.CancelledError, GeneratorExit, AssertionError):
            # cancelled, or a broken invariant (a strict test double): repair and re-raise
            self.scope.cancel()
            self._close_pending()
            self._count_unfinished()
            agent.state.cancelled_turn = agent.done(
                "cancelled", self.final_text, self.usage, self.turn
            )
            raise
        except Exception as exc:  # a bug in a gate, hook or the plumbing: end this turn only
            self.scope.cancel()
            self._close_pending()
            message = f"the turn stopped on an internal error: {type(exc).__name__}: {exc}"
            yield Notice(level="error", message=message)
            yield agent.done("error", self.final_text, self.usage, self.turn, error=message)

    def _too_large(self, message: Message) -> str | None:
        """Why ``message`` cannot be sent at all (larger than the usable window:
        no compaction can make room for it), or ``None``."""
        agent = self.agent
        if agent.context is None:
            return None
        window = agent.context.window
        fixed = estimate_text(agent.system_prompt) + estimate_tools(agent.request_tools())
        usable = window - fixed - (agent.max_tokens or min(window // 8, 16_384))
        size = estimate_messages([message])
        if size <= usable:
            return None
        return (
            f"The prompt was not sent: it is about {size:,} tokens, and the model's context "
            f"window leaves about {max(usable, 0):,} for it (window {window:,}). Put the text "
            "in a file and ask the agent to read the parts it needs."
        )

    async def _loop(self) -> AsyncIterator[AgentEvent]:
        """Rounds until the model stops; then the Stop hooks, which may keep
        the turn going with their reason (``STOP_BLOCK_LIMIT`` times)."""
        agent = self.agent
        kept = 0
        while True:
            self.end = None
            async for event in self._rounds():
                yield event
            reason = self.end
            if reason is None:  # the rounds ended the turn themselves
                return
            verdict: list[str] = []
            async for event in self._stop(reason, kept, verdict):
                yield event
            if verdict and reason in _CONTINUABLE and self.turn < self.limit:
                if kept < STOP_BLOCK_LIMIT:
                    kept += 1
                    yield Notice(
                        level="info", message=f"A Stop hook kept the turn going: {verdict[0]}"
                    )
                    message = Message(role="user", content=[TextBlock(text=verdict[0])])
                    async for event in self._write_user_side(message):
                        yield event
                    continue
                yield Notice(
                    level="warning",
                    message=f"A Stop hook blocked the end of this turn {kept + 1} times in a "
                    "row; the turn ends anyway.",
                )
            yield agent.done(reason, self.final_text, self.usage, self.turn)
            return

    async def _rounds(self) -> AsyncIterator[AgentEvent]:
        """Model requests and tool rounds; ``self.end``: why they stopped
        (``None``: the turn already ended, with its ``TurnDone``)."""
        agent = self.agent
        reason = "max_turns"
        unknown_streak = 0
        while self.turn < self.limit:
            if self.turn:  # the last round may have made a tool usable (its first task)
                agent.tools.admit_joining()
            self.turn += 1
            request = agent.build_request(self.conversation)
            if agent.context is not None:
                managed = False
                events = agent.context.manage(agent.provider, self.conversation, request)
                async for event in agent.relay_compaction(events):
                    managed = True
                    yield event
                if managed:
                    request = agent.build_request(self.conversation)
            agent.state.model_turns += 1
            yield ModelRequestStarted(turn=self.turn, model=request.model or "")
            done: ResponseDone | None = None
            self.partial.clear()
            self._begin_response(request)
            try:
                async for event in agent.provider.stream(request):
                    if isinstance(event, ResponseDone):
                        done = event
                        continue
                    if isinstance(event, UsageReported):
                        self.reported = event.usage
                        continue
                    if isinstance(event, RetryScheduled):
                        self.partial.clear()
                        self._count(self.reported)  # the failed attempt was billed so far
                        self._begin_response(request)
                    elif isinstance(event, TextDelta):
                        self.partial.append(event.text)
                        self.streamed_chars += len(event.text)
                    elif isinstance(event, ThinkingDelta):
                        self.streamed_chars += len(event.text)
                    yield event
            except ProviderError as exc:
                self.partial.clear()
                self._count(self.reported)
                self.in_flight = None
                async for event in self._stream_failed(str(exc), exc.status):
                    yield event
                return
            self.partial.clear()
            self.in_flight = None
            if done is None:
                self._count(self.reported)
                async for event in self._stream_failed(
                    f"{agent.provider.name}: the response ended without being completed"
                ):
                    yield event
                return

            self._count(done.usage)
            agent.state.last_usage = done.usage
            message, _ = scrub_message(done.message)
            if message.content:
                self.conversation.append(message)
                if message.text:
                    self.final_text = message.text
            if agent.context is not None:
                agent.context.observe(done.usage, len(self.conversation))
            yield AssistantMessage(
                message=message, stop_reason=done.stop_reason, usage=done.usage, model=done.model
            )

            calls = message.tool_uses
            if not calls:
                if done.stop_reason == "pause_turn":
                    async for event in self._continue_paused():
                        yield event
                    continue
                reason = done.stop_reason
                if reason == "max_tokens":
                    yield Notice(
                        level="warning", message="The answer was cut off at the output token limit."
                    )
                break

            unknown = [c for c in calls if c.name not in agent.tools]
            unknown_streak = unknown_streak + 1 if len(unknown) == len(calls) else 0
            self.pending = Round(calls=list(calls))
            async for event in run_round(agent, self.pending, self.scope):
                yield event
            rnd, self.pending = self.pending, None
            self._count(rnd.usage)
            async for event in self._write_user_side(_results_message(rnd), rnd.context):
                yield event
            if rnd.stop is not None:
                yield Notice(level="warning", message=f"Stopped by a hook: {rnd.stop}")
                yield agent.done("hook_stop", self.final_text, self.usage, self.turn)
                return
            if unknown_streak >= agent.unknown_tool_limit:
                reason = "unknown_tools"
                yield Notice(
                    level="error",
                    message=f"Stopped: the model called only unknown tools {unknown_streak} times in a row.",
                )
                break
        else:
            yield Notice(
                level="warning", message=f"Stopped after {self.limit} model turns (max_turns)."
            )
        self.end = reason

    async def _write_user_side(
        self, message: Message, context: list[str] | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Fire ``PreUserMessage`` and append ``message`` with the context
        queued for the model (hooks, compaction) as reminder blocks."""
        agent = self.agent
        outcome = await agent.lifecycle.fire("PreUserMessage", iter=self.turn + 1)
        for shown_event in outcome.events:
            yield shown_event
        queued = [*(context or ()), *agent.state.take_reminders(), *outcome.context]
        if queued:
            extra = [TextBlock(text=render_reminder(c)) for c in queued if c.strip()]
            message = message.model_copy(update={"content": [*message.content, *extra]})
        self.conversation.append(message)

    async def _continue_paused(self) -> AsyncIterator[AgentEvent]:
        """A paused turn goes on; context queued meanwhile rides on a user message."""
        agent = self.agent
        outcome = await agent.lifecycle.fire("PreUserMessage", iter=self.turn + 1)
        queued = [*agent.state.take_reminders(), *outcome.context]
        if queued:
            self.conversation.append(
                Message(role="user", content=[TextBlock(text=render_reminder(c)) for c in queued])
            )
        for shown_event in outcome.events:
            yield shown_event

    async def _stream_failed(
        self, message: str, status: int | None = None
    ) -> AsyncIterator[AgentEvent]:
        agent = self.agent
        yield Notice(level="error", message=message)
        outcome = await agent.lifecycle.fire(
            "Notification",
            kind="stream_error",
            notification_type="stream_error",
            title="The model's answer failed",
            detail=message,
            message=message,
        )
        for shown_event in outcome.events:
            yield shown_event
        failed = await agent.lifecycle.fire(  # Claude Code's: what ended the turn
            "StopFailure",
            error=_error_kind(status),
            error_details=message,
            last_assistant_message=self.final_text,
        )
        for shown_event in failed.events:
            yield shown_event
        yield agent.done(
            "error", self.final_text, self.usage, self.turn, error=message, status=status
        )

    async def _stop(self, reason: str, kept: int, verdict: list[str]) -> AsyncIterator[AgentEvent]:
        """``Stop`` (``SubagentStop`` in a subagent, whose lifecycle adds its
        id and type); a block's reason goes into ``verdict``."""
        if reason not in _NATURAL_ENDS:
            return
        agent = self.agent
        outcome = await agent.lifecycle.fire(
            "SubagentStop" if agent.depth > 0 else "Stop",
            iter=self.turn,
            reason=reason,
            stop_reason=reason,
            stop_hook_active=kept > 0,
            last_assistant_message=self.final_text,
        )
        for shown_event in outcome.events:
            yield shown_event
        if outcome.blocked:
            verdict.append(f"Stop hook feedback ({outcome.by}): {outcome.reason}")

    def _begin_response(self, request: ModelRequest) -> None:
        self.in_flight = request
        self.reported = Usage()
        self.streamed_chars = 0

    def _count(self, usage: Usage) -> None:
        self.usage = self.usage + usage
        agent = self.agent
        agent.state.add_usage(usage, model=agent.model or agent.provider.model)

    def _count_unfinished(self) -> None:
        """Count the response cut off mid-stream: what the provider reported
        (Anthropic sends the input counts first), else an estimate from the
        request and from what streamed."""
        request, self.in_flight = self.in_flight, None
        if request is None:
            return
        usage = self.reported
        if usage.total_input_tokens == 0:
            usage = usage + Usage(input_tokens=estimate_request(request))
        streamed = -(-self.streamed_chars // CHARS_PER_TOKEN)
        if streamed > usage.output_tokens:
            usage = usage + Usage(output_tokens=streamed - usage.output_tokens)
        self._count(usage)

    def _close_pending(self) -> None:
        """Leave the conversation valid: answer unanswered calls, keep partial text."""
        if self.pending is not None:
            self.conversation.append(_results_message(self.pending))
            self.pending = None
        elif self.partial:
            self.conversation.append(
                Message(
                    role="assistant",
                    content=[TextBlock(text="".join(self.partial))],
                    meta={"interrupted": True},
                )
            )
            self.partial.clear()


def _results_message(rnd: Round) -> Message:
    """One user message answering every call of the round, in call order."""
    blocks = [
        rnd.results.get(c.id)
        or ToolResultBlock(tool_use_id=c.id, content=CANCELLED_RESULT, is_error=True)
        for c in rnd.calls
    ]
    return Message(role="user", content=blocks)


def _error_kind(status: int | None) -> str:
    """Claude Code's name for what ended a turn (``StopFailure``'s ``error``)."""
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "authentication_failed"
    if status == 402:
        return "billing_error"
    if status is not None and 400 <= status < 500:
        return "invalid_request"
    if status is not None and status >= 500:
        return "server_error"
    return "unknown"
