"""The agent loop: stream a response, run the tools it asks for, repeat
until the model stops calling tools.

Every model request is preceded by a user-side message (the prompt, or the
results of the last round of calls); ``PreUserMessage`` fires just before
it is written, and context that hooks queued rides on it as
``<system-reminder>`` blocks, so earlier messages are never rewritten.

Nothing inside a turn can leave the session broken: cancelling the task
that iterates ``Agent.run`` (Kernel › Interrupt) keeps partial text as an
interrupted assistant message and answers unanswered tool calls with error
results; any other exception (a gate, hook or tool-plumbing bug) does the
same and ends the turn with an error event. A failed assertion (a broken
invariant, a strict test double) is repaired for and raised.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, MutableMapping, Sequence
from dataclasses import replace
from typing import Any

from ..child_env import ChildEnv
from ..context import DEFAULT_WINDOW, ContextManager
from ..conversation import Conversation
from ..events import (
    AgentEvent,
    CompactTrigger,
    PostCompact,
    PreCompact,
    TurnDone,
)
from ..lifecycle import Lifecycle, LifecycleDispatcher
from ..messages import Message, ToolUseBlock
from ..permission.gate import Gate
from ..permission.seam import ApprovalHandler, PermissionGate
from ..providers.base import ModelRequest, Provider, ToolSpec
from ..redaction import Redactor
from ..sandbox import Sandbox
from ..tools.base import FileEffect, Tool
from ..tools.context import RunContext
from ..tools.registry import ToolRegistry
from ..toolsearch import plan_tools
from ..toolsearch.plan import ToolPlan
from ..usage import Usage
from .approval import HEADLESS_ENV, ApprovalFlow, headless_policy
from .runtime import AgentRuntime
from .spec import DEFAULT_MAX_TURNS, UNKNOWN_TOOL_TURN_LIMIT, AgentSpec
from .state import ConversationState
from .turn import Turn

__all__ = [
    "DEFAULT_MAX_TURNS",
    "HEADLESS_ENV",
    "UNKNOWN_TOOL_TURN_LIMIT",
    "Agent",
    "headless_policy",
]


class Agent:
    """Runs user turns with what its ``spec`` allows and the services of its
    ``runtime``, both given whole when it is built; nothing is set on it
    afterwards (a changed provider, gate or prompt makes a new agent:
    ``replaced``).

    It is also the ``ToolServices`` its tools see (its tools and active
    skills, the sandbox, the environment of child processes, asking a person).
    """

    def __init__(self, spec: AgentSpec, runtime: AgentRuntime) -> None:
        self.spec = spec
        self.runtime = runtime
        if runtime.context is not None:
            runtime.context.file_effects = self.file_effects

    @classmethod
    def of(
        cls,
        *,
        provider: Provider,
        tools: ToolRegistry,
        ctx: RunContext,
        system_prompt: str = "",
        gate: PermissionGate | None = None,
        approval_handler: ApprovalHandler | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        max_tokens: int | None = None,
        state: ConversationState | None = None,
        headless_allow: bool | None = None,
        context: ContextManager | None = None,
        lifecycle: Lifecycle | None = None,
        unknown_tool_limit: int = UNKNOWN_TOOL_TURN_LIMIT,
        model: str | None = None,
        sandbox: Sandbox | None = None,
        redactor: Redactor | None = None,
        child_env: ChildEnv | None = None,
    ) -> Agent:
        """An agent from its parts, for scripts and tests (a session builds
        the spec and runtime itself)."""
        spec = AgentSpec(
            tools=tools,
            gate=gate or Gate(root=ctx.root),
            system_prompt=system_prompt,
            model=model,
            max_turns=max_turns,
            max_tokens=max_tokens,
            unknown_tool_limit=unknown_tool_limit,
        )
        runtime = AgentRuntime(
            provider=provider,
            ctx=ctx,
            approvals=ApprovalFlow(approval_handler, headless_allow=headless_allow),
            state=state or ConversationState(),
            lifecycle=lifecycle or Lifecycle(),
            context=context,
            sandbox=sandbox,
            redactor=redactor if redactor is not None else Redactor.from_environment(),
            child_env=child_env,
        )
        return cls(spec, runtime)

    def replaced(self, *, spec: AgentSpec | None = None, **runtime: Any) -> Agent:
        """A new agent with ``spec`` and the named runtime services replaced."""
        return Agent(spec or self.spec, replace(self.runtime, **runtime))

    # --- what it may do, and with what ------------------------------------------------

    @property
    def tools(self) -> ToolRegistry:
        return self.spec.tools

    @property
    def gate(self) -> PermissionGate:
        return self.spec.gate

    @property
    def system_prompt(self) -> str:
        return self.spec.prompt()

    @property
    def model(self) -> str | None:
        """The model to ask for (a routed subagent); ``None``: the provider's own."""
        return self.spec.model

    @property
    def max_turns(self) -> int:
        return self.spec.max_turns

    @property
    def depth(self) -> int:
        """0 for a session's agent, 1 for its subagent, and so on."""
        return self.spec.depth

    @property
    def max_tokens(self) -> int | None:
        return self.spec.max_tokens

    @property
    def unknown_tool_limit(self) -> int:
        return self.spec.unknown_tool_limit

    @property
    def provider(self) -> Provider:
        return self.runtime.provider

    @property
    def ctx(self) -> RunContext:
        return self.runtime.ctx

    @property
    def approvals(self) -> ApprovalFlow:
        return self.runtime.approvals

    @property
    def approval_handler(self) -> ApprovalHandler | None:
        return self.runtime.approvals.handler

    @property
    def headless_allow(self) -> bool:
        return self.runtime.approvals.headless_allow

    @property
    def state(self) -> ConversationState:
        return self.runtime.state

    @property
    def lifecycle(self) -> Lifecycle:
        return self.runtime.lifecycle

    @property
    def context(self) -> ContextManager | None:
        """Offload, accounting and compaction (``None``: the history is sent as is)."""
        return self.runtime.context

    @property
    def sandbox(self) -> Sandbox | None:
        """The OS sandbox tools spawn processes in (``None``: none)."""
        return self.runtime.sandbox

    @property
    def redactor(self) -> Redactor:
        """Secret values taken out of tool results."""
        return self.runtime.redactor

    @property
    def child_env(self) -> ChildEnv:
        """The environment of the processes tools start."""
        return self.runtime.environment()

    # --- services tools see --------------------------------------------------------

    @property
    def hooks(self) -> LifecycleDispatcher:
        return self.lifecycle.dispatcher

    @property
    def active_skills(self) -> MutableMapping[str, str]:
        return self.state.active_skills

    def context_for(self, call: ToolUseBlock) -> RunContext:
        """The run context for one call of this agent's tools."""
        return replace(self.ctx, call=call, services=self, read_only=self.gate.read_only)

    async def ask_person(self, ctx: RunContext, reason: str) -> bool:
        """A person's explicit yes for something about the running call that no
        rule, mode or headless policy may approve (``ToolServices.ask_person``)."""
        call = ctx.call
        tool = self.tools.get(call.name) if call is not None else None
        if call is None or tool is None:
            return False
        allowed = False
        async for event in self.approvals.ask_person(
            call, tool, reason, gate=self.gate, lifecycle=self.lifecycle, cwd=ctx.root
        ):
            if isinstance(event, bool):
                allowed = event
            else:
                ctx.emit(event)
        return allowed

    def file_effects(self) -> dict[str, FileEffect]:
        """Tools whose ``path`` argument names a file they read or edit."""
        return {t.name: t.file_effect for t in self.tools if t.file_effect is not None}

    def _tool_plan(self) -> ToolPlan:
        window = self.context.window if self.context is not None else DEFAULT_WINDOW
        return plan_tools(
            self.gate.offered_tools(self.tools),
            self.state.found_tools,
            window=window,
            settings=self.spec.tool_search,
        )

    def request_tools(self) -> list[ToolSpec]:
        """The tool definitions the next request carries (MCP tools left out
        for ``search_tools`` when they would crowd the window)."""
        return self._tool_plan().specs

    def searchable_tools(self) -> Sequence[Tool]:
        """``ToolServices.searchable_tools``: the offered tools tool search
        looks through (empty while every definition fits the request)."""
        return self._tool_plan().searchable

    def offer_tools(self, names: Sequence[str]) -> None:
        """``ToolServices.offer_tools``: append newly found tools, never twice
        (the order found is the order offered, for the prompt cache)."""
        known = {t.name for t in self.searchable_tools()}
        for name in names:
            if name in known and name not in self.state.found_tools:
                self.state.found_tools.append(name)

    def build_request(self, conversation: Conversation) -> ModelRequest:
        # a deferred tool the conversation already called (a resumed session, a
        # name the model knew) stays offered, like one it found
        used = [b.name for m in conversation.messages for b in m.tool_uses]
        if used:
            self.offer_tools(used)
        return ModelRequest(
            system=self.system_prompt,
            messages=conversation.messages,
            tools=self.request_tools(),
            max_tokens=self.max_tokens,
            model=self.model or self.provider.model,
        )

    # --- a turn ----------------------------------------------------------------------

    async def run(
        self, conversation: Conversation, prompt: str | Message, *, max_turns: int | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Add ``prompt`` as a user message and run until the model stops calling tools."""
        self.tools.refresh()  # between turns only: a turn keeps the tools it began with
        turn = Turn(self, conversation, max_turns or self.max_turns)
        async for event in turn.run(prompt):
            yield event

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
        events = self.context.compact(
            self.provider, conversation, request, trigger=trigger, instructions=instructions
        )
        async for event in self.relay_compaction(events, instructions or ""):
            yield event

    async def relay_compaction(
        self, events: AsyncIterator[AgentEvent], instructions: str = ""
    ) -> AsyncIterator[AgentEvent]:
        """Pass compaction events on, firing ``PreCompact`` / ``PostCompact``
        (``instructions``: what ``/compact`` was given)."""
        async for event in events:
            yield event
            if isinstance(event, PreCompact):
                outcome = await self.lifecycle.fire(
                    "PreCompact",
                    trigger=event.trigger,
                    before_tokens=event.tokens,
                    custom_instructions=instructions,
                )
            elif isinstance(event, PostCompact):
                outcome = await self.lifecycle.fire(
                    "PostCompact",
                    trigger=event.trigger,
                    before_tokens=event.tokens_before,
                    after_tokens=event.tokens_after,
                    ok=event.ok,
                    compact_summary=event.summary,
                )
            else:
                continue
            for text in outcome.context:
                self.state.add_reminder(text)
            for shown_event in outcome.events:
                yield shown_event

    def done(
        self,
        reason: str,
        text: str,
        usage: Usage,
        turns: int,
        error: str | None = None,
        status: int | None = None,
    ) -> TurnDone:
        return TurnDone(
            reason=reason,
            text=text,
            usage=usage,
            session_usage=self.state.usage,
            model_turns=turns,
            error=error,
            status=status,
            model=self.model or self.provider.model,
        )
