"""Running one hook action: a shell command, an HTTP request, a prompt or a
subagent. Each returns a ``Ran``: the verdict and the output to show.

Shell commands: ``/bin/sh -c COMMAND`` in the project root, in the session's
OS sandbox when it is active (as ``bash`` runs), in their own process group
(killed whole on timeout or interrupt), with the payload as one line of JSON
on stdin and never anywhere else (it is not put into the command line). The
environment is the one ``bash`` gets (``core.child_env``: an allowlist, no
known secret by any name), plus ``MEWCODE_PROJECT_DIR``,
``CLAUDE_PROJECT_DIR`` and ``MEWCODE_SESSION_ID``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from ..child_env import ChildEnv
from ..lifecycle import BLOCKING_EVENTS, HookEvent
from .rules import Action
from .verdict import Verdict, from_exit, from_json

__all__ = ["OUTPUT_LIMIT", "Ran", "hook_env", "payload_line", "run_http", "run_shell"]

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


async def run_shell(
    command: str,
    event: HookEvent,
    line: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,  # noqa: ASYNC109 - the rule's limit, also given to the kill
    wrap: Wrap | None,
) -> Ran:
    argv: list[str] = ["/bin/sh", "-c", command]
    if wrap is not None:
        argv = wrap(argv)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return Ran(verdict=Verdict(failure=f"could not start: {exc}"))
    try:
        stdout, stderr = await asyncio.wait_for(
            proc.communicate((line + "\n").encode("utf-8", "surrogatepass")), timeout
        )
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
    out, err = _text(stdout), _text(stderr)
    shown = "\n".join(p for p in (out.rstrip(), err.rstrip()) if p)
    code = proc.returncode if proc.returncode is not None else -1
    if code < 0:
        return Ran(verdict=Verdict(failure=f"killed by signal {-code}"), output=shown)
    return Ran(verdict=from_exit(event, code, out, err), output=shown)


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


async def run_subagent(
    action: Action, event: HookEvent, payload: Mapping[str, Any], run: RunSubagent | None
) -> Ran:
    """The subagent's final answer: a JSON object is read like a shell hook's
    output; other text is context for the model's next request."""
    if run is None:
        return Ran(verdict=Verdict(failure="subagents are not available here"))
    prompt = f"{action.prompt}\n\nThe {event} event (JSON):\n{payload_line(payload)}"
    answer = (await run(action.agent_name, prompt)).strip()
    if answer.startswith("{"):
        try:
            data = json.loads(answer)
        except ValueError:
            data = None
        if isinstance(data, Mapping):
            return Ran(verdict=from_json(event, data), output=answer)
    return Ran(verdict=Verdict(context=[answer] if answer else []), output=answer)
