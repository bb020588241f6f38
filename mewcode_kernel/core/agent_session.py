"""``AgentSession``: the one object a front end drives, a facade over the parts
``session_parts`` wires: it runs turns as an event stream and takes what front
ends change between turns (``for_cell``, ``trust_project``). Its agent is built
whole by ``SessionAgent`` and rebuilt, never changed; ``SessionLog`` keeps the
conversation on disk. Use it as ``async with open_session(...) as session``
(entering opens its toolsets, leaving ends it); ``core.session`` stores it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from .agent import Agent
from .agent.spec import DEFAULT_MAX_TURNS
from .agent_context import SessionContext
from .checkpoints import TurnRevert
from .config import ProviderSettings, ResolvedConfig
from .context import ContextPolicy
from .context.report import ContextReport
from .conversation import Conversation
from .events import AgentEvent, Notice, TurnDone
from .fs import Workspace
from .hooks import HookEngine
from .lifecycle import LifecycleDispatcher
from .mcp import McpToolset
from .messages import Message, scrub_surrogates
from .notebook import NotebookAccess
from .permission import ApprovalHandler, AuditRecord, Mode, PermissionGate
from .prompt import MemoryNote, MemoryStore
from .prompt.memory import Scope
from .providers.base import Provider
from .providers.factory import provider_label
from .sandbox import Sandbox
from .session import LoadedSession
from .session_hooks import SessionHooks
from .session_log import SessionLog
from .session_parts import build_parts
from .subagents import AgentDefinition
from .tasks import TaskInfo, TaskManager
from .tasks.manager import Work
from .tools import ToolRegistry, Toolset
from .trust import ProjectTrust
from .usage import Usage

__all__ = ["AgentSession"]

StartSource = Literal["startup", "clear"]


class AgentSession:
    """A conversation with the agent in one project root. ``hooks``: the
    lifecycle's dispatcher; ``tasks`` runs background work; ``tools`` defaults to
    the built-ins; ``trust``/``sandbox`` to the project's; ``mcp``: servers run
    while the session is entered (unless ``owns_mcp`` is false); ``toolsets``,
    ``notebooks``: the front end's tools and open notebooks; ``extensions_home``
    (default ``home``): the user's skills, agents, memory."""

    def __init__(
        self,
        root: Path,
        *,
        config: ResolvedConfig,
        provider: Provider,
        settings: ProviderSettings | None = None,
        tools: ToolRegistry | None = None,
        gate: PermissionGate | None = None,
        mode: Mode | None = None,
        approval_handler: ApprovalHandler | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        home: Path | None = None,
        context_policy: ContextPolicy | None = None,
        hooks: LifecycleDispatcher | None = None,
        tasks: TaskManager | None = None,
        trust: ProjectTrust | None = None,
        sandbox: Sandbox | None = None,
        env: Mapping[str, str] | None = None,
        mcp: McpToolset | None = None,
        owns_mcp: bool = True,
        toolsets: Sequence[Toolset] = (),
        extensions_home: Path | None = None,
        notebooks: NotebookAccess | None = None,
    ) -> None:
        self.root = root
        self.mcp = mcp
        self._owns_mcp = owns_mcp
        self.config = config
        self.conversation = Conversation()
        self._system_prompt = ""
        self._started = False
        self._next_start: StartSource = "startup"
        self._skills_version = -1
        parts = build_parts(
            self, root, config=config, provider=provider, settings=settings, tools=tools,
            gate=gate, mode=mode, approval_handler=approval_handler, max_turns=max_turns,
            home=home, context_policy=context_policy, hooks=hooks, tasks=tasks, trust=trust,
            sandbox=sandbox, env=env, toolsets=toolsets, notebooks=notebooks,
            # ``open_session`` points an offline demo replay at an empty folder
            personal=extensions_home if extensions_home is not None else home,
        )  # fmt: skip
        self.state, self.tasks, self._owns_tasks = parts.state, parts.tasks, parts.owns_tasks
        #: the table of what this session launched in the background (turns, subagents)
        self.task_records = parts.task_records
        #: who answers the session's "ask" (a cell's card, or the headless policy)
        self.approvals = parts.approvals
        self.catalog, self.skills, self.subagents = parts.catalog, parts.skills, parts.subagents
        self.safety, self.log, self.checkpoints = parts.safety, parts.log, parts.checkpoints
        self.lifecycle, self.context = parts.lifecycle, parts.context
        self.telemetry = parts.telemetry  # each turn's events pass through it (core.telemetry)
        self._hooks = SessionHooks(
            self.lifecycle, self.notify, self.subagents.run_for_hook, lambda: self.agent
        )
        #: the session's agent, built whole, and rebuilt when what it is made of changes
        self.agents = parts.agents
        self._pending_notices = parts.notices
        if provider_label(provider).startswith("replay"):
            # Only the default offline provider is a replay for want of a key;
            # an explicit ``replay_from`` is the caller's choice.
            why = ": no API key is set" if settings is None or settings.is_offline else ""
            self.notify(Notice(level="info", message=f"Using {provider_label(provider)}{why}."))
        self.refresh_system_prompt()

    @property
    def agent(self) -> Agent:
        """The session's agent of the moment (a new one after any change)."""
        return self.agents.agent

    @property
    def settings(self) -> ProviderSettings | None:
        return self.agents.settings

    @property
    def workspace(self) -> Workspace:
        """The session's one path resolver, shared by the gate, tools and hooks."""
        return self.agents.workspace

    def set_system_prompt(self, text: str) -> None:
        self._system_prompt = text

    def system_prompt_text(self) -> str:
        """The session's system prompt as of now (a role's is its own)."""
        return self._system_prompt

    # who answers: the session's approval flow (``for_cell`` sets them for a cell)
    approval_handler = property(
        lambda self: self.approvals.handler,
        lambda self, value: setattr(self.approvals, "handler", value),
        doc='Who answers "ask" (``None``: the headless policy decides).',
    )
    headless_allow = property(
        lambda self: self.approvals.headless_allow,
        lambda self, value: setattr(self.approvals, "headless_allow", value),
        doc='Whether "ask" is allowed when nobody can be asked.',
    )
    background_approval_handler = property(
        lambda self: self.approvals.background,
        lambda self, value: setattr(self.approvals, "background", value),
        doc='Who answers background work\'s "ask" (the task boards; ``None``: the policy).',
    )

    @property
    def provider(self) -> Provider:
        return self.agent.provider

    @property
    def provider_label(self) -> str:
        return provider_label(self.agent.provider)

    @property
    def gate(self) -> PermissionGate:
        return self.agent.gate

    @property
    def tools(self) -> ToolRegistry:
        return self.agent.tools

    @property
    def mode(self) -> Mode:
        """The permission mode; settable during a session (``/mode plan``)."""
        return self.agent.gate.mode

    @mode.setter
    def mode(self, value: str) -> None:
        self.agent.gate.mode = value

    @property
    def session_id(self) -> str | None:
        return self.log.id

    @property
    def session_dir(self) -> Path | None:
        return self.log.path

    @property
    def memory(self) -> MemoryStore:
        return self.context.memory

    @property
    def trust(self) -> ProjectTrust:
        """Whether the project's settings may loosen anything (``core.trust``)."""
        return self.safety.trust

    @property
    def sandbox(self) -> Sandbox:
        """The OS sandbox commands run in; other spawners call ``sandbox.wrap``."""
        return self.safety.sandbox

    def notify(self, notice: Notice) -> None:
        """Something to tell the person before the next turn."""
        self._pending_notices.append(notice)

    def trust_project(self, shown: ProjectTrust | None = None) -> ProjectTrust:
        """The person trusts the project's settings (exactly those ``shown`` to
        them on a card; else those on disk now): remember it and apply them
        from the next call on (config, rules, mode default, sandbox); session
        rules and the conversation are kept."""
        ignored = self.safety.trust.notice()
        self._pending_notices[:] = [n for n in self._pending_notices if n.message != ignored]
        self.safety.approve(shown)
        self.config, gate = self.safety.reload(self.agents.spec.gate, self.audit)
        self.agents.use_gate(gate)
        self.safety.watch(gate, self.agents.spec.tools, self.workspace)
        self._hooks.reload()
        return self.safety.trust

    def provider_for(
        self, name: str | None = None, model: str | None = None
    ) -> tuple[Provider, ProviderSettings]:
        """Build (without switching to it) provider ``name`` (default: the current
        one) with ``model`` from this session's config. Raises ``ConfigError``."""
        return self.agents.provider_for(self.config, name, model)

    def use_provider(
        self, provider: Provider, settings: ProviderSettings | None
    ) -> tuple[Provider, ProviderSettings | None]:
        """Talk to ``provider`` from the next request on; the conversation is kept.
        Returns the previous provider and settings (closing it is the caller's)."""
        return self.agents.use_provider(provider, settings)

    def for_cell(
        self, *, agent: str | None = None, **overrides: Any
    ) -> AbstractAsyncContextManager[None]:
        """One cell's overrides, put back when it ends (``SessionAgent.for_cell``):
        ``provider``, ``model``, ``mode``, ``agent`` (a role) and who answers
        (``approval_handler``, ``headless_allow``, ``background``). Entering
        raises ``ConfigError`` (provider, role) or ``ValueError`` (mode)."""
        role = self.as_agent(agent) if agent else None
        return self.agents.for_cell(self.config, role=role, **overrides)

    @asynccontextmanager
    async def as_agent(self, name: str) -> AsyncIterator[AgentDefinition]:
        """Run the turns inside as the subagent definition ``name`` (``--agent``):
        its system prompt, tools, model, turn limit and mode (never more
        lenient than the session's); the conversation is the session's.
        Raises ``ConfigError`` for an unknown name."""
        definition = self.catalog.require(name)
        note = lambda text: self.notify(Notice(level="warning", message=text))  # noqa: E731
        async with self.agents.as_role(definition, self.subagents, note):
            yield definition

    @property
    def hooks(self) -> HookEngine | None:
        """The hook rules in use (``None``: the dispatcher is someone else's, or none)."""
        return self._hooks.engine

    def use_hooks(self, engine: HookEngine) -> None:
        """Run ``engine``'s rules on this session's lifecycle events (subagents
        share them); the rules it rejected are said before the next turn."""
        self._hooks.use(engine)

    def hook_fields(self) -> Mapping[str, Any]:
        writer = self.log.writer
        return {
            "session_id": writer.id if writer else "",
            "cwd": str(self.root),
            "mode": self.mode,
            "transcript_path": str(writer.conversation_path) if writer else "",
        }

    def run(
        self,
        prompt: str,
        *,
        max_turns: int | None = None,
        origin: Mapping[str, Any] | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run one user turn; every message is on disk as soon as it exists.
        ``origin`` (a cell's execution count and id) is kept for ``/rewind cell N``."""
        return self.telemetry.turn(prompt, self._turn(prompt, max_turns, origin))

    async def _turn(
        self, prompt: str, max_turns: int | None, origin: Mapping[str, Any] | None
    ) -> AsyncIterator[AgentEvent]:
        self.state.cancelled_turn = None
        prompt, lone = scrub_surrogates(prompt)
        if lone:
            why = f"The prompt held {lone} invalid character(s) (lone UTF-16 surrogates)"
            self.notify(Notice(level="warning", message=f"{why}; each was replaced by U+FFFD."))
        self.skills.note_prompt(prompt)  # asking for an install offers install_skill
        async for event in self._prepare():
            yield event
        writer = self.log.writer
        assert writer is not None
        number = self.checkpoints.begin(writer.path, writer.id, origin, after=self.log.last_turn)
        self.log.mark_turn(number)
        outcome = await self.lifecycle.fire("UserPromptSubmit", prompt=prompt)
        for shown_event in outcome.events:
            yield shown_event
        if outcome.blocked or outcome.stop:
            why = outcome.reason if outcome.blocked else outcome.stop_reason
            by = f" by hook {outcome.by}" if outcome.by else ""
            yield Notice(level="warning", message=f"The prompt was not sent: blocked{by}: {why}")
            yield TurnDone(
                reason="blocked", text="", usage=Usage(), session_usage=self.state.usage,
                model_turns=0, error=why,
            )  # fmt: skip
            return
        message = await self.context.turn_message(prompt, list(outcome.context))
        try:
            async for event in self.agent.run(self.conversation, message, max_turns=max_turns):
                yield event
        except BaseException:
            self.checkpoints.finish()  # cut short: still record what its commands changed
            raise
        await asyncio.to_thread(self.checkpoints.finish)

    async def compact(self, instructions: str | None = None) -> AsyncIterator[AgentEvent]:
        """Summarise older turns now (``/compact [instructions]``)."""
        if len(self.conversation):
            async for event in self._prepare(check_size=False):
                yield event
        events = self.context.compact(self.conversation, instructions)
        async for event in self.telemetry.compaction(events):
            yield event

    def remember(self, note: str, *, scope: Scope = "project") -> MemoryNote:
        """Save a memory note (see ``SessionContext.remember``)."""
        return self.context.remember(note, scope=scope)

    def turn_revert(self) -> TurnRevert | None:
        """Reverting the last turn's file changes (``None`` if it changed none
        and ran no untracked command): what a cell's "Revert" button uses."""
        record, store = self.checkpoints.record, self.checkpoints.store
        if record is None or store is None:
            return None
        return TurnRevert(record, store, self.agent.ctx.workspace, self.checkpoints.notebooks)

    def context_report(self) -> ContextReport:
        """How full the context is (``/context``)."""
        return self.context.report(self.conversation)

    async def _prepare(self, *, check_size: bool = True) -> AsyncIterator[AgentEvent]:
        """Before a turn: newly trusted MCP servers, pending notices, the session
        on disk (``SessionStart``), a resumed conversation compacted if too large."""
        if self.mcp is not None and self._owns_mcp:
            await self.mcp.start_allowed()
            self._pending_notices += self.mcp.drain_notices()
        for notice in self._pending_notices:
            yield notice
        self._pending_notices.clear()
        self.ensure_log()
        if self.skills.catalog.version != self._skills_version:  # a skill was installed
            self.refresh_system_prompt()
        self.tools.refresh()
        for problem in self.skills.problems(self.tools):
            yield Notice(level="warning", message=problem)
        start, self._started = None if self._started else self._next_start, True
        model = self.agent.model or self.provider.model
        for outcome in await self._hooks.before_turn(start, model, self.context.take_loaded()):
            for text in outcome.context:
                self.state.add_reminder(text)
            for shown_event in outcome.events:
                yield shown_event
        if check_size and self.context.check_size:
            async for event in self.context.compact_if_too_large(self.conversation):
                yield event

    def ensure_log(self) -> str:
        """The session on disk (created now if it is not yet): its id. A front
        end that names the session before its first turn (ACP) calls it."""
        provider, replace_ = self.provider, self._persist_replace
        if self.log.ensure(
            self.conversation, provider=provider.name, model=provider.model, on_replace=replace_
        ):
            self.agents.rebuild()  # its tools now see the session's folder
        return self.log.id or ""

    def launch_background(self, work: Work, *, name: str, kind: str, description: str) -> TaskInfo:
        """Run ``work`` as a background task of this session (queued past the
        cap), recorded in its task table."""
        self.ensure_log()
        info = self.tasks.launch(work, name=name, kind=kind, description=description)
        self.task_records.track(info.id)
        return info

    def audit(self, record: AuditRecord) -> None:
        """The one place permission lines are written: every decision and every
        answered ask, as ``permission`` and ``approval`` markers."""
        self.log.marker(record.kind, record.to_dict())

    def _persist_replace(self, messages: list[Message]) -> None:
        SessionContext.persist_replace(self.log.writer, messages)

    def refresh_system_prompt(self) -> None:
        self._skills_version = self.skills.catalog.version
        self.context.refresh_system_prompt()

    def skills_section(self) -> str:
        """The skills catalog for the system prompt, when the skill tools are offered."""
        return (
            self.skills.prompt_section() if self.skills in self.agents.spec.tools.toolsets else ""
        )

    async def new(self) -> None:
        """Start a fresh session (``/clear``); the next turn creates it on disk."""
        await self._leave("clear")
        self.agents.rebuild()
        self.conversation = Conversation()
        self.context.check_size = False
        self._next_start = "clear"

    async def resume(self, session_id: str, *, fork: bool = False) -> LoadedSession:
        """Continue a stored session (an id prefix is enough). Only one writer
        per session: one in use elsewhere raises ``SessionInUse``; ``fork``
        continues a copy of it in a new session instead."""
        loaded, writer = self.log.open_stored(
            session_id, fork=fork, provider=self.provider.name, model=self.provider.model
        )
        await self._leave("resume")
        self.log.adopt(writer, last_turn=SessionLog.turns_in(loaded))
        self.agents.rebuild()
        self.conversation = Conversation(
            loaded.messages, on_append=writer.append, on_replace=self._persist_replace
        )
        self.context.note_resumed(loaded)
        self.subagents.restore(self.task_records.restore(writer.path))
        self.tools.refresh()  # its tasks' tools, for commands run before the next turn
        self._pending_notices += SessionLog.resume_notices(loaded, writer, fork=fork)
        self._started = True
        outcome = await self.lifecycle.fire("SessionResume", source="resume")
        for text in outcome.context:
            self.state.add_reminder(text)
        self._pending_notices += outcome.notices
        return loaded

    async def _leave(self, reason: str) -> None:
        """Leave the current conversation: its ``SessionEnd``, its log let go,
        the state, hooks, skills and prompt read afresh for the next one."""
        await self._end(reason)
        self.log.close()
        self.state.reset()
        self.lifecycle.reset()
        self._hooks.reload()
        await asyncio.to_thread(self.skills.catalog.reload)
        self.refresh_system_prompt()

    async def _end(self, reason: str) -> None:
        """``SessionEnd`` for the session being left, if it began."""
        if self._started:
            self._started = False
            await self.lifecycle.fire("SessionEnd", reason=reason)

    async def __aenter__(self) -> AgentSession:
        if self.mcp is not None:
            await self.tools.add_toolset(self.mcp if self._owns_mcp else self.mcp.shared())
        await self.agent.tools.__aenter__()
        self.tools.refresh()  # the servers' tools, for commands run before the first turn
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self, reason: str = "the session closed while it ran") -> None:
        """End the session: unfinished background tasks recorded interrupted
        (``reason``) first, then ``SessionEnd``; close its toolsets, file and
        provider (a replay checks for drift here)."""
        try:
            if self._owns_tasks:
                self.tasks.interrupt_all(reason)  # recorded before anything slow
            await self._end("exit")
            self.telemetry.close()
            await self._hooks.aclose()
            self.subagents.close()
            self.task_records.close()
            if self._owns_tasks:
                await self.tasks.aclose(reason)
            await self.agents.spec.tools.__aexit__(None, None, None)
        finally:
            self.log.close()
            closer = getattr(self.agents.provider, "aclose", None)
            if closer is not None:
                await closer()
