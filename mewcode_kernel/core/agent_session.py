"""``AgentSession``: the one object a front end drives.

It wires config → provider → tools → permission gate → conversation → session
store, and runs user turns as an event stream. Sessions are created on disk
lazily (at the first turn), so opening and closing without asking anything
leaves nothing behind. Use it as an async context manager (``async with
open_session(...) as session``): entering opens its toolsets (an MCP
server's connection, say), leaving ends the session (``SessionEnd``) and
closes them.

Vocabulary: a *session* is one conversation with its log on disk;
``AgentSession`` is its live handle and ``core.session`` stores it. What a
conversation keeps across its turns is its ``ConversationState``.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from .agent import Agent, ConversationState
from .agent.loop import DEFAULT_MAX_TURNS
from .agent_context import SessionContext
from .agent_safety import SessionSafety
from .checkpoints import TurnCheckpoints, TurnRevert, user_key
from .config import ProviderSettings, ResolvedConfig, load_config
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
from .providers.factory import build_provider, provider_label
from .sandbox import Sandbox
from .session import LoadedSession, SessionStore, SessionWriter, resolve_session_id
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
from .trust import ProjectTrust, assess_project
from .usage import Usage
from .userdirs import display_path, mewcode_home, user_home

__all__ = ["AgentSession", "open_session"]

StartSource = Literal["startup", "clear"]


class AgentSession:
    """A conversation with the agent in one project root.

    ``home`` is the user's home (``~/.mewcode/``), injectable for tests;
    ``hooks`` receives the lifecycle events (default: none); ``tasks`` runs
    background work (default: a manager of its own, stopped when the
    session closes; a shared one is left to its owner). ``skills`` holds
    the skill catalog and tools; subagent definitions come from the
    built-ins, ``home`` and ``root``. The default registry includes the
    skill tools, ``Agent`` and the task tools (a registry given as ``tools``
    gets what it lists). ``background_approval_handler`` answers the
    approvals of background subagents (``None``: the headless policy does).
    ``trust`` is the project's (default: assessed from ``home`` and ``env``); ``sandbox`` the
    OS sandbox for commands (default: from ``config.sandbox``). ``mcp`` holds the
    MCP servers, started when the session is entered and stopped when it
    closes, unless ``owns_mcp`` is false (another session's servers, used
    as they are). ``toolsets`` are the front end's own tools (the kernel
    tools of a notebook), after the built-ins. ``extensions_home`` (default
    ``home``) is where the user's own skills, agents, instructions and
    memory are read; trust, permission rules and the checkpoint key stay
    with ``home``.
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
        # where the user's own skills, agents, instructions and memory are read
        # (``open_session`` points an offline demo replay at an empty folder)
        personal = extensions_home if extensions_home is not None else home
        self._owns_mcp = owns_mcp
        #: The hook rules in use (``None``: the dispatcher is someone else's, or none).
        self.hooks: HookEngine | None = None
        self.config = config
        self.settings = settings
        self.state = ConversationState()
        self.tasks = tasks or TaskManager(max_running=config.tasks.max_running)
        self._owns_tasks = tasks is None
        self.background_approval_handler: ApprovalHandler | None = None
        self.catalog = load_catalog(root, home=personal)
        self._writer: SessionWriter | None = None
        self._started = False
        self._next_start: StartSource = "startup"
        self._pending_notices: list[Notice] = [
            Notice(level="warning", message=str(w)) for w in config.warnings
        ]
        self.safety = SessionSafety(root, config, home=home, env=env, trust=trust, sandbox=sandbox)
        #: the running turn's checkpoint (files saved before it changes them)
        self.checkpoints = TurnCheckpoints(root, key=user_key(home), git_allowed=self._git_allowed)
        if gate is None:
            gate = self.safety.project_gate(config, mode=mode, on_audit=self._audit)
        self._pending_notices += [Notice(level="warning", message=str(p)) for p in gate.problems]
        self._pending_notices += [
            Notice(level="warning", message=str(p)) for p in self.catalog.problems
        ]
        self.skills = SkillsToolset(SkillCatalog(root, home=personal))
        self._skills_version = -1
        if tools is None:
            tools = ToolRegistry(builtin_tools(), toolsets=[self.skills])
            tools.add_toolset_now(subagent_toolset(self.catalog))
        for toolset in toolsets:  # the front end's own (a kernel's tools)
            tools.add_toolset_now(toolset)
        self._pending_notices += [Notice(level="warning", message=n) for n in self.safety.notices()]
        self.lifecycle = Lifecycle(dispatcher=hooks or NullDispatcher(), common=self._hook_fields)
        self.agent = Agent(
            provider=provider,
            tools=tools,
            ctx=self._run_context(gate),
            gate=gate,
            approval_handler=approval_handler,
            max_turns=max_turns,
            state=self.state,
            lifecycle=self.lifecycle,
            tasks=self.tasks,
            context=ContextManager(
                window=settings.context_window if settings else DEFAULT_WINDOW,
                state=self.state.context,
                policy=context_policy,
                on_compacted=self._refresh_system_prompt,
                on_usage=self.state.add_usage,
            ),
            sandbox=self.safety.sandbox,
            redactor=self.safety.redactor,
            child_env=self.safety.child_env,
        )
        self.safety.watch(gate, self.agent.tools)
        self.context = SessionContext(
            agent=self.agent,
            prompts=PromptAssembler(
                root,
                home=personal,
                skills=self._skills_section,
                trusted=self.safety.trusted_now,
            ),
            notices=self._pending_notices,
        )
        self.subagents = SubagentRunner(
            parent=self.agent,
            catalog=self.catalog,
            history=lambda: self.conversation.messages,
            aliases=lambda: self.settings.models if self.settings is not None else {},
            settings=config.subagents,
            approval_timeout=config.tasks.approval_timeout,
            session_dir=lambda: self.session_dir,
            background_approvals=lambda: self.background_approval_handler,
        )
        self.agent.subagents = self.subagents
        self.skills.fork_runner = self.subagents
        self.conversation = Conversation()
        if provider_label(provider).startswith("replay"):
            # Only the default offline provider is a replay for want of a key;
            # an explicit ``replay_from`` is the caller's choice.
            why = ": no API key is set" if settings is None or settings.is_offline else ""
            self._pending_notices.append(
                Notice(level="info", message=f"Using {provider_label(provider)}{why}.")
            )
        self._refresh_system_prompt()

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
        return self._writer.id if self._writer else None

    @property
    def session_dir(self) -> Path | None:
        return self._writer.path if self._writer else None

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

    def trust_project(self, shown: ProjectTrust | None = None) -> ProjectTrust:
        """The person trusts the project's settings (exactly those ``shown`` to
        them on a card; else those on disk now): remember it and apply them
        from the next call on (config, rules, mode default, sandbox); session
        rules and the conversation are kept."""
        ignored = self.safety.trust.notice()
        self._pending_notices[:] = [n for n in self._pending_notices if n.message != ignored]
        self.safety.approve(shown)
        self.config, gate = self.safety.reload(self.agent.gate, self._audit)
        self.agent.gate = gate
        self.agent.sandbox = self.safety.sandbox
        self.agent.ctx = self._run_context(gate, self.session_dir)
        self.safety.watch(gate, self.agent.tools)
        self._reload_hooks()
        return self.safety.trust

    # --- hooks -----------------------------------------------------------------

    def use_hooks(self, engine: HookEngine) -> None:
        """Run ``engine``'s rules on this session's lifecycle events (subagents
        share them); the rules it rejected are said before the next turn."""
        self.hooks = engine
        self.lifecycle.dispatcher = engine
        engine.run_subagent = self._hook_subagent
        engine.on_late = lambda message: self._pending_notices.append(
            Notice(level="warning", message=message)
        )
        self._pending_notices += [Notice(level="warning", message=p) for p in engine.problems()]

    def _reload_hooks(self) -> None:
        """Read the hook files again: a new session, or the project was trusted."""
        if self.hooks is not None:
            problems = self.hooks.reload()
            self._pending_notices += [Notice(level="warning", message=p) for p in problems]

    async def _hook_subagent(self, name: str, prompt: str) -> str:
        """A hook's subagent action: run subagent ``name`` on ``prompt``; its answer."""
        ctx = RunContext(root=self.root, session_dir=self.session_dir, services=self.agent)
        request = SubagentRequest(prompt=prompt, description=f"hook: {name}", subagent_type=name)
        return await self.subagents.run(ctx, request)

    # --- what front ends change between turns ----------------------------------

    @property
    def approval_handler(self) -> ApprovalHandler | None:
        """Who answers "ask" (``None``: the headless policy decides)."""
        return self.agent.approval_handler

    @approval_handler.setter
    def approval_handler(self, handler: ApprovalHandler | None) -> None:
        self.agent.approval_handler = handler

    @property
    def headless_allow(self) -> bool:
        """The headless policy: whether "ask" is allowed when nobody can be asked."""
        return self.agent.headless_allow

    @headless_allow.setter
    def headless_allow(self, allow: bool) -> None:
        self.agent.headless_allow = allow

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
        previous = (self.agent.provider, self.settings)
        self.agent.provider = provider
        self.settings = settings
        if settings is not None and self.agent.context is not None:
            self.agent.context.window = settings.context_window
        return previous

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
            self._pending_notices.append(
                Notice(
                    level="warning",
                    message=f"The prompt held {lone} invalid character(s) (lone UTF-16 "
                    "surrogates); each was replaced by U+FFFD.",
                )
            )
        async for event in self._prepare():
            yield event
        assert self._writer is not None
        self.checkpoints.begin(self._writer.path, self._writer.id, origin)
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
        self._ensure_writer()
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

    def _git_allowed(self) -> bool:
        """Whether git may run in the project to follow commands' changes: its
        own ``.git/config`` could name programs git runs, so only when trusted."""
        return self.safety.trusted_now()

    def _audit(self, record: AuditRecord) -> None:
        """The one place permission lines are written: every decision and every
        answered ask, as ``permission`` and ``approval`` markers."""
        if self._writer is not None:
            self._writer.append_marker(record.kind, record.to_dict())

    def _ensure_writer(self) -> None:
        if self._writer is not None:
            return
        self._writer = SessionStore.create(
            self.root,
            provider=self.provider.name,
            model=self.provider.model,
            redact=self.safety.redactor.redact,
        )
        self.agent.ctx = self._run_context(self.agent.gate, self._writer.path)
        for message in self.conversation.messages:
            self._writer.append(message)
        self.conversation.on_append = self._writer.append
        self.conversation.on_replace = self._persist_replace

    def _persist_replace(self, messages: list[Message]) -> None:
        SessionContext.persist_replace(self._writer, messages)

    def _run_context(self, gate: PermissionGate, session_dir: Path | None = None) -> RunContext:
        """The tools' view of the project: the same additional directories the
        gate checks against, so a write re-resolved at the tool is judged alike."""
        return RunContext(
            root=self.root,
            session_dir=session_dir,
            additional_dirs=gate.additional_dirs,
            checkpoints=self.checkpoints,
        )

    def _refresh_system_prompt(self) -> None:
        self._skills_version = self.skills.catalog.version
        self.context.refresh_system_prompt()

    def _skills_section(self) -> str:
        """The skills catalog for the system prompt, when the skill tools are offered."""
        return self.skills.prompt_section() if self.skills in self.tools.toolsets else ""

    def _hook_fields(self) -> Mapping[str, Any]:
        writer = self._writer
        return {
            "session_id": writer.id if writer else "",
            "cwd": str(self.root),
            "mode": self.mode,
            "transcript_path": str(writer.conversation_path) if writer else "",
        }

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
        agent = self.agent
        saved = (agent.system_prompt, agent.tools, agent.model, agent.gate, agent.max_turns)
        tools = child_tools(agent.tools, definition, background=False)
        model, note = self.subagents.route(definition.model)
        if note:
            self._pending_notices.append(Notice(level="warning", message=note))
        agent.tools = ToolRegistry(tools)
        agent.system_prompt = self.subagents.system_prompt(definition, subagent=False)
        agent.model = model or agent.model
        agent.gate = agent.gate.derive(
            mode=definition.permission_mode or agent.gate.mode,
            read_only=is_read_only_role(definition, tools),
        )
        agent.max_turns = definition.max_turns
        try:
            yield definition
        finally:
            agent.system_prompt, agent.tools, agent.model, agent.gate, agent.max_turns = saved

    # --- session management --------------------------------------------------

    async def new(self) -> None:
        """Start a fresh session (``/clear``); the next turn creates it on disk."""
        await self._end("clear")
        self._close_writer()
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
        if self._writer is not None and not fork:
            if resolve_session_id(self.root, session_id) == self._writer.id:
                self._close_writer()  # resuming this very session: let go of it first
        if fork:
            loaded, writer = SessionStore.fork(
                self.root,
                session_id,
                provider=self.provider.name,
                model=self.provider.model,
                redact=self.safety.redactor.redact,
            )
        else:
            loaded, writer = SessionStore.resume(
                self.root, session_id, redact=self.safety.redactor.redact
            )
        await self._end("resume")
        self._close_writer()
        self.state.reset()
        self.lifecycle.reset()
        self._reload_hooks()
        await asyncio.to_thread(self.skills.catalog.reload)
        self._refresh_system_prompt()
        self._writer = writer
        self.agent.ctx = self._run_context(self.agent.gate, writer.path)
        self.conversation = Conversation(
            loaded.messages, on_append=writer.append, on_replace=self._persist_replace
        )
        self.context.note_resumed(loaded)
        self.subagents.restore(writer.path)
        if loaded.skipped_lines:
            self._pending_notices.append(
                Notice(
                    level="warning",
                    message=f"Skipped {loaded.skipped_lines} damaged line(s) in the session file.",
                )
            )
        if loaded.repaired:
            self._pending_notices.append(
                Notice(
                    level="warning",
                    message=f"Repaired the session log: {loaded.repaired} unanswered tool call(s), "
                    "stray result(s) or invalid character(s) before its end.",
                )
            )
        if fork:
            self._pending_notices.append(
                Notice(level="info", message=f"Forked session {loaded.id} into {writer.id}.")
            )
        if loaded.closed_dangling:
            self._pending_notices.append(
                Notice(
                    level="info",
                    message=f"Closed {loaded.closed_dangling} tool call(s) left unanswered when the session stopped.",
                )
            )
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

    def _close_writer(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

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
            await self.agent.tools.__aexit__(None, None, None)
        finally:
            self._close_writer()
            closer = getattr(self.agent.provider, "aclose", None)
            if closer is not None:
                await closer()


def open_session(
    root: str | os.PathLike[str] = ".",
    *,
    provider: str | None = None,
    model: str | None = None,
    approval_handler: ApprovalHandler | None = None,
    gate: PermissionGate | None = None,
    mode: Mode | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    record_to: str | os.PathLike[str] | None = None,
    replay_from: str | os.PathLike[str] | None = None,
    home: Path | None = None,
    env: dict[str, str] | None = None,
    hooks: LifecycleDispatcher | None = None,
    tasks: TaskManager | None = None,
    mcp: McpToolset | None = None,
    project_trusted: Callable[[], bool] | None = None,
    toolsets: Sequence[Toolset] = (),
) -> AgentSession:
    """An ``AgentSession`` for the project at ``root`` with the configured provider.

    MCP servers from the config start when the session is entered (``async
    with``); ``mcp`` instead shares another session's servers.
    ``project_trusted`` decides whether the project's own servers may start
    (default: the project's trust, ``session.safety.trust``); stdio servers
    run in the session's OS sandbox. ``toolsets``: tools only the front end
    can offer (a notebook kernel's), joined after the built-ins.

    Raises ``ConfigError`` when the selected provider cannot be used (unknown
    name, missing variable); problems in config files become warnings.
    """
    root_path = Path(os.environ.get("MEWCODE_ROOT") or root).resolve()
    trust = assess_project(root_path, home=home)
    config = load_config(root_path, home=home, env=env, trust=trust)
    settings = config.select_provider(provider, model)
    built = build_provider(settings, record_to=record_to, replay_from=replay_from)
    personal, left_out = home, []
    if settings.is_offline and replay_from is None:
        # The offline replay (no key set) plays a recording made without anyone's
        # personal setup: the user's own skills, agents, hooks, instructions,
        # memory and MCP servers would change every request and break it.
        personal = replay_home()
        left_out = _personal_setup(home, config)
        config = _without_user_servers(config)
    servers = mcp or _mcp_servers(root_path, config, env, project_trusted)
    session = AgentSession(
        root_path,
        config=config,
        provider=built,
        settings=settings,
        gate=gate,
        mode=mode,
        approval_handler=approval_handler,
        max_turns=max_turns,
        home=home,
        hooks=hooks,
        tasks=tasks,
        trust=trust,
        env=env,
        mcp=servers,
        owns_mcp=mcp is None,
        toolsets=toolsets,
        extensions_home=personal,
    )
    if left_out:
        session._pending_notices.append(
            Notice(level="info", message=REPLAY_LEAVES_OUT.format(what=", ".join(left_out)))
        )
    if hooks is None:
        session.use_hooks(
            HookEngine(
                root_path,
                home=personal,
                sandbox=lambda: session.safety.sandbox,
                child_env=lambda: session.safety.child_env,
                redact=lambda text: session.safety.redactor.redact(text),
                tools=lambda name: session.tools.get(name),
            )
        )
    if mcp is None and servers is not None:
        # this session's servers: confined by its sandbox, trusted with its project
        servers.sandbox_wrap = session.safety.sandbox.wrap
        servers.child_env = session.safety.child_env
        if project_trusted is None:
            # read at each start: a /trust given later, or MEWCODE_TRUST_PROJECT set
            # in the notebook after the session opened, counts; each project server
            # starts only while the trust allows that very entry
            servers.project_trusted = session.safety.trusted_now
            servers.server_trusted = lambda server: (
                session.safety.allows(server.trust_item)
                if server.trust_item is not None
                else session.safety.trusted_now()
            )
    return session


REPLAY_LEAVES_OUT = (
    "The offline replay leaves out your own {what}: the recording was made without them. "
    "With a model configured, they are used."
)
# (in the user's MewCode folder, or else in the home folder)
_PERSONAL = (
    ("skills", None),
    (None, ".claude/skills"),
    ("agents", None),
    (None, ".claude/agents"),
    ("hooks.yaml", None),
    ("MEWCODE.md", None),
    ("MEMORY.md", None),
)


def _personal_setup(home: Path | None, config: ResolvedConfig) -> list[str]:
    """What of the user's own setup an offline replay leaves out, as ``~/...``."""
    state, base = mewcode_home(home), user_home(home)
    candidates = [
        state / mine if mine is not None and state is not None else base / theirs
        for mine, theirs in _PERSONAL
        if (mine is not None and state is not None) or (theirs is not None and base is not None)
    ]
    found = [display_path(p, home) for p in candidates if p.exists()]
    servers = sorted(n for n, s in config.mcp_servers.items() if s.scope == "user" or s.shadows)
    if servers:
        found.append("MCP servers (" + ", ".join(servers) + ")")
    return found


_replay_home: Path | None = None


def replay_home() -> Path:
    """An empty folder of this process's own, standing for the home folder of
    an offline replay (made once, removed at exit)."""
    global _replay_home
    if _replay_home is None:
        _replay_home = Path(tempfile.mkdtemp(prefix="mewcode-replay-home-"))
        atexit.register(shutil.rmtree, _replay_home, True)
    return _replay_home


def _without_user_servers(config: ResolvedConfig) -> ResolvedConfig:
    servers = {
        name: replace(server, shadows=None)
        for name, server in config.mcp_servers.items()
        if server.scope != "user"
    }
    return replace(config, mcp_servers=servers)


def _mcp_servers(
    root: Path,
    config: ResolvedConfig,
    env: Mapping[str, str] | None,
    project_trusted: Callable[[], bool] | None,
) -> McpToolset | None:
    if not config.mcp_servers:
        return None
    return McpToolset(
        config.mcp_servers,
        root=root,
        env=os.environ if env is None else env,
        allowlist=config.mcp_env_allowlist,
        project_trusted=project_trusted,
    )
