"""Running one round of tool calls: hooks, permission, approval, execution.

For each call, in order: ``PreToolUse`` (a hook may block it, change its
input or decide its permission), the permission gate, an approval when the
answer is "ask" (the front end's handler, or the headless policy), then the
tools themselves, batch by batch (consecutive read-only calls run
concurrently). While tools run, their progress events reach the stream as
they happen; each result is shaped for the conversation (L1 offload) and
followed by ``PostToolUse``. Hook context is collected for the next message.

Secret values (``agent.redactor``) are taken out of every result and every
progress chunk here, in one place for all tools, before anything is stored,
shown or sent; so are lone surrogates, which no provider accepts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..context import ContextManager
from ..errors import ToolError
from ..events import (
    AgentEvent,
    AssistantMessage,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    innermost,
)
from ..lifecycle import Lifecycle
from ..messages import TextBlock, ToolResultBlock, ToolUseBlock, scrub_surrogates
from ..permission.seam import PermissionGate
from ..permission.shell.analysis import analyze
from ..permission.shell.readonly import writes_possibly
from ..redaction import Redactor, StreamRedactor
from ..tools.base import Tool, ToolOutput
from ..tools.context import CancelScope, RunContext
from ..tools.registry import ToolRegistry
from ..usage import Usage
from .approval import HEADLESS_ENV, ApprovalFlow, Settled
from .batching import partition

__all__ = ["HEADLESS_ENV", "Round", "RoundHost"]


class RoundHost(Protocol):
    """What a round of calls uses of the agent running it."""

    @property
    def tools(self) -> ToolRegistry: ...
    @property
    def gate(self) -> PermissionGate: ...
    @property
    def lifecycle(self) -> Lifecycle: ...
    @property
    def approvals(self) -> ApprovalFlow: ...
    @property
    def redactor(self) -> Redactor: ...
    @property
    def context(self) -> ContextManager | None: ...
    @property
    def ctx(self) -> RunContext: ...

    def context_for(self, call: ToolUseBlock) -> RunContext: ...


@dataclass(kw_only=True)
class Round:
    """One round of calls. ``results`` fills in (by call id) as they finish;
    ``context`` collects what hooks want the model to know next; ``stop``
    is set when a hook asked the turn to end; ``usage`` sums the model
    responses of agents run inside the calls."""

    calls: list[ToolUseBlock]
    results: dict[str, ToolResultBlock] = field(default_factory=dict)
    context: list[str] = field(default_factory=list)
    stop: str | None = None
    usage: Usage = field(default_factory=Usage)  # what nested agents (subagents) spent


@dataclass(frozen=True, kw_only=True, slots=True)
class _Finished:
    call: ToolUseBlock
    result: ToolResultBlock
    duration: float


async def run_round(agent: RoundHost, rnd: Round, scope: CancelScope) -> AsyncIterator[AgentEvent]:
    """Check and run ``rnd.calls``, yielding every event."""
    for batch in partition(rnd.calls, lambda c: _read_only(agent, c)):
        runnable: list[tuple[ToolUseBlock, Tool, dict[str, Any]]] = []
        for call in batch:
            t = agent.tools.get(call.name)
            refusal: str | None = None
            args = call.input
            if t is None:
                refusal = (
                    f"Unknown tool {call.name!r}. Available tools: {', '.join(agent.tools.names)}."
                )
            elif call.input_error:
                refusal = f"Your arguments for {call.name} could not be parsed ({call.input_error}). Call it again with valid JSON arguments."
            else:
                outcome: list[str | dict[str, Any]] = []
                async for event in _check(agent, rnd, call, t, outcome):
                    yield event
                if outcome and isinstance(outcome[0], str):
                    refusal = outcome[0]
                elif outcome and isinstance(outcome[0], dict):
                    args = outcome[0]
            if refusal is not None:
                rnd.results[call.id] = clean_result(
                    ToolResultBlock(tool_use_id=call.id, content=refusal, is_error=True),
                    agent.redactor,
                )
                yield ToolFinished(call=call, result=rnd.results[call.id], duration=0.0)
            elif t is not None:
                runnable.append((call, t, args))
        async for event in _execute(agent, rnd, runnable, scope):
            yield event
        if rnd.stop is not None:
            return


def _read_only(agent: RoundHost, call: ToolUseBlock) -> bool:
    t = agent.tools.get(call.name)
    return t is not None and t.read_only


async def _check(
    agent: RoundHost,
    rnd: Round,
    call: ToolUseBlock,
    t: Tool,
    outcome: list[str | dict[str, Any]],
) -> AsyncIterator[AgentEvent]:
    """The ``PreToolUse`` hook, then the approval flow's one decision for the
    call. Appends to ``outcome`` the refusal for the model (a ``str``) or the
    arguments to run it with."""
    hook = await agent.lifecycle.fire(
        "PreToolUse", tool_name=call.name, tool_input=dict(call.input), tool_use_id=call.id
    )
    for shown_event in hook.events:
        yield shown_event
    rnd.context.extend(hook.context)
    if hook.stop:
        rnd.stop = hook.stop_reason or "a hook ended the turn"
    if hook.blocked:
        outcome.append(f"[hook {hook.by}] {hook.reason or 'blocked by hook'}")
        return
    args = dict(hook.updated_input) if hook.updated_input is not None else dict(call.input)
    try:  # what the call leaves implicit is checked (and shown) too
        judged = t.checked_input(args)
    except ToolError as exc:
        outcome.append(str(exc))
        return
    checked = call if judged == call.input else call.model_copy(update={"input": judged})
    ctx = agent.context_for(checked)
    decision = await agent.gate.check(checked, t, ctx)
    settled = Settled(allowed=False, refusal="Permission denied")
    async for event in agent.approvals.settle(
        checked, t, decision, hook, gate=agent.gate, lifecycle=agent.lifecycle, cwd=ctx.root
    ):
        if isinstance(event, Settled):
            settled = event
        else:
            yield event
    if not settled.allowed and not hook.blocked:
        denied = await agent.lifecycle.fire(
            "PermissionDenied",
            tool_name=call.name,
            tool_input=args,
            tool_use_id=call.id,
            reason=settled.refusal,
        )
        for shown_event in denied.events:
            yield shown_event
        rnd.context.extend(denied.context)
    outcome.append(args if settled.allowed else settled.refusal)


async def _execute(
    agent: RoundHost,
    rnd: Round,
    runnable: list[tuple[ToolUseBlock, Tool, dict[str, Any]]],
    scope: CancelScope,
) -> AsyncIterator[AgentEvent]:
    """Run ``runnable`` concurrently; progress events and results reach the
    stream in the order they happen."""
    if not runnable:
        return
    queue: asyncio.Queue[AgentEvent | _Finished] = asyncio.Queue()
    for call, _, _ in runnable:
        yield ToolStarted(call=call)

    async def run_one(call: ToolUseBlock, t: Tool, args: dict[str, Any]) -> None:
        queue.put_nowait(await _call_one(agent, call, t, args, queue.put_nowait, scope))

    tasks = [asyncio.ensure_future(run_one(call, t, args)) for call, t, args in runnable]
    by_id = {call.id: (t, args) for call, t, args in runnable}
    streams = {call.id: agent.redactor.stream() for call, _, _ in runnable}
    remaining = len(tasks)
    try:
        while remaining:
            item = await queue.get()
            if not isinstance(item, _Finished):
                nested = innermost(item) if isinstance(item, ToolProgress) else None
                if isinstance(nested, AssistantMessage):
                    rnd.usage = rnd.usage + nested.usage
                shown = _redacted_progress(item, streams)
                if shown is not None:
                    yield shown
                continue
            remaining -= 1
            t, args = by_id[item.call.id]
            rest = streams[item.call.id].flush()
            if rest:
                yield ToolProgress(call=item.call, output=rest)
            result = clean_result(item.result, agent.redactor)
            if agent.context is not None:
                result = agent.context.shape_result(
                    item.call,
                    result,
                    tool=t,
                    root=agent.ctx.root,
                    session_dir=agent.ctx.session_dir,
                )
            rnd.results[item.call.id] = result
            yield ToolFinished(call=item.call, result=result, duration=item.duration)
            hook = await agent.lifecycle.fire(
                "PostToolUse",
                tool_name=item.call.name,
                tool_input=args,
                tool_use_id=item.call.id,
                tool_result=result.text,
                tool_response=result.text,
                is_error=result.is_error,
                duration_ms=round(item.duration * 1000),
            )
            outcomes = [hook]
            if result.is_error:  # Claude Code's hooks on failed calls
                outcomes.append(
                    await agent.lifecycle.fire(
                        "PostToolUseFailure",
                        tool_name=item.call.name,
                        tool_input=args,
                        tool_use_id=item.call.id,
                        error=result.text,
                        is_interrupt=False,
                        duration_ms=round(item.duration * 1000),
                    )
                )
            for hook in outcomes:
                for shown_event in hook.events:
                    yield shown_event
                rnd.context.extend(hook.context)
                if hook.blocked and hook.reason:
                    rnd.context.append(f"[hook {hook.by}] {hook.reason}")
                if hook.stop:
                    rnd.stop = hook.stop_reason or "a hook ended the turn"
    finally:
        outstanding = [task for task in tasks if not task.done()]
        for task in outstanding:
            task.cancel()
        if outstanding:
            await asyncio.gather(*outstanding, return_exceptions=True)


async def _call_one(
    agent: RoundHost,
    call: ToolUseBlock,
    t: Tool,
    args: dict[str, Any],
    emit: Any,
    scope: CancelScope,
) -> _Finished:
    start = time.perf_counter()
    ctx = dataclasses.replace(agent.context_for(call), emit=emit, scope=scope)
    if ctx.checkpoints is not None and t.kind == "exec" and _may_write(t, args):
        # what a command changes is not followed: the turn lists it as not tracked
        summary = f"{call.name} {t.display(args)[:200]}".rstrip()
        await asyncio.to_thread(ctx.checkpoints.note_command, agent.redactor.redact(summary))
    try:
        output = await t.call(ctx, args)
        result = _result(call.id, output)
    except ToolError as exc:
        result = ToolResultBlock(tool_use_id=call.id, content=str(exc), is_error=True)
    except Exception as exc:  # a tool bug must not crash the turn
        result = ToolResultBlock(
            tool_use_id=call.id,
            content=f"{call.name} failed unexpectedly: {type(exc).__name__}: {exc}",
            is_error=True,
        )
    return _Finished(call=call, result=result, duration=time.perf_counter() - start)


def _may_write(t: Tool, args: dict[str, Any]) -> bool:
    """Whether a call may change files: a shell command that only reads (``ls``,
    ``wc -l``, by the read-only roles' strict reading) leaves the turn nothing
    to revert, so no "not tracked" note."""
    if t.read_only:
        return False
    if t.family != "command":
        return True
    command = t.subject(args)
    return not isinstance(command, str) or writes_possibly(analyze(command)) is not None


def _redacted_progress(event: AgentEvent, streams: dict[str, StreamRedactor]) -> AgentEvent | None:
    """A progress event with secrets taken out of its output (``None``: nothing
    to show yet, the output may be the start of a secret)."""
    if not isinstance(event, ToolProgress) or not event.output or event.nested is not None:
        return event
    stream = streams.get(event.call.id)
    if stream is None:
        return event
    output = stream.feed(event.output)
    if not output and not event.status:
        return None
    return ToolProgress(call=event.call, output=output, status=event.status)


def clean_result(result: ToolResultBlock, redactor: Redactor) -> ToolResultBlock:
    """``result`` without secret values and lone surrogates."""
    if not redactor and not any(isinstance(p, TextBlock) for p in result.parts):
        return result
    changed = False
    parts: list[TextBlock | Any] = []
    for part in result.parts:
        if isinstance(part, TextBlock):
            text, _ = scrub_surrogates(redactor.redact(part.text))
            if text != part.text:
                changed = True
                part = TextBlock(text=text)
        parts.append(part)
    if not changed:
        return result
    content: str | list[Any] = parts[0].text if isinstance(result.content, str) else parts
    return ToolResultBlock(
        tool_use_id=result.tool_use_id, content=content, is_error=result.is_error
    )


def _result(call_id: str, output: str | ToolOutput) -> ToolResultBlock:
    if isinstance(output, ToolOutput):
        parts = [p for p in output.content if not (isinstance(p, TextBlock) and not p.text)]
        if not parts:
            return ToolResultBlock(
                tool_use_id=call_id, content="(no output)", is_error=output.is_error
            )
        if len(parts) == 1 and isinstance(parts[0], TextBlock):
            return ToolResultBlock(
                tool_use_id=call_id, content=parts[0].text, is_error=output.is_error
            )
        return ToolResultBlock(tool_use_id=call_id, content=parts, is_error=output.is_error)
    return ToolResultBlock(tool_use_id=call_id, content=output or "(no output)")
