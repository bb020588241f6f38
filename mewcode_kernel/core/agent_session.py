"""``AgentSession``: the one object a front end drives.

It runs user turns as an event stream over one conversation, and is what
front ends ask to change between turns: the provider, the mode, a role, who
answers approvals (``for_cell`` applies them for one cell and puts them
back), the project's trust. ``open_session`` (``session_wiring``) opens
one from the config; ``SessionLog`` keeps it on disk, lazily, so opening
and closing without asking anything leaves nothing behind. Use it as an
async context manager (``async with open_session(...) as session``):
entering opens its toolsets (an MCP server's connection, say), leaving ends
the session (``SessionEnd``) and closes them.

Its agent is built whole from a spec (what it may do) and a runtime (what
it runs with); whatever changes makes a new agent (``_rebuild``), never
an agent changed in place.

Vocabulary: a *session* is one conversation with its log on disk;
``AgentSession`` is its live handle and ``core.session`` stores it. What a
conversation keeps across its turns is its ``ConversationState``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from .agent import Agent, AgentRuntime, AgentSpec, ApprovalFlow, ConversationState
from .agent.spec import DEFAULT_MAX_TURNS
from .agent_context import SessionContext
from .agent_safety import SessionSafety
from .checkpoints import TurnCheckpoints, TurnRevert, user_key
from .config import ProviderSettings, ResolvedConfig
from .context import DEFAULT_WINDOW, ContextManager, ContextPolicy
from .context.report import ContextReport
from .conversation import Conversation
from .errors import ConfigError
from .events import AgentEvent, Notice, TurnDone
from .hooks import HookEngine
from .lifecycle import Lifecycle, LifecycleDispatcher, NullDispatcher
from .mcp import McpToolset
from .messages import Message, scrub_surrogates
from .permission import ApprovalHandler, AuditRecord, Mode, PermissionGate
from .prompt import MemoryNote, MemoryStore, PromptAssembler
from .prompt.memory import Scope
from .providers.base import Provider
from .providers.factory import build_provider, close_provider, provider_label
from .sandbox import Sandbox
from .session import LoadedSession
from .session_log import SessionLog
from .skills import SkillCatalog, SkillsToolset
from .subagents import (
    AgentDefinition,
    SubagentRequest,
    SubagentRunner,
    child_tools,
    is_read_only_role,
    load_catalog,
    subagent_toolset,
)
from .tasks import TaskManager
from .tools import RunContext, ToolRegistry, Toolset, builtin_tools
from .trust import ProjectTrust
from .usage import Usage

__all__ = ["AgentSession"]

StartSource = Literal["startup", "clear"]
_UNSET: Any = object()


class AgentSession:
    """A conversation with the agent in one project root.

    ``home`` is the user's home (``~/.mewcode/``), injectable for tests;
    ``hooks`` receives the lifecycle events (default: none); ``tasks`` runs
    background work (default: a manager of its own, stopped when the
    session closes; a shared one is left to its owner). ``skills`` holds
    the skill catalog and tools; subagent definitions come from the
    built-ins, ``home`` and ``root``. The default registry includes the
    skill tools, ``Agent`` and the task tools (a registry given as ``tools``
    gets what it lists). ``trust`` is the project's (default: assessed from
    ``home`` and ``env``); ``sandbox`` the OS sandbox for commands (default:
    from ``config.sandbox``). ``mcp`` holds the MCP servers, started when the
    session is entered and stopped when it closes, unless ``owns_mcp`` is
    false (another session's servers, used as they are). ``toolsets`` are
    the front end's own tools (the kernel tools of a notebook), after the
    built-ins. ``extensions_home`` (default ``home``) is where the user's
    own skills, agents, instructions and memory are read; trust, permission
    rules and the checkpoint key stay with ``home``.
    """

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
    ) -> None:
        self.root = root
        self.mcp = mcp
        self._owns_mcp = owns_mcp
        # where the user's own skills, agents, instructions and memory are read
        # (``open_session`` points an offline demo replay at an empty folder)
        personal = extensions_home if extensions_home is not None else home
        #: The hook rules in use (``None``: the dispatcher is someone else's, or none).
        self.hooks: HookEngine | None = None
        self.config = config
        self.settings = settings
        self.state = ConversationState()
        self.tasks = tasks or TaskManager(max_running=config.tasks.max_running)
        self._owns_tasks = tasks is None
        #: who answers the session's "ask" (a cell's card, or the headless policy)
        self.approvals = ApprovalFlow(approval_handler)
        #: who answers background work's "ask" (the task boards; ``None``: the policy)
        self.background_approval_handler: ApprovalHandler | None = None
        self.catalog = load_catalog(root, home=personal)
        self._started = False
        self._next_start: StartSource = "startup"
        self._pending_notices: list[Notice] = [
            Notice(level="warning", message=str(w)) for w in config.warnings
        ]
        self.safety = SessionSafety(root, config, home=home, env=env, trust=trust, sandbox=sandbox)
        self.log = SessionLog(root, redact=self.safety.redactor.redact)
        #: the running turn's checkpoint (files saved before it changes them)
        self.checkpoints = TurnCheckpoints(
            root, key=user_key(home), git_allowed=self.safety.trusted_now
        )
        if gate is None:
            gate = self.safety.project_gate(config, mode=mode, on_audit=self._audit)
        self._notify_all(gate.problems)
        self._notify_all(self.catalog.problems)
        self.skills = SkillsToolset(SkillCatalog(root, home=personal))
        self._skills_version = -1
        self.lifecycle = Lifecycle(dispatcher=hooks or NullDispatcher(), common=self._hook_fields)
        self.subagents = SubagentRunner(
            agent=lambda: self.agent,
            tasks=self.tasks,
            state=self.state,
            catalog=self.catalog,
            history=lambda: self.conversation.messages,
            aliases=lambda: self.settings.models if self.settings is not None else {},
            settings=config.subagents,
            approval_timeout=config.tasks.approval_timeout,
            session_dir=lambda: self.session_dir,
            background_approvals=lambda: self.background_approval_handler,
        )
        if tools is None:
            tools = ToolRegistry(builtin_tools(), toolsets=[self.skills])
            tools.add_toolset_now(subagent_toolset(self.subagents))
        for toolset in toolsets:  # the front end's own (a kernel's tools)
            tools.add_toolset_now(toolset)
        self.skills.fork_runner = self.subagents
        self._notify_all(self.safety.notices())
        self._system_prompt = ""
        self._spec = AgentSpec(
            tools=tools, gate=gate, system_prompt=lambda: self._system_prompt, max_turns=max_turns
        )
        self._role: AgentSpec | None = None  # a role the turns run as (``--agent``)
        self._provider = provider
        self._context = ContextManager(
            window=settings.context_window if settings else DEFAULT_WINDOW,
            state=self.state.context,
            policy=context_policy,
            on_compacted=self._refresh_system_prompt,
            on_usage=self.state.add_usage,
        )
        self.agent = self._build_agent()
        self.safety.watch(gate, tools)
        self.context = SessionContext(
            agent=lambda: self.agent,
            prompts=PromptAssembler(
                root, home=personal, skills=self._skills_section, trusted=self.safety.trusted_now
            ),
            notices=self._pending_notices,
            on_prompt=self._set_system_prompt,
        )
        self.conversation = Conversation()
        if provider_label(provider).startswith("replay"):
            # Only the default offline provider is a replay for want of a key;
            # an explicit ``replay_from`` is the caller's choice.
            why = ": no API key is set" if settings is None or settings.is_offline else ""
            self.notify(Notice(level="info", message=f"Using {provider_label(provider)}{why}."))
        self._refresh_system_prompt()

    # --- the agent, built whole --------------------------------------------------

    def _build_agent(self) -> Agent:
        runtime = AgentRuntime(
            provider=self._provider,
            ctx=self._run_context(),
            approvals=self.approvals,
            state=self.state,
            lifecycle=self.lifecycle,
            context=self._context,
            sandbox=self.safety.sandbox,
            redactor=self.safety.redactor,
            child_env=self.safety.child_env,
        )
        return Agent(self._role or self._spec, runtime)

    def _rebuild(self) -> None:
        """A new agent from the current spec (or role) and services."""
        self.agent = self._build_agent()

    def _run_context(self) -> RunContext:
        """The tools' view of the project: the same additional directories the
        gate checks against, so a write re-resolved at the tool is judged alike."""
        return RunContext(
            root=self.root,
            session_dir=self.log.path,
            additional_dirs=self._spec.gate.additional_dirs,
            checkpoints=self.checkpoints,
        )

    def _set_system_prompt(self, text: str) -> None:
        self._system_prompt = text

    # --- what front ends show ------------------------------------------------

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

    def _notify_all(self, problems: Any) -> None:
        self._pending_notices += [Notice(level="warning", message=str(p)) for p in problems]

    # --- what front ends change between turns ----------------------------------

    def trust_project(self, shown: ProjectTrust | None = None) -> ProjectTrust:
        """The person trusts the project's settings (exactly those ``shown`` to
        them on a card; else those on disk now): remember it and apply them
        from the next call on (config, rules, mode default, sandbox); session
        rules and the conversation are kept."""
        ignored = self.safety.trust.notice()
        self._pending_notices[:] = [n for n in self._pending_notices if n.message != ignored]
        self.safety.approve(shown)
        self.config, gate = self.safety.reload(self._spec.gate, self._audit)
        self._spec = replace(self._spec, gate=gate)
        self._rebuild()
        self.safety.watch(gate, self._spec.tools)
        self._reload_hooks()
        return self.safety.trust

    @property
    def approval_handler(self) -> ApprovalHandler | None:
        """Who answers "ask" (``None``: the headless policy decides)."""
        return self.approvals.handler

    @approval_handler.setter
    def approval_handler(self, handler: ApprovalHandler | None) -> None:
        self.approvals.handler = handler

    @property
    def headless_allow(self) -> bool:
        """The headless policy: whether "ask" is allowed when nobody can be asked."""
        return self.approvals.headless_allow

    @headless_allow.setter
    def headless_allow(self, allow: bool) -> None:
        self.approvals.headless_allow = allow

    def provider_for(
        self, name: str | None = None, model: str | None = None
    ) -> tuple[Provider, ProviderSettings]:
        """Build (without switching to it) provider ``name`` (default: the current
        one) with ``model`` from this session's config. Raises ``ConfigError``;
        the offline replay cannot be chosen this way (it plays one recording)."""
        if name is None and self.settings is not None:
            name = self.settings.name
        settings = self.config.select_provider(name, model)
        if settings.protocol == "replay":
            raise ConfigError(
                "the offline replay provider plays one recorded session and cannot be switched "
                "to or given another model; configure a provider with an API key"
            )
        return build_provider(settings), settings

    def use_provider(
        self, provider: Provider, settings: ProviderSettings | None
    ) -> tuple[Provider, ProviderSettings | None]:
        """Talk to ``provider`` from the next request on; the conversation is kept.
        Returns the previous provider and settings (closing it is the caller's)."""
        previous = (self._provider, self.settings)
        self._provider = provider
        self.settings = settings
        if settings is not None:
            self._context.window = settings.context_window
        self._rebuild()
        return previous

    @asynccontextmanager
    async def for_cell(
        self,
        *,
        provider: str | None = None,
        model: str | None = None,
        mode: str | None = None,
        agent: str | None = None,
        approval_handler: ApprovalHandler | None = _UNSET,
        headless_allow: bool | None = None,
        background_approvals: ApprovalHandler | None = _UNSET,
    ) -> AsyncIterator[None]:
        """One cell's overrides, put back when it ends: ``provider`` /
        ``model`` / ``mode`` / ``agent`` (a role) for this cell only, and who
        answers its approvals (a card, the task boards, or the headless policy).
        Raises ``ConfigError`` (provider, role) or ``ValueError`` (mode)."""
        saved = (self.approvals.handler, self.approvals.headless_allow)
        if approval_handler is not _UNSET:
            self.approvals.handler = approval_handler
        if headless_allow is not None:
            self.approvals.headless_allow = headless_allow
        if background_approvals is not _UNSET:
            self.background_approval_handler = background_approvals
        swapped = None
        previous_mode = self.mode
        try:
            if provider or model:
                swapped = self.use_provider(*self.provider_for(provider, model))
            if mode:
                self.mode = mode
            async with AsyncExitStack() as stack:
                if agent:
                    await stack.enter_async_context(self.as_agent(agent))
                yield
        finally:
            if mode:
                self.mode = previous_mode
            if swapped is not None:
                temporary, _ = self.use_provider(*swapped)
                await close_provider(temporary)
            self.approvals.handler, self.approvals.headless_allow = saved

    @asynccontextmanager
    async def as_agent(self, name: str) -> AsyncIterator[AgentDefinition]:
        """Run the turns inside as the subagent definition ``name`` (``--agent``):
        its system prompt, tools, model, turn limit and mode (never more
        lenient than the session's); the conversation is the session's.
        Raises ``ConfigError`` for an unknown name."""
        definition = self.catalog.resolve(name)
        if definition is None:
            raise ConfigError(
                f"no subagent definition named {name!r}; available: {', '.join(self.catalog.names)}"
            )
        tools = child_tools(self._spec.tools, definition, background=False)
        model, note = self.subagents.route(definition.model)
        if note:
            self.notify(Notice(level="warning", message=note))
        self._role = self._spec.narrowed(
            tools=tools,
            mode=definition.permission_mode,
            read_only=is_read_only_role(definition, tools),
            system_prompt=self.subagents.system_prompt(definition, subagent=False),
            model=model,
            max_turns=definition.max_turns,
        )
        self._rebuild()
        try:
            yield definition
        finally:
            self._role = None
            self._rebuild()

    # --- hooks -----------------------------------------------------------------

    def use_hooks(self, engine: HookEngine) -> None:
        """Run ``engine``'s rules on this session's lifecycle events (subagents
        share them); the rules it rejected are said before the next turn."""
        self.hooks = engine
        self.lifecycle.dispatcher = engine
        engine.run_subagent = self._hook_subagent
        engine.on_late = lambda message: self.notify(Notice(level="warning", message=message))
        self._notify_all(engine.problems())

    def _reload_hooks(self) -> None:
        """Read the hook files again: a new session, or the project was trusted."""
        if self.hooks is not None:
            self._notify_all(self.hooks.reload())

    async def _hook_subagent(self, name: str, prompt: str) -> str:
        """A hook's subagent action: run subagent ``name`` on ``prompt``; its answer."""
        ctx = replace(self.agent.ctx, services=self.agent)
        request = SubagentRequest(prompt=prompt, description=f"hook: {name}", subagent_type=name)
        return await self.subagents.run(ctx, request)

    def _hook_fields(self) -> Mapping[str, Any]:
        writer = self.log.writer
        return {
            "session_id": writer.id if writer else "",
            "cwd": str(self.root),
            "mode": self.mode,
            "transcript_path": str(writer.conversation_path) if writer else "",
        }

    # --- running -------------------------------------------------------------

    async def run(
        self,
        prompt: str,
        *,
        max_turns: int | None = None,
        origin: Mapping[str, Any] | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run one user turn; every message is on disk as soon as it exists.
        ``origin`` says where it came from (a notebook cell's execution count
        and id), kept with the turn's checkpoint for ``/rewind cell N``."""
        self.state.cancelled_turn = None
        prompt, lone = scrub_surrogates(prompt)
        if lone:
            self.notify(
                Notice(
                    level="warning",
                    message=f"The prompt held {lone} invalid character(s) (lone UTF-16 "
                    "surrogates); each was replaced by U+FFFD.",
                )
            )
        async for event in self._prepare():
            yield event
        writer = self.log.writer
        assert writer is not None
        self.checkpoints.begin(writer.path, writer.id, origin)
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
        async for event in self.context.compact(self.conversation, instructions):
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
        return TurnRevert(record, store, self.agent.ctx.workspace)

    def context_report(self) -> ContextReport:
        """How full the context is (``/context``)."""
        return self.context.report(self.conversation)

    async def _prepare(self, *, check_size: bool = True) -> AsyncIterator[AgentEvent]:
        """Before a turn: pending notices, the session on disk (and its
        ``SessionStart``), a resumed conversation compacted if too large."""
        if self.mcp is not None and self._owns_mcp:
            self._pending_notices += self.mcp.drain_notices()
        for notice in self._pending_notices:
            yield notice
        self._pending_notices.clear()
        created = self.log.ensure(
            self.conversation,
            provider=self.provider.name,
            model=self.provider.model,
            on_replace=self._persist_replace,
        )
        if created:
            self._rebuild()  # its tools now see the session's folder
        if self.skills.catalog.version != self._skills_version:  # a skill was installed
            self._refresh_system_prompt()
        self.tools.refresh()
        for problem in self.skills.problems(self.tools):
            yield Notice(level="warning", message=problem)
        if not self._started:
            self._started = True
            outcome = await self.lifecycle.fire("SessionStart", source=self._next_start)
            for text in outcome.context:
                self.state.add_reminder(text)
            for shown_event in outcome.events:
                yield shown_event
        if check_size and self.context.check_size:
            async for event in self.context.compact_if_too_large(self.conversation):
                yield event

    def _audit(self, record: AuditRecord) -> None:
        """The one place permission lines are written: every decision and every
        answered ask, as ``permission`` and ``approval`` markers."""
        self.log.marker(record.kind, record.to_dict())

    def _persist_replace(self, messages: list[Message]) -> None:
        SessionContext.persist_replace(self.log.writer, messages)

    def _refresh_system_prompt(self) -> None:
        self._skills_version = self.skills.catalog.version
        self.context.refresh_system_prompt()

    def _skills_section(self) -> str:
        """The skills catalog for the system prompt, when the skill tools are offered."""
        return self.skills.prompt_section() if self.skills in self._spec.tools.toolsets else ""

    # --- session management --------------------------------------------------

    async def new(self) -> None:
        """Start a fresh session (``/clear``); the next turn creates it on disk."""
        await self._end("clear")
        self.log.close()
        self._rebuild()
        self.conversation = Conversation()
        self.state.reset()
        self.lifecycle.reset()
        self._reload_hooks()
        self.context.check_size = False
        self._next_start = "clear"
        await asyncio.to_thread(self.skills.catalog.reload)
        self._refresh_system_prompt()

    async def resume(self, session_id: str, *, fork: bool = False) -> LoadedSession:
        """Continue a stored session (an id prefix is enough). Only one writer
        per session: one in use elsewhere raises ``SessionInUse``; ``fork``
        continues a copy of it in a new session instead."""
        loaded, writer = self.log.open_stored(
            session_id, fork=fork, provider=self.provider.name, model=self.provider.model
        )
        await self._end("resume")
        self.log.close()
        self.state.reset()
        self.lifecycle.reset()
        self._reload_hooks()
        await asyncio.to_thread(self.skills.catalog.reload)
        self._refresh_system_prompt()
        self.log.adopt(writer)
        self._rebuild()
        self.conversation = Conversation(
            loaded.messages, on_append=writer.append, on_replace=self._persist_replace
        )
        self.context.note_resumed(loaded)
        self.subagents.restore(writer.path)
        self._pending_notices += SessionLog.resume_notices(loaded, writer, fork=fork)
        self._started = True
        outcome = await self.lifecycle.fire("SessionResume", source="resume")
        for text in outcome.context:
            self.state.add_reminder(text)
        self._pending_notices += outcome.notices
        return loaded

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

    async def aclose(self) -> None:
        """End the session (``SessionEnd``), stop its background tasks, close
        its toolsets, its file and its provider (a replay checks for drift here)."""
        try:
            await self._end("exit")
            if self.hooks is not None:
                await self.hooks.aclose()
            self.subagents.close()
            if self._owns_tasks:
                await self.tasks.aclose()
            await self._spec.tools.__aexit__(None, None, None)
        finally:
            self.log.close()
            closer = getattr(self._provider, "aclose", None)
            if closer is not None:
                await closer()
