"""The agent loop: stream a response, run the tools it calls, feed the results
back, until the model stops calling tools.

Cancelling the task that iterates ``Agent.run`` (Kernel › Interrupt) leaves a
conversation that can continue: partial text is kept as an interrupted
assistant message and unanswered tool calls get error results.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator

from ..context import ContextManager
from ..conversation import CANCELLED_RESULT, Conversation
from ..errors import ProviderError, ToolError
from ..events import (
    AgentEvent,
    ApprovalRequested,
    ApprovalResolved,
    AssistantMessage,
    CompactTrigger,
    ModelRequestStarted,
    Notice,
    PermissionDecided,
    ResponseDone,
    RetryScheduled,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnDone,
)
from ..messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from ..providers.base import ModelRequest, Provider
from ..tools.base import Tool, ToolContext, ToolRegistry
from ..usage import Usage
from .batching import partition
from .gate import ApprovalHandler, ApprovalRequest, DefaultGate, PermissionGate
from .runtime import SessionRuntime

__all__ = ["DEFAULT_MAX_TURNS", "Agent", "headless_policy"]

DEFAULT_MAX_TURNS = 25
UNKNOWN_TOOL_TURN_LIMIT = 3
HEADLESS_ENV = "MEWCODE_HEADLESS_APPROVAL"


def headless_policy(env: dict[str, str] | None = None) -> bool:
    """Whether "ask" is allowed when nobody can be asked (``MEWCODE_HEADLESS_APPROVAL``:
    ``deny``, the default, or ``allow``)."""
    value = (env if env is not None else os.environ).get(HEADLESS_ENV, "deny").strip().lower()
    if value not in {"allow", "deny", ""}:
        raise ValueError(f"{HEADLESS_ENV} must be 'allow' or 'deny', not {value!r}")
    return value == "allow"


class Agent:
    """Runs user turns against one provider with one set of tools."""

    def __init__(
        self,
        *,
        provider: Provider,
        tools: ToolRegistry,
        ctx: ToolContext,
        system_prompt: str = "",
        gate: PermissionGate | None = None,
        approval_handler: ApprovalHandler | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        max_tokens: int | None = None,
        runtime: SessionRuntime | None = None,
        headless_allow: bool | None = None,
        context: ContextManager | None = None,
    ) -> None:
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        self.provider = provider
        self.tools = tools
        self.ctx = ctx
        self.system_prompt = system_prompt
        self.gate: PermissionGate = gate or DefaultGate()
        self.approval_handler = approval_handler
        self.max_turns = max_turns
        self.max_tokens = max_tokens
        self.runtime = runtime or SessionRuntime()
        self.headless_allow = headless_policy() if headless_allow is None else headless_allow
        #: Offload, accounting and compaction (``None``: the history is sent as is).
        self.context = context

    def build_request(self, conversation: Conversation) -> ModelRequest:
        return ModelRequest(
            system=self.system_prompt,
            messages=conversation.messages,
            tools=[t.spec() for t in self.gate.offered_tools(self.tools)],
            max_tokens=self.max_tokens,
            model=self.provider.model,
        )

    async def run(
        self, conversation: Conversation, prompt: str | Message, *, max_turns: int | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Add ``prompt`` as a user message and run until the model stops calling tools."""
        limit = max_turns or self.max_turns
        conversation.append(
            Message(role="user", content=[TextBlock(text=prompt)])
            if isinstance(prompt, str)
            else prompt
        )
        self.runtime.user_turns += 1
        turn_usage = Usage()
        final_text = ""
        reason = "max_turns"
        unknown_streak = 0
        pending: list[ToolUseBlock] = []
        results: dict[str, ToolResultBlock] = {}
        partial: list[str] = []
        turn = 0
        try:
            while turn < limit:
                turn += 1
                request = self.build_request(conversation)
                if self.context is not None:
                    managed = False
                    async for event in self.context.manage(self.provider, conversation, request):
                        managed = True
                        yield event
                    if managed:
                        request = self.build_request(conversation)
                self.runtime.model_turns += 1
                yield ModelRequestStarted(turn=turn)
                done: ResponseDone | None = None
                partial.clear()
                try:
                    async for event in self.provider.stream(request):
                        if isinstance(event, ResponseDone):
                            done = event
                            continue
                        if isinstance(event, RetryScheduled):
                            partial.clear()
                        elif isinstance(event, TextDelta):
                            partial.append(event.text)
                        yield event
                except ProviderError as exc:
                    yield Notice(level="error", message=str(exc))
                    reason = "error"
                    yield self._done(reason, final_text, turn_usage, turn, error=str(exc))
                    return
                partial.clear()
                if done is None:
                    msg = f"{self.provider.name}: the response ended without being completed"
                    yield Notice(level="error", message=msg)
                    yield self._done("error", final_text, turn_usage, turn, error=msg)
                    return

                turn_usage = turn_usage + done.usage
                self.runtime.usage = self.runtime.usage + done.usage
                self.runtime.last_usage = done.usage
                message = done.message
                if message.content:
                    conversation.append(message)
                    if message.text:
                        final_text = message.text
                if self.context is not None:
                    self.context.observe(done.usage, len(conversation))
                yield AssistantMessage(
                    message=message, stop_reason=done.stop_reason, usage=done.usage
                )

                calls = message.tool_uses
                if not calls:
                    if done.stop_reason == "pause_turn":
                        continue
                    reason = done.stop_reason
                    if reason == "max_tokens":
                        yield Notice(
                            level="warning",
                            message="The answer was cut off at the output token limit.",
                        )
                    break

                unknown = [c for c in calls if c.name not in self.tools]
                unknown_streak = unknown_streak + 1 if len(unknown) == len(calls) else 0
                pending, results = list(calls), {}
                async for event in self._run_calls(calls, results):
                    yield event
                conversation.append(_results_message(calls, results))
                pending = []
                if unknown_streak >= UNKNOWN_TOOL_TURN_LIMIT:
                    reason = "unknown_tools"
                    yield Notice(
                        level="error",
                        message=f"Stopped: the model called only unknown tools {unknown_streak} times in a row.",
                    )
                    break
            else:
                yield Notice(
                    level="warning", message=f"Stopped after {limit} model turns (max_turns)."
                )
        except (asyncio.CancelledError, GeneratorExit):
            if pending:
                conversation.append(_results_message(pending, results))
            elif partial:
                conversation.append(
                    Message(
                        role="assistant",
                        content=[TextBlock(text="".join(partial))],
                        meta={"interrupted": True},
                    )
                )
            raise
        yield self._done(reason, final_text, turn_usage, turn)

    async def compact(
        self,
        conversation: Conversation,
        *,
        trigger: CompactTrigger = "manual",
        instructions: str | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Summarise older messages now (``/compact``, or a resumed session too
        large for the window). Needs a ``context`` manager."""
        if self.context is None:
            raise RuntimeError("this agent has no context manager")
        request = self.build_request(conversation)
        async for event in self.context.compact(
            self.provider, conversation, request, trigger=trigger, instructions=instructions
        ):
            yield event

    def _done(
        self, reason: str, text: str, usage: Usage, turns: int, error: str | None = None
    ) -> TurnDone:
        return TurnDone(
            reason=reason,
            text=text,
            usage=usage,
            session_usage=self.runtime.usage,
            model_turns=turns,
            error=error,
        )

    async def _run_calls(
        self, calls: list[ToolUseBlock], results: dict[str, ToolResultBlock]
    ) -> AsyncIterator[AgentEvent]:
        """Run ``calls`` batch by batch, filling ``results`` (by call id) as they finish."""

        def read_only(call: ToolUseBlock) -> bool:
            t = self.tools.get(call.name)
            return t is not None and t.read_only

        for batch in partition(calls, read_only):
            runnable: list[tuple[ToolUseBlock, Tool]] = []
            for call in batch:
                t = self.tools.get(call.name)
                refusal: str | None = None
                if t is None:
                    refusal = f"Unknown tool {call.name!r}. Available tools: {', '.join(self.tools.names)}."
                elif call.input_error:
                    refusal = f"Your arguments for {call.name} could not be parsed ({call.input_error}). Call it again with valid JSON arguments."
                else:
                    async for event in self._check(call, t):
                        if isinstance(event, str):
                            refusal = event
                        else:
                            yield event
                if refusal is not None:
                    results[call.id] = ToolResultBlock(
                        tool_use_id=call.id, content=refusal, is_error=True
                    )
                    yield ToolFinished(call=call, result=results[call.id], duration=0.0)
                elif t is not None:
                    runnable.append((call, t))
            async for event in self._execute(runnable, results):
                yield event

    async def _check(self, call: ToolUseBlock, t: Tool) -> AsyncIterator[AgentEvent | str]:
        """Yield the decision events; a ``str`` yielded is the refusal for the model."""
        decision = await self.gate.check(call, t, self.ctx)
        yield PermissionDecided(
            call=call,
            outcome=decision.outcome,
            reason=decision.reason,
            decided_by=decision.decided_by,
        )
        if decision.outcome == "allow":
            return
        if decision.outcome == "deny":
            yield f"Permission denied: {decision.reason}"
            return
        if self.approval_handler is None:
            allowed = self.headless_allow and not decision.personal
            yield ApprovalResolved(call=call, allowed=allowed, by="headless")
            if not allowed:
                yield (
                    f"Permission denied: {decision.reason}. Nobody can approve it in this run "
                    f"(headless; {HEADLESS_ENV}={'allow' if self.headless_allow else 'deny'})."
                )
            return
        yield ApprovalRequested(call=call, reason=decision.reason)
        answer = await self.approval_handler(
            ApprovalRequest(call=call, tool=t, reason=decision.reason)
        )
        added: list[str] = []
        if answer.allow and answer.always:
            added = self.gate.remember(call, t, save=answer.save)
        yield ApprovalResolved(
            call=call, allowed=answer.allow, by="user", rules_added=tuple(added), note=answer.note
        )
        if not answer.allow:
            note = f" The user said: {answer.note}" if answer.note else ""
            yield f"The user denied this {call.name} call.{note}"

    async def _execute(
        self, runnable: list[tuple[ToolUseBlock, Tool]], results: dict[str, ToolResultBlock]
    ) -> AsyncIterator[AgentEvent]:
        if not runnable:
            return
        for call, _ in runnable:
            yield ToolStarted(call=call)
        tasks = [asyncio.ensure_future(self._call_one(call, t)) for call, t in runnable]
        try:
            for next_done in asyncio.as_completed(tasks):
                call, result, duration = await next_done
                if self.context is not None:
                    result = self.context.shape_result(
                        call, result, root=self.ctx.root, session_dir=self.ctx.session_dir
                    )
                results[call.id] = result
                yield ToolFinished(call=call, result=result, duration=duration)
        finally:
            outstanding = [t for t in tasks if not t.done()]
            for task in outstanding:
                task.cancel()
            if outstanding:
                await asyncio.gather(*outstanding, return_exceptions=True)

    async def _call_one(
        self, call: ToolUseBlock, t: Tool
    ) -> tuple[ToolUseBlock, ToolResultBlock, float]:
        start = time.perf_counter()
        try:
            output = await t.call(self.ctx, call.input)
            result = ToolResultBlock(tool_use_id=call.id, content=output or "(no output)")
        except ToolError as exc:
            result = ToolResultBlock(tool_use_id=call.id, content=str(exc), is_error=True)
        except Exception as exc:  # a tool bug must not crash the turn
            result = ToolResultBlock(
                tool_use_id=call.id,
                content=f"{call.name} failed unexpectedly: {type(exc).__name__}: {exc}",
                is_error=True,
            )
        return call, result, time.perf_counter() - start


def _results_message(calls: list[ToolUseBlock], results: dict[str, ToolResultBlock]) -> Message:
    """One user message answering every call, in call order."""
    blocks = [
        results.get(c.id)
        or ToolResultBlock(tool_use_id=c.id, content=CANCELLED_RESULT, is_error=True)
        for c in calls
    ]
    return Message(role="user", content=blocks)
