"""``SubagentRunner``: runs subagents for the ``Agent`` tool and keeps track
of them as tasks.

A run builds a child ``Agent`` of the calling agent (one level deeper,
``depth``) from a definition: the parent's provider (the routed model), its
tools filtered, a gate derived from its (never more lenient; read-only for
read-only roles), its hooks, a fresh conversation or the live history (a fork).

* Foreground: the child's events stream to the parent as nested progress;
  a child still running after ``foreground_timeout`` moves to the
  background without losing anything (``timed_out_to_background``).
* Background (``run_in_background``, a background definition, every fork):
  launched as a task (queued past the cap). Its approvals go to the front
  end's background handler, bounded by ``approval_timeout``, or to the
  headless policy; nothing waits forever.

Every child's conversation is written to ``subagents/<task>.jsonl`` under
the session, the task table to ``tasks.jsonl``; a resumed session shows its
tasks again (running ones as interrupted) and a completed one can be sent a
new message. A finished background task reaches the parent on its next
request as a ``<task-notification>``, and its usage counts in the parent's.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..agent import Agent, ApprovalFlow, ConversationState
from ..config import SubagentSettings
from ..context import DEFAULT_WINDOW, ContextManager, save_full_text
from ..conversation import Conversation
from ..errors import ToolError
from ..events import AgentEvent, Notice, TurnDone
from ..fs.safe_write import UnsafeWriteError
from ..messages import Message, ToolUseBlock
from ..prompt.environment import gather_environment, render_environment
from ..prompt.turn import turn_message
from ..session.records import subagent_transcript
from ..skills import ForkRequest, resolve_tools
from ..tasks import FINISHED, TaskInfo, TaskManager, TaskRecorder, TaskUpdate
from ..tools.context import RunContext
from ..usage import Usage
from .catalog import AgentCatalog
from .definition import AgentDefinition
from .depth import child_depth, nesting_on
from .events import child_lifecycle, completed, route_model, started, task_created
from .fork import FORK_NAME, fork_definition, fork_history, fork_prompt
from .reports import (
    NOTIFICATION_LIMIT,
    answer,
    context_for_fork,
    nest,
    role_prompt,
    status_line,
    task_message,
    task_notification,
    usage_of,
)
from .tool_filter import child_tools, is_read_only_role, unknown_entries

__all__ = ["NOTIFICATION_LIMIT", "SubagentRequest", "SubagentRunner"]

SUBAGENT_UNKNOWN_TOOL_LIMIT = 2
_END = object()


@dataclass(frozen=True, kw_only=True, slots=True)
class SubagentRequest:
    """What the ``Agent`` tool was asked (Claude Code's schema, plus ``name``)."""

    prompt: str
    description: str
    subagent_type: str | None = None
    model: str | None = None
    run_in_background: bool = False
    name: str | None = None


@dataclass(kw_only=True)
class _Child:
    id: str
    name: str
    definition: AgentDefinition
    agent: Agent
    conversation: Conversation
    background: bool
    counted: Usage = field(default_factory=Usage)  # usage the parent has counted already
    notes: list[str] = field(default_factory=list)


class SubagentRunner:
    """Runs the subagents of one session.

    A child is built from the spec of the agent that delegates (its tool
    call's ``ctx.services``; ``agent()``, the session's, otherwise),
    narrowed. ``tasks`` runs background children, ``records`` keeps their
    table, ``state`` (the session's) gets their usage and notifications;
    ``history`` returns the session's live conversation (for forks);
    ``aliases`` the provider's model aliases (``haiku`` → an id);
    ``session_dir`` where transcripts go (``None``: not kept). A background
    child's approvals go where its parent's flow sends background asks.
    """

    def __init__(
        self,
        *,
        agent: Callable[[], Agent],
        tasks: TaskManager | None,
        records: TaskRecorder | None = None,
        state: ConversationState,
        catalog: AgentCatalog,
        history: Callable[[], list[Message]],
        aliases: Callable[[], Mapping[str, str]],
        settings: SubagentSettings,
        approval_timeout: float,
        session_dir: Callable[[], Path | None],
    ) -> None:
        self._agent = agent
        #: the session's task manager: every background run is one of its tasks
        self.task_manager = tasks
        self._records = records
        self._state = state
        self.catalog = catalog
        self._history = history
        self._aliases = aliases
        self.settings = settings
        self.approval_timeout = approval_timeout
        self._session_dir = session_dir
        self._children: dict[str, _Child] = {}
        self._mine: set[str] = set()
        self._roles: dict[str, str] = {}
        self._unsubscribe: Callable[[], None] | None = None
        if tasks is not None:
            self._unsubscribe = tasks.subscribe(self._on_update)

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # --- what the task tools read ------------------------------------------------------

    def task_ids(self) -> list[str]:
        """The tasks of this session (launched here or restored from its records)."""
        return list(self._mine)

    def tasks(self) -> list[TaskInfo]:
        manager = self.task_manager
        if manager is None:
            return []
        return [i for i in manager.list() if i.id in self._mine]

    def role_of(self, task_id: str) -> str:
        return self._roles.get(task_id, "")

    # --- running ----------------------------------------------------------------------

    async def run(self, ctx: RunContext, request: SubagentRequest) -> str:
        """Run ``request``: the final answer (foreground), or where the task is."""
        fork = request.subagent_type is None
        caller = self._caller(ctx)
        if fork and caller.spec.depth > 0:  # a fork copies the session's history, not its own
            raise ToolError("a subagent cannot fork itself; name a subagent_type")
        if fork:
            definition = fork_definition()
        else:
            found = self.catalog.resolve(request.subagent_type or "")
            if found is None:
                raise ToolError(
                    f"unknown subagent_type {request.subagent_type!r}; available: "
                    f"{', '.join(self.catalog.names)} (or leave it out to fork yourself)"
                )
            definition = found
        background = fork or definition.background or request.run_in_background
        if background and self.task_manager is None:
            raise ToolError("background subagents need a task manager, and this session has none")
        child = self._child(definition, request, background=background, fork=fork, parent=caller)
        for note in child.notes:  # for the person; the model needs none of it
            if ctx.call is not None:
                ctx.emit(Notice(level="warning", message=note))
        if fork:
            message = fork_prompt(request.prompt)
        else:
            root = ctx.root
            env = render_environment(await asyncio.to_thread(gather_environment, root))
            message = turn_message(request.prompt, environment=env)
        if background:
            await task_created(ctx, caller.lifecycle, child.id, request.description, request.prompt)
        await started(ctx, child.agent)
        if background:
            return self._launch(child, message, request, ctx.call.id if ctx.call else "")
        return await self._foreground(ctx, child, message, request)

    def _child(
        self,
        definition: AgentDefinition,
        request: SubagentRequest,
        *,
        background: bool,
        fork: bool,
        child_id: str | None = None,
        history: list[Message] | None = None,
        parent: Agent | None = None,
        system_prompt: str | Callable[[], str] | None = None,
    ) -> _Child:
        """A child of ``parent`` (default: this runner's agent): its tools, mode
        and sandbox are never wider than the parent's (delegation narrows)."""

        parent = parent or self._agent()
        child_depth(parent.spec.depth, self.settings)  # refused past the limit
        nest = nesting_on(self.settings) and not fork  # a fork is a copy, never a parent
        tools = child_tools(parent.tools, definition, background=background, nest=nest)
        notes: list[str] = []
        unknown = unknown_entries(definition, parent.tools)
        if unknown:
            notes.append(
                f"{definition.name} names tools this session does not have: {', '.join(unknown)}"
            )
        model, note = self.route(request.model or definition.model)
        if note:
            notes.append(note)
        spec = parent.spec.narrowed(
            tools=tools,
            mode=definition.permission_mode,
            read_only=is_read_only_role(definition, tools),
            system_prompt=system_prompt
            if system_prompt is not None
            else (parent.spec.system_prompt if fork else self.system_prompt(definition)),
            model=model,
            max_turns=definition.max_turns,
            unknown_tool_limit=SUBAGENT_UNKNOWN_TOOL_LIMIT,
            delegated=True,
        )
        context = parent.context
        child_id = child_id or self._new_id()
        directory = self._session_dir()
        if history is not None:  # resumed from its transcript: already on disk
            conversation = Conversation(history)
        else:
            conversation = Conversation(fork_history(self._history()) if fork else ())
            if directory is not None:
                transcript = subagent_transcript(directory, child_id)
                for message in conversation.messages:
                    transcript.append(message)
        transcript = subagent_transcript(directory, child_id) if directory is not None else None
        if transcript is not None:
            conversation.on_append = transcript.append
        # the parent's provider, hooks, sandbox, secrets and environment; its own
        # state, context and (in the background) approvals
        agent = parent.replaced(
            spec=spec,
            approvals=self._approvals(parent, background, child_id),
            state=ConversationState(),
            lifecycle=child_lifecycle(
                parent, child_id, definition.name, transcript.path if transcript else None
            ),
            context=ContextManager(
                window=context.window if context is not None else DEFAULT_WINDOW,
                policy=context.policy if context is not None else None,
            ),
        )
        name = request.name or (FORK_NAME if fork else definition.name)
        return _Child(
            id=child_id, name=name, definition=definition, agent=agent,
            conversation=conversation, background=background, notes=notes,
        )  # fmt: skip

    async def run_for_hook(self, name: str, prompt: str) -> str:
        """A hook's subagent action: subagent ``name`` on ``prompt``, a child
        of the session's agent; its answer."""
        agent = self._agent()
        request = SubagentRequest(prompt=prompt, description=f"hook: {name}", subagent_type=name)
        return await self.run(replace(agent.ctx, services=agent), request)

    def _caller(self, ctx: RunContext | None) -> Agent:
        """The agent whose tool call is delegating (a subagent loading a fork
        skill, say), else this runner's own."""
        from ..agent import Agent

        services = ctx.services if ctx is not None else None
        return services if isinstance(services, Agent) else self._agent()

    def system_prompt(self, definition: AgentDefinition, *, subagent: bool = True) -> str:
        """A role's system prompt (``reports.role_prompt``)."""
        return role_prompt(definition, subagent=subagent)

    def route(self, wanted: str) -> tuple[str | None, str | None]:
        """The model id to ask for (``None``: the parent's), and a note."""
        return route_model(wanted, self._aliases())

    def _approvals(self, parent: Agent, background: bool, task_id: str) -> ApprovalFlow:
        """A foreground child asks where its parent does; a background one on
        the task boards (or by the headless policy), never waiting forever."""
        if not background:
            return parent.approvals
        return parent.approvals.for_task(task_id, self.approval_timeout)

    def _new_id(self) -> str:
        return f"task_{uuid.uuid4().hex[:16]}"

    async def run_fork(self, request: ForkRequest, ctx: RunContext | None) -> str:
        """Run a fork skill (``SkillForkRunner``): its tools hard-limited to the
        skill's ``allowed_tools``, its context per ``fork_context`` (none: the
        skill alone; recent: the last turns; full: the whole live history), its
        model routed; the final answer comes back."""
        # the agent that loaded the skill, not the session's: a read-only role's
        # fork stays read-only, with no tool the role lacks
        parent = self._caller(ctx)
        tools, _ = resolve_tools(request.allowed_tools, parent.tools)
        skill = request.skill
        definition = AgentDefinition(
            name=f"skill-{skill.name}"[:32],
            description=skill.description or f"the {skill.name} skill",
            system_prompt="",
            tools=tuple(tools) if request.allowed_tools else None,
            model=request.model or "inherit",
        )
        history = context_for_fork(self._history(), request.fork_context)
        sub_request = SubagentRequest(prompt=request.prompt, description=f"skill {skill.name}")
        child = self._child(
            definition, sub_request, background=False, fork=False, history=history,
            parent=parent, system_prompt=parent.spec.system_prompt,  # the parent's: its cache holds
        )  # fmt: skip
        if ctx is None:
            ctx = parent.context_for(ToolUseBlock(id=f"skill-{child.id}", name="load_skill"))
        return await self._foreground(ctx, child, task_message(request.prompt), sub_request)

    # --- foreground and background ------------------------------------------------------

    def _launch(self, child: _Child, message: Message, req: SubagentRequest, parent: str) -> str:
        assert self.task_manager is not None
        lifecycle, task = self._agent().lifecycle, (child.id, req.description, req.prompt)
        info = self.task_manager.launch(
            lambda: completed(child.agent.run(child.conversation, message), lifecycle, *task),
            name=child.name, kind="subagent", description=req.description,
            role=child.definition.name, task_id=child.id, parent_call=parent,
        )  # fmt: skip
        self._register(child)
        return status_line(info, "async_launched")

    async def _foreground(
        self, ctx: RunContext, child: _Child, message: Message, request: SubagentRequest
    ) -> str:
        queue: asyncio.Queue[Any] = asyncio.Queue()

        async def pump() -> None:
            try:
                async for event in child.agent.run(child.conversation, message):
                    queue.put_nowait(event)
            finally:
                queue.put_nowait(_END)

        runner = asyncio.ensure_future(pump())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.foreground_timeout
        seen: list[AgentEvent] = []
        done: TurnDone | None = None
        try:
            while True:
                try:
                    item = await asyncio.wait_for(queue.get(), max(deadline - loop.time(), 0))
                except TimeoutError:
                    return self._adopt(child, queue, runner, seen, request, ctx.call)
                if item is _END:
                    break
                seen.append(item)
                nest(ctx, item)
                if isinstance(item, TurnDone):
                    done = item
        except asyncio.CancelledError:
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)
            raise
        await runner
        child.counted = usage_of(seen)
        return answer(child.name, done)

    def _adopt(
        self,
        child: _Child,
        queue: asyncio.Queue[Any],
        runner: asyncio.Future[None],
        seen: list[AgentEvent],
        request: SubagentRequest,
        call: ToolUseBlock | None,
    ) -> str:
        assert self.task_manager is not None

        async def rest() -> AsyncIterator[AgentEvent]:
            try:
                while (item := await queue.get()) is not _END:
                    yield item
            finally:
                if not runner.done():
                    runner.cancel()
                    await asyncio.gather(runner, return_exceptions=True)

        child.background = True
        child.counted = usage_of(seen)  # already counted through the parent's turn
        info = self.task_manager.adopt(
            rest, name=child.name, kind="subagent", description=request.description,
            role=child.definition.name, seen=seen, task_id=child.id,
            parent_call=call.id if call is not None else "",
        )  # fmt: skip
        self._register(child)
        return status_line(info, "timed_out_to_background")

    # --- resuming ------------------------------------------------------------------------

    def send(self, name: str, text: str) -> TaskInfo:
        """Resume the completed task ``name`` (or id) with a new message.
        Raises ``KeyError`` (unknown) or ``ValueError`` (not completed)."""
        manager = self.task_manager
        if manager is None:
            raise KeyError(name)
        info = next((i for i in self.tasks() if i.id == name), None)
        if info is None:
            named = [i for i in self.tasks() if i.name == name]
            info = max(named, key=lambda i: i.launched_at) if named else None
        if info is None or info.kind != "subagent":
            raise KeyError(name)
        if info.state != "completed":
            raise ValueError(
                f"task {info.id} ({info.name}) is {info.state}; only a completed task can be resumed"
            )
        child = self._children.get(info.id) or self._rebuild(info)
        message = task_message(text)
        return manager.resume(info.id, lambda: child.agent.run(child.conversation, message))

    def _rebuild(self, info: TaskInfo) -> _Child:
        """A child recorded by an earlier process, from its role and transcript."""
        directory = self._session_dir()
        if directory is None:
            raise KeyError(info.id)
        role = info.role or self._roles.get(info.id, "")
        definition = fork_definition() if role == FORK_NAME else self.catalog.resolve(role)
        if definition is None:
            raise ValueError(f"task {info.id} ran as {role!r}, which is no longer defined")
        request = SubagentRequest(prompt="", description=info.description, name=info.name)
        history = subagent_transcript(directory, info.id).read()
        prompt = self._agent().spec.system_prompt if role == FORK_NAME else None
        child = self._child(
            definition, request, background=True, fork=False, child_id=info.id, history=history,
            system_prompt=prompt,
        )  # fmt: skip
        self._children[info.id] = child
        return child

    def restore(self, infos: list[TaskInfo]) -> None:
        """Take back the subagent tasks a resumed session recorded."""
        for info in infos:
            if info.kind == "subagent":
                self._mine.add(info.id)
                self._roles[info.id] = info.role

    # --- records and notifications ------------------------------------------------------

    def _register(self, child: _Child) -> None:
        self._children[child.id] = child
        self._mine.add(child.id)
        self._roles[child.id] = child.definition.name
        if self._records is not None:
            self._records.track(child.id)

    def _on_update(self, update: TaskUpdate) -> None:
        info = update.task
        if info.id not in self._children or update.event is not None:
            return
        child = self._children[info.id]
        if info.state in FINISHED:
            extra = info.usage - child.counted if child.background else Usage()
            child.counted = info.usage
            self._state.add_usage(extra)
            self._state.add_reminder(self._notification(info))

    def _notification(self, info: TaskInfo) -> str:
        return task_notification(info, self._offload)

    def _offload(self, task_id: str, text: str) -> str | None:
        directory = self._session_dir()
        if directory is None:
            return None
        try:
            session = self._agent()
            path = save_full_text(directory, f"{task_id}-result", session.redactor.redact(text))
        except (OSError, UnsafeWriteError):
            return None
        root = session.ctx.root
        return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
