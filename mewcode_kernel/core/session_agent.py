"""``SessionAgent``: how a session's agent is built, and rebuilt.

It holds what the session's agent is made of: the spec (the session's
tools, gate, prompt and turn limit), a role's narrowed spec while turns run
as a subagent definition (``--agent``), the provider, the context manager
and the one path resolver; and the services it shares with the session
(approvals, state, lifecycle, safety, checkpoints, log). ``agent`` is built
whole from them; whatever changes (the provider, the gate after a trust, a
role, the session's folder) makes a new one (``rebuild``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .agent import Agent, AgentRuntime, AgentSpec, ApprovalFlow, ConversationState
from .agent_safety import SessionSafety
from .checkpoints import TurnCheckpoints
from .config import ProviderSettings, ResolvedConfig
from .context import ContextManager
from .errors import ConfigError
from .fs import Workspace
from .lifecycle import Lifecycle
from .mcp.elicitation import ElicitationHandler
from .permission import ApprovalHandler, PermissionGate
from .providers.base import Provider
from .providers.factory import build_provider, close_provider
from .session_log import SessionLog
from .subagents import AgentDefinition, SubagentRunner, child_tools, is_read_only_role
from .tools import RunContext

__all__ = ["UNSET", "SessionAgent", "SessionServices"]

#: an override left as it is (``None`` is a value: "nobody answers")
UNSET: Any = object()


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionServices:
    """What the session's agent shares with the session itself."""

    root: Path
    approvals: ApprovalFlow
    state: ConversationState
    lifecycle: Lifecycle
    safety: SessionSafety
    checkpoints: TurnCheckpoints
    log: SessionLog


class SessionAgent:
    """Builds the session's agent (see the module docstring)."""

    def __init__(
        self,
        services: SessionServices,
        spec: AgentSpec,
        *,
        provider: Provider,
        settings: ProviderSettings | None,
        context: ContextManager,
    ) -> None:
        self.services = services
        self.spec = spec
        self.provider = provider
        self.settings = settings
        self.context = context
        self._role: AgentSpec | None = None
        self._workspace: Workspace | None = None
        self._workspace_dirs: tuple[Path, ...] = ()
        self.agent = self._build()

    def _build(self) -> Agent:
        s = self.services
        runtime = AgentRuntime(
            provider=self.provider,
            ctx=self.run_context(),
            approvals=s.approvals,
            state=s.state,
            lifecycle=s.lifecycle,
            context=self.context,
            sandbox=s.safety.sandbox,
            redactor=s.safety.redactor,
            child_env=s.safety.child_env,
        )
        return Agent(self._role or self.spec, runtime)

    def rebuild(self) -> None:
        """A new agent from the current spec (or role) and services."""
        self.agent = self._build()

    def run_context(self) -> RunContext:
        """The tools' view of the project, with the session's one path resolver:
        the gate judges a call and the tool runs it on the same resolution."""
        s = self.services
        return RunContext(
            root=s.root,
            session_dir=s.log.path,
            additional_dirs=self.spec.gate.additional_dirs,
            workspace=self.workspace,
            checkpoints=s.checkpoints,
        )

    @property
    def workspace(self) -> Workspace:
        """The session's one path resolver (the root and the gate's directories),
        shared by the gate, the tools and the hooks."""
        dirs = self.spec.gate.additional_dirs
        if self._workspace is None or self._workspace_dirs != dirs:
            self._workspace = Workspace(self.services.root, dirs)
            self._workspace_dirs = dirs
        return self._workspace

    def use_gate(self, gate: PermissionGate) -> None:
        """The session's gate from now on (the project was trusted)."""
        self.spec = replace(self.spec, gate=gate)
        self.rebuild()

    # --- the provider -------------------------------------------------------------

    def provider_for(
        self, config: ResolvedConfig, name: str | None = None, model: str | None = None
    ) -> tuple[Provider, ProviderSettings]:
        """Build (without switching to it) provider ``name`` (default: the current
        one) with ``model`` from ``config``. Raises ``ConfigError``; the offline
        replay cannot be chosen this way (it plays one recording)."""
        if name is None and self.settings is not None:
            name = self.settings.name
        settings = config.select_provider(name, model)
        if settings.protocol == "replay":
            raise ConfigError(
                "the offline replay provider plays one recorded session and cannot be switched "
                "to or given another model; configure a provider with an API key"
            )
        return build_provider(settings), settings

    def use_provider(
        self, provider: Provider, settings: ProviderSettings | None
    ) -> tuple[Provider, ProviderSettings | None]:
        """Talk to ``provider`` from the next request on; returns the previous
        provider and settings (closing it is the caller's)."""
        previous = (self.provider, self.settings)
        self.provider = provider
        self.settings = settings
        if settings is not None:
            self.context.window = settings.context_window
        self.rebuild()
        return previous

    # --- one cell ------------------------------------------------------------------

    @asynccontextmanager
    async def for_cell(
        self,
        config: ResolvedConfig,
        *,
        provider: str | None = None,
        model: str | None = None,
        mode: str | None = None,
        role: AbstractAsyncContextManager[Any] | None = None,
        approval_handler: ApprovalHandler | None = UNSET,
        headless_allow: bool | None = None,
        background: ApprovalHandler | None = UNSET,
        elicitation_handler: ElicitationHandler | None = UNSET,
    ) -> AsyncIterator[None]:
        """A cell's overrides (see ``AgentSession.for_cell``), all put back."""
        approvals = self.services.approvals
        saved = (approvals.handler, approvals.headless_allow, approvals.background)
        saved_elicit = approvals.elicit
        if elicitation_handler is UNSET and approval_handler is not UNSET:
            # a handler that can also fill in an MCP server's form carries it as ``elicit``
            elicitation_handler = getattr(approval_handler, "elicit", None)
        if elicitation_handler is not UNSET:
            approvals.elicit = elicitation_handler
        if approval_handler is not UNSET:
            approvals.handler = approval_handler
        if headless_allow is not None:
            approvals.headless_allow = headless_allow
        if background is not UNSET:
            approvals.background = background
        swapped = None
        previous_mode = self.agent.gate.mode
        try:
            if provider or model:
                swapped = self.use_provider(*self.provider_for(config, provider, model))
            if mode:
                self.agent.gate.mode = mode
            async with AsyncExitStack() as stack:
                if role is not None:
                    await stack.enter_async_context(role)
                yield
        finally:
            if mode:
                self.agent.gate.mode = previous_mode
            if swapped is not None:
                temporary, _ = self.use_provider(*swapped)
                await close_provider(temporary)
            approvals.handler, approvals.headless_allow, approvals.background = saved
            approvals.elicit = saved_elicit

    # --- a role -------------------------------------------------------------------

    @asynccontextmanager
    async def as_role(
        self,
        definition: AgentDefinition,
        subagents: SubagentRunner,
        notify: Callable[[str], None],
    ) -> AsyncIterator[AgentDefinition]:
        """Run the turns inside as ``definition``: its system prompt, tools,
        model, turn limit and mode, narrowed from the session's spec (never a
        tool or a mode the session lacks)."""
        tools = child_tools(self.spec.tools, definition, background=False)
        model, note = subagents.route(definition.model)
        if note:
            notify(note)
        self._role = self.spec.narrowed(
            tools=tools,
            mode=definition.permission_mode,
            read_only=is_read_only_role(definition, tools),
            system_prompt=subagents.system_prompt(definition, subagent=False),
            model=model,
            max_turns=definition.max_turns,
        )
        self.rebuild()
        try:
            yield definition
        finally:
            self._role = None
            self.rebuild()
