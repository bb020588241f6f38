"""``HookEngine``: the ``LifecycleDispatcher`` that runs the user's hook rules.

For each event, the rules for it run in order (project file, user file,
Claude Code settings), each when its condition (or Claude Code matcher)
holds and, for ``only_once`` rules, only the first time in a session. The
first rule that blocks a blocking event ends that event's rules. A hook that
fails (exit code, timeout, crash, bad JSON, HTTP error) passes: the cell
says so in one line and ``/hooks`` counts it. ``async`` rules run detached:
they never block or add anything, and are cancelled when the engine closes
(kernel shutdown).
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..child_env import ChildEnv
from ..events import HookRan
from ..fs import Workspace
from ..lifecycle import (
    BLOCKING_EVENTS,
    FEEDBACK_EVENTS,
    NOTHING,
    STOP_EVENTS,
    HookEvent,
    HookOutcome,
)
from ..sandbox import Sandbox, cache_owner
from ..tools.base import Tool
from ..trust import script_digest
from .actions import (
    CallTool,
    Ran,
    RunSubagent,
    exec_argv,
    hook_env,
    payload_line,
    run_http,
    run_mcp_tool,
    run_shell,
    run_subagent,
)
from .if_filter import call_matches
from .loader import HookSet, load_hooks
from .rules import HookRule
from .verdict import Verdict

__all__ = ["HookEngine", "RuleStats"]

#: Set while a hook's subagent runs: its own tool calls fire events too, and a
#: subagent action there would start another subagent, and so on.
_IN_HOOK_AGENT: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "mewcode_in_hook_agent", default=False
)
_SHOWN_OUTPUT = 8_000


@dataclass(kw_only=True)
class RuleStats:
    """What ``/hooks`` shows of one rule: runs, failures, the last outcomes."""

    runs: int = 0
    failures: int = 0
    last: deque[str] = field(default_factory=lambda: deque(maxlen=3))


#: Claude Code's notebook tools, whose input names the file ``notebook_path``
_NOTEBOOK_TOOLS = frozenset({"NotebookEdit", "NotebookRead"})


class HookEngine:
    """Runs the rules ``load_hooks(root, home=home)`` finds (see ``reload``).

    ``sandbox`` gives the session's OS sandbox of the moment; ``child_env`` its
    rule for the environment of hook commands; ``redact`` takes secrets out
    of what hooks print; ``tools`` finds a tool by name (for
    Claude Code matchers and payloads); ``run_subagent(name, prompt)`` runs a
    subagent and returns its answer; ``on_late`` receives the notices of
    async rules, which finish after their event.
    """

    def __init__(
        self,
        root: Path,
        *,
        home: Path | None = None,
        sandbox: Callable[[], Sandbox | None] = lambda: None,
        child_env: Callable[[], ChildEnv | None] = lambda: None,
        redact: Callable[[str], str] = lambda text: text,
        tools: Callable[[str], Tool | None] = lambda name: None,
        workspace: Callable[[], Workspace] | None = None,
        run_subagent: RunSubagent | None = None,
        on_late: Callable[[str], None] | None = None,
        loader: Callable[..., HookSet] = load_hooks,
    ) -> None:
        self.root = root
        self.home = home
        self._sandbox = sandbox
        self._child_env = child_env
        self._redact = redact
        self._tools = tools
        #: the session's path resolver (the tools' and the permission gate's)
        self._workspace = workspace or (lambda: Workspace(self.root))
        self.run_subagent = run_subagent
        #: ``(server, tool, arguments)`` -> text: an mcp_tool hook's call
        self.call_tool: CallTool | None = None
        self.on_late = on_late
        self._loader = loader
        self.hooks = HookSet()
        self.stats: dict[str, RuleStats] = {}
        self._once: set[str] = set()
        self._detached: set[asyncio.Task[None]] = set()
        self.reload()

    # --- rules ------------------------------------------------------------------------

    @property
    def rules(self) -> list[HookRule]:
        return self.hooks.rules

    def reload(self) -> list[str]:
        """Read the hook files again (a new session, the project trusted);
        returns the problems, one line each."""
        self.hooks = self._loader(self.root, home=self.home)
        return self.problems()

    def problems(self) -> list[str]:
        return [str(p) for p in self.hooks.problems]

    def stats_for(self, rule: HookRule) -> RuleStats:
        return self.stats.setdefault(rule.name, RuleStats())

    # --- the LifecycleDispatcher protocol --------------------------------------------

    def reset(self) -> None:
        self._once.clear()

    async def dispatch(self, event: HookEvent, payload: Mapping[str, Any]) -> HookOutcome:
        rules = [r for r in self.hooks.rules if r.event == event]
        if not rules:
            return NOTHING
        blocking = event in BLOCKING_EVENTS or event in STOP_EVENTS
        runs: list[HookRan] = []
        warnings: list[str] = []
        messages: list[str] = []
        context: list[str] = []
        verdicts: list[tuple[HookRule, Verdict]] = []
        blocked_by: tuple[HookRule, Verdict] | None = None
        for rule in rules:
            if rule.only_once and rule.name in self._once:
                continue
            if rule.action.type == "subagent" and _IN_HOOK_AGENT.get():
                continue
            view = self._view(rule, payload)
            if not self._applies(rule, payload, view):
                continue
            if rule.only_once:
                self._once.add(rule.name)
            if rule.run_async:
                self._detach(rule, event, view)
                runs.append(HookRan(event=event, name=rule.name, outcome="started", seconds=0.0))
                continue
            started = time.perf_counter()
            ran = await self._run(rule, event, view)
            seconds = time.perf_counter() - started
            verdict = ran.verdict
            self._record(rule, verdict)
            runs.append(self._row(rule, event, ran, seconds))
            if verdict.failure is not None:
                warnings.append(self._failed(rule, event, verdict.failure))
                continue
            if verdict.message:
                messages.append(f"[hook {rule.name}] {self._redact(verdict.message)}")
            context += [self._redact(c) for c in verdict.context]
            verdicts.append((rule, verdict))
            if verdict.blocked and (blocking or event in FEEDBACK_EVENTS):
                blocked_by = (rule, verdict)
                if blocking:
                    break  # the first block ends this event's rules
        return self._outcome(
            event, payload, verdicts, blocked_by, context, messages, warnings, runs
        )

    async def aclose(self) -> None:
        """Cancel the async rules still running (kernel shutdown)."""
        detached, self._detached = list(self._detached), set()
        for task in detached:
            task.cancel()
        if detached:
            await asyncio.gather(*detached, return_exceptions=True)

    # --- helpers -----------------------------------------------------------------------

    def _outcome(
        self,
        event: HookEvent,
        payload: Mapping[str, Any],
        verdicts: list[tuple[HookRule, Verdict]],
        blocked_by: tuple[HookRule, Verdict] | None,
        context: list[str],
        messages: list[str],
        warnings: list[str],
        runs: list[HookRan],
    ) -> HookOutcome:
        updated: dict[str, Any] | None = None
        permission: Any = None
        permission_by, permission_reason = "", ""
        stop, stop_reason = False, ""
        rank = {"allow": 1, "ask": 2, "deny": 3}  # the strictest decision wins
        updated_by = ""
        for rule, v in verdicts:
            if v.updated_input is not None and event in ("PreToolUse", "PermissionRequest"):
                updated = self._input_back(rule, payload, v.updated_input)
                updated_by = rule.name
            if v.stop and not stop:
                stop, stop_reason = True, self._redact(v.stop_reason) or f"hook {rule.name}"
        for rule, v in verdicts:
            if v.permission is None or event not in ("PreToolUse", "PermissionRequest"):
                continue
            if v.permission == "allow" and updated is not None and rule.name != updated_by:
                # every rule judged the original input: an allow is not carried
                # over to input another hook rewrote (the gate decides it afresh)
                continue
            if permission is None or rank[v.permission] > rank[permission]:
                permission, permission_by = v.permission, rule.name
                permission_reason = self._redact(v.permission_reason)
        blocked, reason, by = False, "", ""
        if blocked_by is not None:
            rule, v = blocked_by
            blocked, reason = True, self._redact(v.reason) or "blocked by hook"
            by = rule.name
        elif permission is not None:
            by = permission_by
        return HookOutcome(
            blocked=blocked,
            reason=reason,
            by=by,
            context=tuple(context),
            updated_input=updated,
            permission=permission,
            permission_reason=permission_reason,
            stop=stop,
            stop_reason=stop_reason,
            messages=tuple(messages),
            warnings=tuple(warnings),
            runs=tuple(runs),
        )

    def _applies(self, rule: HookRule, payload: Mapping[str, Any], view: Mapping[str, Any]) -> bool:
        if rule.condition is not None and not rule.condition.holds(view):
            return False
        if rule.when is not None and not self._when(rule, payload):
            return False
        if rule.pattern is None:
            return True
        value = str(payload.get(rule.pattern_field, "") or "")
        names = {value}
        if rule.pattern_field == "tool_name":
            tool = self._tools(value)
            if tool is not None:
                names |= set(tool.aliases)
        return any(rule.pattern.fullmatch(n) for n in names)

    def _when(self, rule: HookRule, payload: Mapping[str, Any]) -> bool:
        """Whether the call of a tool event matches the rule's ``if``."""
        assert rule.when is not None
        name = str(payload.get("tool_name") or "")
        args = payload.get("tool_input")
        tool = self._tools(name)
        arguments = args if isinstance(args, Mapping) else {}
        return call_matches(rule.when, tool, name, arguments, self._workspace())

    def _view(self, rule: HookRule, payload: Mapping[str, Any]) -> Mapping[str, Any]:
        """The payload as ``rule`` sees it: Claude Code's rules get Claude Code's
        tool names and ``file_path`` (absolute), beside the fields of MewCode."""
        if not rule.claude or "tool_name" not in payload:
            return payload
        tool = self._tools(str(payload["tool_name"]))
        view = dict(payload)
        if tool is not None and tool.aliases:
            view["tool_name"] = sorted(tool.aliases)[0]
        args = payload.get("tool_input")
        path = ""
        if isinstance(args, Mapping) and isinstance(args.get("path"), str):
            # resolved by the tools' own resolver, so a guard comparing against
            # $CLAUDE_PROJECT_DIR is not fooled by "../", "~" or a link
            path = self._workspace().resolve(args["path"]).path
            if "file_path" not in args:
                view["tool_input"] = {**args, "file_path": path}
                if view["tool_name"] in _NOTEBOOK_TOOLS:  # Claude Code names it so there
                    view["tool_input"]["notebook_path"] = path
        if "tool_response" in payload:
            # Claude Code's hooks read the response as an object
            text = str(payload.get("tool_response") or "")
            response: dict[str, Any] = {"success": not payload.get("is_error"), "output": text}
            response["stdout" if not path else "filePath"] = text if not path else path
            view["tool_response"] = response
        return view

    def _input_back(
        self, rule: HookRule, payload: Mapping[str, Any], updated: dict[str, Any]
    ) -> dict[str, Any]:
        """A Claude Code hook's ``updatedInput`` in the tool's own argument names."""
        original = payload.get("tool_input")
        if not rule.claude or not isinstance(original, Mapping):
            return updated
        updated = dict(updated)
        given = [
            updated.pop(name)
            for name in ("notebook_path", "file_path")
            if name in updated and name not in original
        ]
        if given and "path" in original:
            # the hook's own change wins over the path it was shown and echoed
            shown = self._workspace().resolve(str(original["path"])).path
            updated["path"] = next((g for g in given if g != shown), given[0])
        return updated

    async def _run(self, rule: HookRule, event: HookEvent, payload: Mapping[str, Any]) -> Ran:
        action = rule.action
        try:
            if action.type in ("shell", "exec"):
                changed = _changed_script(rule.scripts_root or self.root, rule.scripts)
                if changed is not None:
                    return Ran(
                        verdict=Verdict(
                            failure=f"not run: {changed} changed since you trusted this project "
                            "(/trust shows it; trust it again to run this hook)"
                        )
                    )
                sandbox = self._sandbox()
                wrap = None
                env = hook_env(self.root, str(payload.get("session_id") or ""), self._child_env())
                env = {**env, **dict(rule.env)}
                network_off = False
                if sandbox is not None and sandbox.active:
                    # the user's hooks and each project's keep their own tool cache
                    cache = sandbox.tool_cache(cache_owner("hooks", rule.scope, root=self.root))
                    if cache is not None:
                        env = {**env, **cache.env()}
                    wrap = lambda argv: sandbox.wrap(argv, cwd=self.root, cache=cache)  # noqa: E731
                    network_off = sandbox.settings.network == "off"
                command = (
                    action.command if action.type == "shell" else exec_argv(action.argv, self.root)
                )
                return await run_shell(
                    command,
                    event,
                    payload_line(payload),
                    cwd=self.root,
                    env=env,
                    timeout=rule.timeout,
                    wrap=wrap,
                    network_off=network_off,
                )
            if action.type == "prompt":
                return Ran(verdict=Verdict(context=[action.text]))
            if action.type == "http":
                return await run_http(action, event, payload, rule.timeout)
            if action.type == "mcp_tool":
                return await asyncio.wait_for(
                    run_mcp_tool(action, event, payload, self.call_tool), rule.timeout
                )
            return await asyncio.wait_for(
                run_subagent(action, event, payload, self._subagent), rule.timeout
            )
        except TimeoutError:
            return Ran(verdict=Verdict(failure=f"timed out after {rule.timeout:g}s"))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a hook's failure must never break the turn
            return Ran(verdict=Verdict(failure=f"crashed: {type(exc).__name__}: {exc}"))

    @property
    def _subagent(self) -> RunSubagent | None:
        run = self.run_subagent
        if run is None:
            return None

        async def guarded(name: str, prompt: str) -> str:
            token = _IN_HOOK_AGENT.set(True)
            try:
                return await run(name, prompt)
            finally:
                _IN_HOOK_AGENT.reset(token)

        return guarded

    def _detach(self, rule: HookRule, event: HookEvent, payload: Mapping[str, Any]) -> None:
        async def go() -> None:
            ran = await self._run(rule, event, payload)
            self._record(rule, ran.verdict)
            if ran.verdict.failure is not None and self.on_late is not None:
                self.on_late(self._failed(rule, event, ran.verdict.failure))

        task = asyncio.ensure_future(go())
        self._detached.add(task)
        task.add_done_callback(self._detached.discard)

    def _record(self, rule: HookRule, verdict: Verdict) -> None:
        stats = self.stats_for(rule)
        stats.runs += 1
        if verdict.failure is not None:
            stats.failures += 1
            stats.last.append(f"failed: {self._redact(verdict.failure)}")
        else:
            stats.last.append(verdict.outcome)

    def _row(self, rule: HookRule, event: HookEvent, ran: Ran, seconds: float) -> HookRan:
        v = ran.verdict
        detail = v.failure or (v.reason if v.blocked else "") or v.permission_reason
        output = self._redact(ran.output)
        if len(output) > _SHOWN_OUTPUT:
            output = (
                output[:_SHOWN_OUTPUT] + f"\n… ({len(output) - _SHOWN_OUTPUT:,} more characters)"
            )
        return HookRan(
            event=event,
            name=rule.name,
            outcome=v.outcome,
            seconds=seconds,
            detail=self._redact(detail),
            output=output,
        )

    def _failed(self, rule: HookRule, event: HookEvent, why: str) -> str:
        return f"Hook {rule.name} ({event}) failed: {self._redact(why)}; it was ignored."


def _changed_script(root: Path, scripts: tuple[tuple[str, str], ...]) -> str | None:
    """The first of a hook's trusted scripts whose content is not what was
    trusted any more (``None``: all as trusted)."""
    for rel, digest in scripts:
        if script_digest(root, rel) != digest:
            return rel
    return None
