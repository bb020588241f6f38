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

import os
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from .agent import Agent, ConversationState
from .agent.loop import DEFAULT_MAX_TURNS
from .agent_context import SessionContext
from .config import ProviderSettings, ResolvedConfig, load_config
from .context import DEFAULT_WINDOW, ContextManager, ContextPolicy
from .context.report import ContextReport
from .conversation import Conversation
from .errors import ConfigError
from .events import AgentEvent, Notice, TurnDone
from .lifecycle import Lifecycle, LifecycleDispatcher, NullDispatcher
from .mcp import McpToolset
from .messages import Message
from .permission import ApprovalHandler, AuditRecord, Mode, PermissionGate, gate_for_project
from .prompt import MemoryNote, MemoryStore, PromptAssembler
from .prompt.memory import Scope
from .providers.base import Provider
from .providers.factory import build_provider, provider_label
from .session import LoadedSession, SessionStore, SessionWriter
from .tasks import TaskManager
from .tools import RunContext, ToolRegistry, builtin_tools
from .usage import Usage

__all__ = ["AgentSession", "open_session"]

StartSource = Literal["startup", "clear"]


class AgentSession:
    """A conversation with the agent in one project root.

    ``home`` is the user's home (``~/.mewcode/``), injectable for tests;
    ``hooks`` receives the lifecycle events (default: none); ``tasks`` runs
    background work (default: a manager of its own, stopped when the
    session closes; a shared one is left to its owner). ``mcp`` holds the
    MCP servers, started when the session is entered and stopped when it
    closes, unless ``owns_mcp`` is false (another session's servers, used
    as they are).
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
        mcp: McpToolset | None = None,
        owns_mcp: bool = True,
    ) -> None:
        self.root = root
        self.mcp = mcp
        self._owns_mcp = owns_mcp
        self.config = config
        self.settings = settings
        self.state = ConversationState()
        self.tasks = tasks or TaskManager()
        self._owns_tasks = tasks is None
        self._writer: SessionWriter | None = None
        self._started = False
        self._next_start: StartSource = "startup"
        self._pending_notices: list[Notice] = [
            Notice(level="warning", message=str(w)) for w in config.warnings
        ]
        if gate is None:
            gate = gate_for_project(root, config.permission_rules, mode=mode, on_audit=self._audit)
        self._pending_notices += [Notice(level="warning", message=str(p)) for p in gate.problems]
        self.lifecycle = Lifecycle(dispatcher=hooks or NullDispatcher(), common=self._hook_fields)
        self.agent = Agent(
            provider=provider,
            tools=tools or ToolRegistry(builtin_tools()),
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
        )
        self.context = SessionContext(
            agent=self.agent,
            prompts=PromptAssembler(root, home=home),
            notices=self._pending_notices,
        )
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

    async def run(self, prompt: str, *, max_turns: int | None = None) -> AsyncIterator[AgentEvent]:
        """Run one user turn; every message is on disk as soon as it exists."""
        async for event in self._prepare():
            yield event
        outcome = await self.lifecycle.fire("UserPromptSubmit", prompt=prompt)
        for notice in outcome.notices:
            yield notice
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
        async for event in self.agent.run(self.conversation, message, max_turns=max_turns):
            yield event

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
        if not self._started:
            self._started = True
            outcome = await self.lifecycle.fire("SessionStart", source=self._next_start)
            for text in outcome.context:
                self.state.add_reminder(text)
            for notice in outcome.notices:
                yield notice
        if check_size and self.context.check_size:
            async for event in self.context.compact_if_too_large(self.conversation):
                yield event

    def _audit(self, record: AuditRecord) -> None:
        """The one place permission lines are written: every decision and every
        answered ask, as ``permission`` and ``approval`` markers."""
        if self._writer is not None:
            self._writer.append_marker(record.kind, record.to_dict())

    def _ensure_writer(self) -> None:
        if self._writer is not None:
            return
        self._writer = SessionStore.create(
            self.root, provider=self.provider.name, model=self.provider.model
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
            root=self.root, session_dir=session_dir, additional_dirs=gate.additional_dirs
        )

    def _refresh_system_prompt(self) -> None:
        self.context.refresh_system_prompt()

    def _hook_fields(self) -> Mapping[str, Any]:
        writer = self._writer
        return {
            "session_id": writer.id if writer else "",
            "cwd": str(self.root),
            "mode": self.mode,
            "transcript_path": str(writer.conversation_path) if writer else "",
        }

    # --- session management --------------------------------------------------

    async def new(self) -> None:
        """Start a fresh session (``/clear``); the next turn creates it on disk."""
        await self._end("clear")
        self._close_writer()
        self.conversation = Conversation()
        self.state.reset()
        self.lifecycle.reset()
        self.context.check_size = False
        self._next_start = "clear"
        self._refresh_system_prompt()

    async def resume(self, session_id: str) -> LoadedSession:
        """Continue a stored session (an id prefix is enough)."""
        loaded, writer = SessionStore.resume(self.root, session_id)
        await self._end("resume")
        self._close_writer()
        self.state.reset()
        self.lifecycle.reset()
        self._refresh_system_prompt()
        self._writer = writer
        self.agent.ctx = self._run_context(self.agent.gate, writer.path)
        self.conversation = Conversation(
            loaded.messages, on_append=writer.append, on_replace=self._persist_replace
        )
        self.context.note_resumed(loaded)
        if loaded.skipped_lines:
            self._pending_notices.append(
                Notice(
                    level="warning",
                    message=f"Skipped {loaded.skipped_lines} damaged line(s) in the session file.",
                )
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
) -> AgentSession:
    """An ``AgentSession`` for the project at ``root`` with the configured provider.

    MCP servers from the config start when the session is entered (``async
    with``); ``mcp`` instead shares another session's servers.
    ``project_trusted`` decides whether the project's own servers may start
    (default: only with ``MEWCODE_TRUST_PROJECT=1``).

    Raises ``ConfigError`` when the selected provider cannot be used (unknown
    name, missing variable); problems in config files become warnings.
    """
    root_path = Path(os.environ.get("MEWCODE_ROOT") or root).resolve()
    config = load_config(root_path, home=home, env=env)
    settings = config.select_provider(provider, model)
    built = build_provider(settings, record_to=record_to, replay_from=replay_from)
    return AgentSession(
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
        mcp=mcp or _mcp_servers(root_path, config, env, project_trusted),
        owns_mcp=mcp is None,
    )


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
