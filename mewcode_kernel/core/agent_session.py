"""``AgentSession``: the one object a front end drives.

It wires config → provider → tools → permission gate → conversation → session
store, and runs user turns as an event stream. Sessions are created on disk
lazily (at the first turn), so opening and closing without asking anything
leaves nothing behind.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

from .agent import Agent, ApprovalHandler, PermissionGate, SessionRuntime
from .agent.loop import DEFAULT_MAX_TURNS
from .agent_context import SessionContextMixin
from .config import ProviderSettings, ResolvedConfig, load_config
from .context import DEFAULT_WINDOW, ContextManager, ContextPolicy
from .conversation import Conversation
from .errors import ConfigError
from .events import AgentEvent, ApprovalResolved, Notice
from .permission import AuditRecord, EngineGate, Mode
from .permission.project import gate_for_project
from .prompt import PromptAssembler
from .providers.base import Provider
from .providers.factory import build_provider, provider_label
from .session import LoadedSession, SessionStore, SessionWriter
from .tools import ToolContext, ToolRegistry, builtin_tools

__all__ = ["AgentSession", "open_session"]


class AgentSession(SessionContextMixin):
    """A conversation with the agent in one project root. Context management
    (system prompt, memory, compaction, ``/context``) is in ``SessionContextMixin``;
    ``home`` is the user's home (``~/.mewcode/``), injectable for tests."""

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
    ) -> None:
        self.root = root
        self.config = config
        self.settings = settings
        self.runtime = SessionRuntime()
        self._writer: SessionWriter | None = None
        self.prompts = PromptAssembler(root, home=home)
        self._warned: set[str] = set()
        self._check_size = False
        if gate is None:
            gate = gate_for_project(root, config.permission_rules, mode=mode, on_audit=self._audit)
        self.agent = Agent(
            provider=provider,
            tools=tools or ToolRegistry(builtin_tools()),
            ctx=_tool_context(root, gate),
            gate=gate,
            approval_handler=approval_handler,
            max_turns=max_turns,
            runtime=self.runtime,
            context=ContextManager(
                window=settings.context_window if settings else DEFAULT_WINDOW,
                state=self.runtime.context,
                policy=context_policy,
                on_compacted=self._refresh_system_prompt,
                on_usage=self.runtime.add_usage,
            ),
        )
        self.conversation = Conversation()
        self._pending_notices: list[Notice] = [
            Notice(level="warning", message=str(w)) for w in config.warnings
        ]
        if isinstance(gate, EngineGate):
            self._pending_notices += [
                Notice(level="warning", message=str(p)) for p in gate.rules.problems
            ]
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
    def mode(self) -> str:
        """The permission mode; settable during a session (``/mode plan``)."""
        return getattr(self.agent.gate, "mode", "default")

    @mode.setter
    def mode(self, value: str) -> None:
        if not isinstance(self.agent.gate, EngineGate):
            raise ValueError("this session's permission gate has no modes")
        self.agent.gate.mode = value

    @property
    def session_id(self) -> str | None:
        return self._writer.id if self._writer else None

    @property
    def session_dir(self) -> Path | None:
        return self._writer.path if self._writer else None

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
        for notice in self._pending_notices:
            yield notice
        self._pending_notices.clear()
        self._ensure_writer()
        if self._check_size:
            async for event in self._compact_if_too_large():
                yield event
        message = await self._turn_message(prompt)
        async for event in self.agent.run(self.conversation, message, max_turns=max_turns):
            if isinstance(event, ApprovalResolved) and self._writer is not None:
                self._writer.append_marker(
                    "approval",
                    {
                        "call_id": event.call.id,
                        "tool": event.call.name,
                        "allowed": event.allowed,
                        "by": event.by,
                        "rules_added": list(event.rules_added),
                    },
                )
            yield event

    def _audit(self, record: AuditRecord) -> None:
        """Every permission decision goes to the session log as a marker line."""
        if self._writer is not None:
            self._writer.append_marker("permission", record.to_dict())

    def _ensure_writer(self) -> None:
        if self._writer is not None:
            return
        self._writer = SessionStore.create(
            self.root, provider=self.provider.name, model=self.provider.model
        )
        self.agent.ctx = _tool_context(self.root, self.agent.gate, self._writer.path)
        for message in self.conversation.messages:
            self._writer.append(message)
        self.conversation.on_append = self._writer.append
        self.conversation.on_replace = self._persist_replace

    # --- session management --------------------------------------------------

    def new(self) -> None:
        """Start a fresh session (the next turn creates it on disk)."""
        self._close_writer()
        self.conversation = Conversation()
        self.runtime.reset()
        self._check_size = False
        self._refresh_system_prompt()

    def resume(self, session_id: str) -> LoadedSession:
        """Continue a stored session (an id prefix is enough)."""
        loaded, writer = SessionStore.resume(self.root, session_id)
        self._close_writer()
        self.runtime.reset()
        self._refresh_system_prompt()
        self._writer = writer
        self.agent.ctx = _tool_context(self.root, self.agent.gate, writer.path)
        self.conversation = Conversation(
            loaded.messages, on_append=writer.append, on_replace=self._persist_replace
        )
        self._note_resumed(loaded)
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
        return loaded

    def _close_writer(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    async def aclose(self) -> None:
        """Close the session file and the provider (a replay checks for drift here)."""
        self._close_writer()
        closer = getattr(self.agent.provider, "aclose", None)
        if closer is not None:
            await closer()


def _tool_context(root: Path, gate: PermissionGate, session_dir: Path | None = None) -> ToolContext:
    """The tools' view of the project: the same additional directories the gate
    checked against, so a write re-resolved at the tool is judged alike."""
    extra = tuple(getattr(gate, "additional_dirs", ()))
    return ToolContext(root=root, session_dir=session_dir, additional_dirs=extra)


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
) -> AgentSession:
    """An ``AgentSession`` for the project at ``root`` with the configured provider.

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
    )
