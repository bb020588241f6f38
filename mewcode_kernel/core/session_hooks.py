"""``SessionHooks``: the hook rules a session runs on its lifecycle events.

It attaches a ``HookEngine`` to the session's lifecycle (subagents share
it), gives the engine the session's way to run a subagent action or an MCP
tool, reads the rule files again when a conversation begins or the project
is trusted, leaves what was rejected or failed late as notices, and fires
what happens between turns (``before_turn``): ``SessionStart``,
``InstructionsLoaded``, ``ConfigChange`` and ``FileChanged``.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from .agent import Agent
from .errors import ToolError
from .events import Notice
from .hooks import HookEngine
from .hooks.watch import FileWatch, settings_files, watched_names
from .lifecycle import HookOutcome, Lifecycle
from .messages import TextBlock, ToolUseBlock
from .tools.base import ToolOutput

__all__ = ["SessionHooks"]


class SessionHooks:
    """The hooks of one session (``engine``: ``None`` when the lifecycle's
    dispatcher is someone else's, or there is none)."""

    def __init__(
        self,
        lifecycle: Lifecycle,
        notify: Callable[[Notice], None],
        run_subagent: Callable[[str, str], Awaitable[str]],
        agent: Callable[[], Agent] | None = None,
    ) -> None:
        self.lifecycle = lifecycle
        self._notify = notify
        self._run_subagent = run_subagent
        self._agent = agent
        self.engine: HookEngine | None = None
        self._watch = FileWatch()

    def use(self, engine: HookEngine) -> None:
        """Run ``engine``'s rules on the lifecycle's events; the rules it
        rejected are said before the next turn."""
        self.engine = engine
        self.lifecycle.dispatcher = engine
        engine.run_subagent = self._run_subagent
        engine.call_tool = self._call_tool if self._agent is not None else None
        engine.on_late = lambda message: self._notify(Notice(level="warning", message=message))
        self._problems(engine.problems())
        self._never(engine)

    def reload(self) -> None:
        """Read the hook files again: a new conversation, or the project was trusted."""
        if self.engine is not None:
            self._problems(self.engine.reload())
            self._never(self.engine)

    async def _call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> str:
        """An mcp_tool hook's call: the session agent's MCP tool, run as the
        agent would run it, except that nobody is asked (the hook's own
        configuration is the approval) while the permission rules' denials
        still hold."""
        assert self._agent is not None
        agent = self._agent()
        name = f"mcp__{server}__{tool}"
        found = agent.tools.get(name)
        if found is None or found.family != "mcp":
            raise ToolError(f"no MCP tool {name} (is the server {server!r} connected?)")
        call = ToolUseBlock(id=f"hook_{uuid.uuid4().hex[:12]}", name=name, input=arguments)
        ctx = agent.context_for(call)
        decision = await agent.gate.check(call, found, ctx)
        if decision.outcome == "deny":
            raise ToolError(f"{name} is denied: {decision.reason}")
        output = await found.call(ctx, arguments)
        if isinstance(output, ToolOutput):
            output = "\n".join(b.text for b in output.content if isinstance(b, TextBlock))
        return agent.redactor.redact(output)

    async def before_turn(
        self, start: str | None, model: str, instructions: list[dict[str, Any]]
    ) -> list[HookOutcome]:
        """The events due before a turn: ``SessionStart`` (``start``: its
        source, ``None`` once started), the instruction files just read, and
        the settings and watched files changed since the last turn."""
        fire = self.lifecycle.fire
        outcomes = [await fire("SessionStart", source=start, model=model)] if start else []
        for payload in instructions:
            outcomes.append(await fire("InstructionsLoaded", **payload))
        engine = self.engine
        if engine is None:
            return outcomes
        files = settings_files(engine.root, engine.home)
        watched = {engine.root / n: "" for n in watched_names(engine.rules)}
        for change in self._watch.changes({**files, **watched}):
            if change.source:
                done = await fire("ConfigChange", source=change.source, file_path=str(change.path))
                if done.blocked:
                    why = f"{change.path.name} changed; hook {done.by} objects: {done.reason}"
                    done = replace(done, messages=(*done.messages, why))
            else:
                done = await fire(
                    "FileChanged",
                    file_path=str(change.path),
                    file_name=change.path.name,
                    event=change.kind,
                )
            outcomes.append(done)
        return outcomes

    def _never(self, engine: HookEngine) -> None:
        for line in engine.hooks.never:
            self._notify(Notice(level="info", message=line))

    async def aclose(self) -> None:
        if self.engine is not None:
            await self.engine.aclose()

    def _problems(self, problems: list[str]) -> None:
        for problem in problems:
            self._notify(Notice(level="warning", message=problem))
