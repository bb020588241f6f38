"""Wiring a session: ``build_parts`` makes every part an ``AgentSession``
holds, from its config and what the caller injects.

The parts are built in dependency order (safety before the gate, the gate
before the agent, the subagent runner before the tools that reach it);
what a part must ask the session (its agent of the moment, its folder, the
conversation) it asks through ``PartsHost``, so nothing here reaches into
the session's own workings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .agent import Agent, AgentSpec, ApprovalFlow, ConversationState
from .agent_context import SessionContext
from .agent_safety import SessionSafety
from .checkpoints import TurnCheckpoints, user_key
from .config import ProviderSettings, ResolvedConfig
from .context import DEFAULT_WINDOW, ContextManager, ContextPolicy
from .conversation import Conversation
from .events import Notice
from .lifecycle import Lifecycle, LifecycleDispatcher, NullDispatcher
from .mcp import McpToolset
from .mcp.offerings import attach_mentions
from .messages import ToolUseBlock
from .notebook import NotebookAccess
from .permission import ApprovalHandler, AuditRecord, Mode, PermissionGate
from .prompt import PromptAssembler
from .providers.base import Provider
from .sandbox import Sandbox
from .session_agent import SessionAgent, SessionServices
from .session_log import SessionLog
from .skills import SkillCatalog, SkillsToolset
from .subagents import AgentCatalog, SubagentRunner, load_catalog, subagent_toolset
from .tasks import TaskManager, TaskRecorder
from .telemetry import ModelInfo, Telemetry, WatchedSession, session_telemetry
from .tools import ToolRegistry, Toolset, builtin_tools
from .tools.base import FileChange
from .toolsearch import search_tools
from .trust import ProjectTrust

__all__ = ["PartsHost", "SessionParts", "build_parts"]


class PartsHost(Protocol):
    """What a session's parts ask the session, when they need it."""

    @property
    def agent(self) -> Agent: ...
    @property
    def conversation(self) -> Conversation: ...
    @property
    def session_dir(self) -> Path | None: ...
    @property
    def settings(self) -> ProviderSettings | None: ...
    @property
    def mcp(self) -> McpToolset | None: ...

    def audit(self, record: AuditRecord) -> None: ...
    def hook_fields(self) -> Mapping[str, Any]: ...
    def refresh_system_prompt(self) -> None: ...
    def set_system_prompt(self, text: str) -> None: ...
    def system_prompt_text(self) -> str: ...
    def skills_section(self) -> str: ...


@dataclass(kw_only=True)
class SessionParts:
    """Everything a session is made of (see ``AgentSession``)."""

    state: ConversationState
    tasks: TaskManager
    owns_tasks: bool
    task_records: TaskRecorder
    approvals: ApprovalFlow
    catalog: AgentCatalog
    safety: SessionSafety
    log: SessionLog
    checkpoints: TurnCheckpoints
    skills: SkillsToolset
    lifecycle: Lifecycle
    subagents: SubagentRunner
    agents: SessionAgent
    context: SessionContext
    notices: list[Notice]
    telemetry: Telemetry


def build_parts(
    host: PartsHost,
    root: Path,
    *,
    config: ResolvedConfig,
    provider: Provider,
    settings: ProviderSettings | None,
    tools: ToolRegistry | None,
    gate: PermissionGate | None,
    mode: Mode | None,
    approval_handler: ApprovalHandler | None,
    max_turns: int,
    home: Path | None,
    context_policy: ContextPolicy | None,
    hooks: LifecycleDispatcher | None,
    tasks: TaskManager | None,
    trust: ProjectTrust | None,
    sandbox: Sandbox | None,
    env: Mapping[str, str] | None,
    toolsets: Sequence[Toolset],
    personal: Path | None,
    notebooks: NotebookAccess | None = None,
) -> SessionParts:
    """The parts of a session at ``root`` (``personal``: where the user's own
    skills, agents, instructions and memory are read)."""
    notices = [Notice(level="warning", message=str(w)) for w in config.warnings]

    def note(problems: Any) -> None:
        notices.extend(Notice(level="warning", message=str(p)) for p in problems)

    state = ConversationState()
    manager = tasks or TaskManager(max_running=config.tasks.max_running)
    task_records = TaskRecorder(manager, lambda: host.session_dir)
    approvals = ApprovalFlow(approval_handler)
    catalog = load_catalog(root, home=personal)
    safety = SessionSafety(root, config, home=home, env=env, trust=trust, sandbox=sandbox)
    log = SessionLog(root, redact=safety.redactor.redact)
    checkpoints = TurnCheckpoints(
        root, key=user_key(home), git_allowed=safety.trusted_now, notebooks=notebooks
    )
    if gate is None:
        gate = safety.project_gate(config, mode=mode, on_audit=host.audit)
    note(gate.problems)
    note(catalog.problems)
    skills = SkillsToolset(
        SkillCatalog(root, home=personal), offer_install=config.skills.install_tool
    )
    lifecycle = Lifecycle(dispatcher=hooks or NullDispatcher(), common=host.hook_fields)
    subagents = SubagentRunner(
        agent=lambda: host.agent,
        tasks=manager,
        records=task_records,
        state=state,
        catalog=catalog,
        history=lambda: host.conversation.messages,
        aliases=lambda: host.settings.models if host.settings is not None else {},
        settings=config.subagents,
        approval_timeout=config.tasks.approval_timeout,
        session_dir=lambda: host.session_dir,
    )
    if tools is None:
        tools = ToolRegistry([*builtin_tools(), search_tools], toolsets=[skills])
        tools.add_toolset_now(subagent_toolset(subagents))
    for toolset in toolsets:  # the front end's own (a kernel's tools)
        tools.add_toolset_now(toolset)
    skills.fork_runner = subagents
    note(safety.notices())
    services = SessionServices(
        root=root, approvals=approvals, state=state, lifecycle=lifecycle, safety=safety,
        checkpoints=checkpoints, log=log,
    )  # fmt: skip
    spec = AgentSpec(
        tools=tools, gate=gate, system_prompt=host.system_prompt_text, max_turns=max_turns,
        tool_search=config.tool_search,
    )  # fmt: skip
    window = settings.context_window if settings else DEFAULT_WINDOW
    context = ContextManager(
        window=window,
        state=state.context,
        policy=context_policy,
        on_compacted=host.refresh_system_prompt,
        on_usage=state.add_usage,
    )
    agents = SessionAgent(services, spec, provider=provider, settings=settings, context=context)
    safety.watch(gate, tools, agents.workspace)
    session_context = SessionContext(
        agent=lambda: host.agent,
        prompts=PromptAssembler(
            root, home=personal, skills=host.skills_section, trusted=safety.trusted_now
        ),
        notices=notices,
        on_prompt=host.set_system_prompt,
        attach=lambda prompt: attach_mentions(host.mcp, prompt),
    )
    telemetry = session_telemetry(
        config.telemetry, _watched(host, log, safety, catalog, subagents), tasks=manager
    )
    notices += telemetry.notices()
    return SessionParts(
        state=state, tasks=manager, owns_tasks=tasks is None, task_records=task_records,
        approvals=approvals, catalog=catalog, safety=safety, log=log, checkpoints=checkpoints,
        skills=skills, lifecycle=lifecycle, subagents=subagents, agents=agents,
        context=session_context, notices=notices, telemetry=telemetry,
    )  # fmt: skip


def _watched(
    host: PartsHost,
    log: SessionLog,
    safety: SessionSafety,
    catalog: AgentCatalog,
    subagents: SubagentRunner,
) -> WatchedSession:
    """What telemetry reads of the session, read when it asks (the agent, its
    provider and mode change between cells)."""

    def model() -> ModelInfo:
        provider, settings = host.agent.provider, host.settings
        system = settings.protocol if settings is not None else provider.name
        aliases = settings.models.values() if settings is not None else ()
        known = frozenset({provider.model, *aliases})
        return ModelInfo(system=system, provider=provider.name, model=provider.model, known=known)

    def change(call: ToolUseBlock) -> FileChange | None:
        agent = host.agent
        tool = agent.tools.get(call.name)
        return tool.change(agent.context_for(call), call.input) if tool is not None else None

    return WatchedSession(
        session_id=lambda: log.id,
        mode=lambda: host.agent.gate.mode,
        model=model,
        tool=lambda name: host.agent.tools.get(name),
        agent_known=lambda name: catalog.resolve(name) is not None,
        change=change,
        owns_task=lambda task_id: task_id in subagents.task_ids(),
        redact=safety.redactor.redact,
    )
