"""How a stdio MCP server is started: the one place its command, arguments,
environment, working directory and log file are decided.

The environment is built by ``core.child_env``, as for every process
MewCode starts: the allowlisted host variables (``DEFAULT_ENV_ALLOWLIST``,
the user's ``env_allowlist`` and ``mcp_env_allowlist``) without provider keys
and endpoints and without any variable holding a known secret, whatever an
allowlist says; then the server's own ``env`` as written (the user's or a
trusted project's configuration). An OS sandbox wraps ``StdioLaunch`` here,
so nothing else builds a server's process. What the server prints on
stderr goes to its log file through the session's redactor (``transport``).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ..child_env import DEFAULT_ALLOWLIST, NEVER_INHERITED, ChildEnv
from ..config import McpServerConfig
from ..redaction import Redactor
from ..sandbox import Sandbox, cache_owner
from ..sandbox.refusals import sandbox_refusal
from .log_file import log_path

__all__ = [
    "DEFAULT_ENV_ALLOWLIST",
    "NEVER_INHERITED",
    "StdioLaunch",
    "log_path",
    "sandbox_hint",
    "stdio_launch",
]

DEFAULT_ENV_ALLOWLIST = DEFAULT_ALLOWLIST
"""Host variables a stdio server inherits (``core.child_env``'s, for every process)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class StdioLaunch:
    """A stdio server's process, fully described."""

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: Path
    log_path: Path
    #: the server's own command, as configured (``command`` is bubblewrap when sandboxed)
    program: str = ""
    sandboxed: bool = False
    #: takes known secrets out of what the server prints to its log
    redactor: Redactor = field(default_factory=Redactor, repr=False)


def stdio_launch(
    server: McpServerConfig,
    *,
    root: Path,
    host_env: Mapping[str, str],
    allowlist: Iterable[str] = (),
    wrap: Callable[[Sequence[str]], list[str]] | None = None,
    rule: ChildEnv | None = None,
    sandbox: Sandbox | None = None,
) -> StdioLaunch:
    """The process for ``server``: its command and arguments as written (never
    expanded), the host variables ``rule`` (the session's, default: the
    secrets of ``host_env``) lets through with ``allowlist`` (the user's
    ``mcp_env_allowlist``) overlaid by its own ``env``, run in the project
    root, stderr to its log file (through ``rule``'s redactor); ``wrap``
    (the OS sandbox) turns the command line into the confined one;
    ``sandbox`` (the session's, in place of ``wrap``) also gives the server
    a tool cache folder of its own (``sandbox.caches``: ``npx`` installs and
    the packages' own files there), which the server's ``env`` may override."""
    if server.command is None:
        raise ValueError(f"MCP server {server.name!r} has no command")
    if rule is None or rule.secrets is None:
        host = dict(host_env)
        rule = ChildEnv(rule.allowlist if rule else (), Redactor.from_environment(host))
    configured = dict(server.env)
    if sandbox is not None and sandbox.active:
        owner = cache_owner("mcp", server.scope, root=root, name=server.name)
        cache = sandbox.tool_cache(owner)
        if cache is not None:
            configured = {**cache.env(), **configured}
        wrap = partial(sandbox.wrap, cache=cache)
    env = rule.build(host_env, allowlist=allowlist, configured=configured)
    argv = [server.command, *server.args]
    # a command that is not there fails to start unwrapped, with its own clear
    # error, rather than as a sandbox that exits at once
    sandboxed = wrap is not None and shutil.which(server.command, path=env.get("PATH")) is not None
    if sandboxed:
        wrapped = wrap(argv)  # type: ignore[misc]
        sandboxed = wrapped != argv  # an inactive sandbox leaves it as it is
        argv = wrapped
    return StdioLaunch(
        command=argv[0],
        args=tuple(argv[1:]),
        program=server.command,
        sandboxed=sandboxed,
        env=env,
        cwd=root,
        log_path=log_path(root, server.name),
        redactor=rule.secrets or Redactor(),
    )


_LOG_TAIL = 8_000


def sandbox_hint(launch: StdioLaunch | None, *, network_off: bool) -> str:
    """For a sandboxed server that failed: the line of its log naming an error
    the sandbox causes, and the setting that lets it through (``""`` if none)."""
    if launch is None or not launch.sandboxed:
        return ""
    try:
        with open(launch.log_path, "rb") as log:
            log.seek(0, 2)
            log.seek(max(0, log.tell() - _LOG_TAIL))
            tail = log.read().decode("utf-8", "replace")
    except OSError:
        return ""
    found = sandbox_refusal(tail, network_off=network_off)
    if found is None:
        return ""
    line, kind = found
    if kind == "network":
        return f" (in the sandbox: {line}; the network is off, sandbox.network: on lets it out)"
    return (
        f" (in the sandbox: {line}; a server may write the project, /tmp and its own cache "
        "folder, npm_config_cache and XDG_CACHE_HOME: point its state there with its env, or "
        "add the folder to sandbox.allow_write in ~/.mewcode/config.yaml)"
    )
