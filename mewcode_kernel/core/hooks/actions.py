"""Running one hook action: a shell command, a program (exec form), an HTTP
request, a prompt, a subagent or an MCP tool. Each returns a ``Ran``: the
verdict and the output to show.

Shell commands: ``/bin/sh -c COMMAND`` (the exec form: the program and its
arguments as given, no shell, ``$CLAUDE_PROJECT_DIR`` filled in) in the project root, in the session's
OS sandbox when it is active (as ``bash`` runs), in their own process group
(killed whole on timeout or interrupt), with the payload as one line of JSON
on stdin and never anywhere else (it is not put into the command line). The
environment is the one ``bash`` gets (``core.child_env``: an allowlist, no
known secret by any name), plus ``MEWCODE_PROJECT_DIR``,
``CLAUDE_PROJECT_DIR`` and ``MEWCODE_SESSION_ID``, and in the sandbox the
variables that point tools at the hook's own cache folder
(``sandbox.caches``). An exit 2 the sandbox caused is a failure, not a
block (``refusal``).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import re
import signal
import struct
import termios
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from ..child_env import ChildEnv
from ..lifecycle import BLOCKING_EVENTS, HookEvent
from .refusal import refusal_failure, sandbox_refusal
from .rules import Action, get_by_path
from .verdict import Verdict, from_exit, from_json, from_text

__all__ = [
    "OUTPUT_LIMIT",
    "Ran",
    "exec_argv",
    "fill_holes",
    "hook_env",
    "payload_line",
    "run_http",
    "run_mcp_tool",
    "run_shell",
]

#: Characters of a hook's stdout / stderr kept (what is shown and read).
OUTPUT_LIMIT = 64_000
_KILL_GRACE = 1.0

Wrap = Callable[[Sequence[str]], list[str]]
RunSubagent = Callable[[str, str], Awaitable[str]]


@dataclass(kw_only=True)
class Ran:
    verdict: Verdict
    output: str = ""


def payload_line(payload: Mapping[str, Any]) -> str:
    """The payload as hooks get it: one line of JSON, keys sorted."""
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)


def hook_env(root: Path, session_id: str, rule: ChildEnv | None = None) -> dict[str, str]:
    """A hook command's environment under the session's ``rule`` (default:
    no allowlist of the user's, the secrets read from the environment)."""
    where = {
        "MEWCODE_PROJECT_DIR": str(root),
        "CLAUDE_PROJECT_DIR": str(root),
        "MEWCODE_SESSION_ID": session_id,
    }
    return (rule or ChildEnv()).build(configured=where)


def _text(data: bytes) -> str:
    return data[:OUTPUT_LIMIT].decode("utf-8", errors="replace")


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


_PROJECT_VARS = ("CLAUDE_PROJECT_DIR", "MEWCODE_PROJECT_DIR")


def exec_argv(argv: Sequence[str], root: Path) -> list[str]:
    """An exec-form hook's arguments with the project folder filled in
    (``$CLAUDE_PROJECT_DIR``, ``${CLAUDE_PROJECT_DIR}``); nothing else is
    expanded: no shell reads them."""
    out = []
    for arg in argv:
        for var in _PROJECT_VARS:
            arg = arg.replace("${" + var + "}", str(root)).replace("$" + var, str(root))
        out.append(arg)
    return out


async def run_shell(
    command: str | Sequence[str],
    event: HookEvent,
    line: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,  # noqa: ASYNC109 - the rule's limit, also given to the kill
    wrap: Wrap | None,
    network_off: bool = False,
) -> Ran:
    """Run a shell hook (``command`` a string) or a program (an argument
    list); ``wrap``: the sandbox it runs in (an exit 2 it caused is read as
    a failure, ``refusal``)."""
    argv: list[str] = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    if wrap is not None:
        argv = wrap(argv)
    payload = (line + "\n").encode("utf-8", "surrogatepass")
    stdin = _Stdin(payload)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env),
            stdin=stdin.child_end,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        stdin.close()
        return Ran(verdict=Verdict(failure=f"could not start: {exc}"))
    feeding = asyncio.ensure_future(stdin.feed())
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        _kill(proc.pid)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), _KILL_GRACE)
        return Ran(verdict=Verdict(failure=f"timed out after {timeout:g}s"))
    except asyncio.CancelledError:
        _kill(proc.pid)
        raise
    finally:
        if proc.returncode is None:
            _kill(proc.pid)
        feeding.cancel()
        read_any = stdin.read_any()
        stdin.close()
    out, err = _text(stdout), _text(stderr)
    shown = "\n".join(p for p in (out.rstrip(), err.rstrip()) if p)
    code = proc.returncode if proc.returncode is not None else -1
    if code < 0:
        return Ran(verdict=Verdict(failure=f"killed by signal {-code}"), output=shown)
    verdict = from_exit(event, code, out, err)
    if verdict.blocked and wrap is not None and not read_any:
        found = sandbox_refusal(err + "\n" + out, network_off=network_off)
        if found is not None:
            verdict = Verdict(failure=refusal_failure(*found))
    return Ran(verdict=verdict, output=shown)


def _settle(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)


class _Stdin:
    """The pipe a hook reads its event from. MewCode keeps the reading end
    open too, so once the hook has ended, the bytes it left unread are still
    in the pipe to be counted: whether it read its event at all is the
    kernel's count, not anything the hook printed."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.child_end, self._write = os.pipe()
        os.set_blocking(self._write, False)
        self.sent = 0

    async def feed(self) -> None:
        loop = asyncio.get_running_loop()
        while self.sent < len(self.data):
            try:
                self.sent += os.write(self._write, self.data[self.sent :])
            except BlockingIOError:
                ready: asyncio.Future[None] = loop.create_future()
                loop.add_writer(self._write, _settle, ready)
                try:
                    await ready
                finally:
                    loop.remove_writer(self._write)
            except OSError:
                return
        self._close_write()  # the end of the event: the hook sees end of file

    def read_any(self) -> bool:
        """Whether the hook took any byte of its event out of the pipe."""
        try:
            unread = struct.unpack("i", fcntl.ioctl(self.child_end, termios.FIONREAD, b"\0" * 4))
        except OSError:
            return True  # cannot tell: keep the exit code's meaning
        return self.sent - unread[0] > 0

    def _close_write(self) -> None:
        if self._write >= 0:
            os.close(self._write)
            self._write = -1

    def close(self) -> None:
        self._close_write()
        if self.child_end >= 0:
            os.close(self.child_end)
            self.child_end = -1


async def run_http(
    action: Action,
    event: HookEvent,
    payload: Mapping[str, Any],
    timeout: float,  # noqa: ASYNC109
) -> Ran:
    body = action.body.render(payload) if action.body is not None else payload_line(payload)
    headers = dict(action.headers)
    if not any(k.lower() == "content-type" for k in headers):
        headers["Content-Type"] = "application/json"
    try:
        async with httpx2.AsyncClient(timeout=timeout) as client:
            response = await asyncio.wait_for(
                client.request(action.method, action.url, content=body.encode(), headers=headers),
                timeout,
            )
    except TimeoutError:
        return Ran(verdict=Verdict(failure=f"timed out after {timeout:g}s"))
    except httpx2.HTTPError as exc:
        return Ran(verdict=Verdict(failure=f"request failed: {type(exc).__name__}: {exc}"))
    text = response.text[:OUTPUT_LIMIT]
    shown = f"HTTP {response.status_code}" + (f"\n{text.rstrip()}" if text.strip() else "")
    if not 200 <= response.status_code < 300:
        return Ran(verdict=Verdict(failure=f"HTTP {response.status_code}"), output=shown)
    if not text.strip():
        return Ran(verdict=Verdict(), output=shown)
    try:
        data = json.loads(text)
    except ValueError:
        failure = "answered with invalid JSON" if event in BLOCKING_EVENTS else None
        return Ran(verdict=Verdict(failure=failure), output=shown)
    if not isinstance(data, Mapping):
        return Ran(verdict=Verdict(), output=shown)
    verdict = from_json(event, data)
    if verdict.blocked and not verdict.reason:
        verdict.reason = "blocked by http hook"
    return Ran(verdict=verdict, output=shown)


_VERDICT_NOTE = (
    '\n\nAnswer with one JSON object and nothing else: {"ok": true} when the condition '
    'holds, or {"ok": false, "reason": "why not"}.'
)


async def run_subagent(
    action: Action, event: HookEvent, payload: Mapping[str, Any], run: RunSubagent | None
) -> Ran:
    """The subagent's final answer: a JSON object is read like a shell hook's
    output; other text is context for the model's next request."""
    if run is None:
        return Ran(verdict=Verdict(failure="subagents are not available here"))
    line = payload_line(payload)
    if action.verdict:  # Claude Code's agent hook: $ARGUMENTS is the event
        asked = action.prompt.replace("$ARGUMENTS", line)
        if "$ARGUMENTS" not in action.prompt:
            asked += f"\n\nThe {event} event (JSON):\n{line}"
        prompt = asked + _VERDICT_NOTE
    else:
        prompt = f"{action.prompt}\n\nThe {event} event (JSON):\n{line}"
    answer = (await run(action.agent_name, prompt)).strip()
    if answer.startswith("{"):
        try:
            data = json.loads(answer)
        except ValueError:
            data = None
        if isinstance(data, Mapping):
            return Ran(verdict=from_json(event, data), output=answer)
    return Ran(verdict=Verdict(context=[answer] if answer else []), output=answer)


CallTool = Callable[[str, str, dict[str, Any]], Awaitable[str]]
_HOLE = re.compile(r"\$\{([A-Za-z0-9_.]+)\}")


def fill_holes(value: Any, payload: Mapping[str, Any]) -> Any:
    """An mcp_tool hook's ``input`` with each ``${path}`` in its strings
    replaced by the payload's value there (text; missing: empty)."""
    if isinstance(value, str):
        return _HOLE.sub(lambda m: get_by_path(payload, m.group(1)), value)
    if isinstance(value, Mapping):
        return {str(k): fill_holes(v, payload) for k, v in value.items()}
    if isinstance(value, list):
        return [fill_holes(v, payload) for v in value]
    return value


async def run_mcp_tool(
    action: Action, event: HookEvent, payload: Mapping[str, Any], call: CallTool | None
) -> Ran:
    """Call a connected MCP server's tool; its text is read like a command
    hook's stdout (a JSON object decides, other text passes)."""
    if call is None:
        return Ran(verdict=Verdict(failure="MCP tools are not available here"))
    arguments = fill_holes(dict(action.arguments or {}), payload)
    text = (await call(action.server, action.tool, arguments))[:OUTPUT_LIMIT]
    return Ran(verdict=from_text(event, text), output=text)
