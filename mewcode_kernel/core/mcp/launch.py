"""How a stdio MCP server is started: the one place its command, arguments,
environment, working directory and log file are decided.

The environment is the server's own ``env`` over a small allowlist of the
host's variables (``DEFAULT_ENV_ALLOWLIST`` plus the user's
``mcp_env_allowlist``); provider keys and endpoints are never inherited,
even when an allowlist names them. An OS sandbox wraps ``StdioLaunch`` here
(issue: OS sandbox and trust), so nothing else builds a server's process.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..config import McpServerConfig

__all__ = [
    "DEFAULT_ENV_ALLOWLIST",
    "NEVER_INHERITED",
    "StdioLaunch",
    "log_path",
    "stdio_launch",
]

DEFAULT_ENV_ALLOWLIST: tuple[str, ...] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    # Windows needs these to start most programs at all
    "SYSTEMROOT",
    "COMSPEC",
    "PATHEXT",
    "APPDATA",
    "LOCALAPPDATA",
    "USERPROFILE",
)
"""Host variables a stdio server inherits: enough to find and run programs,
nothing that grants access to anything."""

NEVER_INHERITED: frozenset[str] = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_ORG_ID",
        "OPENAI_PROJECT_ID",
    }
)
"""The provider keys and endpoints: never inherited by a server, whatever an
allowlist says. (A server's own ``env`` may still set them explicitly.)"""

_UNSAFE_FILE_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


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


def log_path(root: Path, server: str) -> Path:
    """Where a server's stderr goes: ``.mewcode/logs/mcp-<server>.log``."""
    return root / ".mewcode" / "logs" / f"mcp-{_UNSAFE_FILE_CHARS.sub('_', server)}.log"


def stdio_launch(
    server: McpServerConfig,
    *,
    root: Path,
    host_env: Mapping[str, str],
    allowlist: Iterable[str] = (),
    wrap: Callable[[Sequence[str]], list[str]] | None = None,
) -> StdioLaunch:
    """The process for ``server``: its command and arguments as written (never
    expanded), the allowlisted host variables overlaid by its own ``env``,
    run in the project root, stderr to its log file; ``wrap`` (the OS
    sandbox) turns the command line into the confined one."""
    if server.command is None:
        raise ValueError(f"MCP server {server.name!r} has no command")
    names = dict.fromkeys([*DEFAULT_ENV_ALLOWLIST, *allowlist])
    env = {
        name: host_env[name] for name in names if name in host_env and name not in NEVER_INHERITED
    }
    env.update(server.env)
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
    )
