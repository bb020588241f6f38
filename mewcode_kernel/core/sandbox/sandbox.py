"""``Sandbox``: a session's OS sandbox, and the one function every spawner
calls (``Sandbox.wrap``): the ``bash`` tool, hook commands, stdio MCP
servers.

It holds the session's ``sandbox`` settings, what bubblewrap can do here
(``detect``), and where the paths to hide come from (the permission rules,
read when a process starts, so a rule added during the session counts).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ..config import SandboxSettings
from .bwrap import SandboxPolicy, bwrap_argv
from .detect import SandboxSupport, detect

__all__ = ["PROTECTED", "Sandbox", "SandboxState"]

#: Paths below the root a sandboxed process may read but never change: what
#: runs or is trusted later, outside the sandbox (git hooks and config,
#: MewCode's and Claude's settings, skills and agents, direnv files).
PROTECTED: tuple[str, ...] = (
    ".git/hooks",
    ".git/config",
    ".mewcode.yaml",
    ".mewcode/settings.local.yaml",
    ".mewcode/hooks.yaml",
    ".mewcode/skills",
    ".mewcode/agents",
    ".claude",
    ".mcp.json",
    ".envrc",
)

SandboxState = Literal["active", "disabled", "unavailable"]


@dataclass(frozen=True, kw_only=True, slots=True)
class _Status:
    state: SandboxState
    reason: str


class Sandbox:
    """The OS sandbox of one session.

    ``wrap(argv)`` returns the command line to spawn: ``argv`` inside
    bubblewrap when the sandbox is ``active``, ``argv`` itself otherwise.
    ``hidden_paths`` (set by the session) lists the paths the ``Read(...)``
    deny rules cover now. ``notice()`` says once per session that commands
    run unsandboxed when bubblewrap is missing or cannot start.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        settings: SandboxSettings | None = None,
        *,
        support: SandboxSupport | None = None,
        env: Mapping[str, str] | None = None,
        hidden_paths: Callable[[], Iterable[str]] | None = None,
    ) -> None:
        self.root = os.path.realpath(root)
        self.settings = settings or SandboxSettings()
        if support is None:
            support = (
                detect(env)
                if self.settings.enabled
                else SandboxSupport(available=False, reason="sandbox.enabled is false")
            )
        self.support = support
        self.hidden_paths: Callable[[], Iterable[str]] = hidden_paths or tuple
        self._noticed = False

    @classmethod
    def off(cls, root: str | os.PathLike[str], reason: str = "no sandbox") -> Sandbox:
        """A sandbox that wraps nothing (for callers without a session)."""
        return cls(
            root,
            SandboxSettings(enabled=False),
            support=SandboxSupport(available=False, reason=reason),
        )

    @property
    def active(self) -> bool:
        return self.settings.enabled and self.support.available

    @property
    def status(self) -> _Status:
        if not self.settings.enabled:
            return _Status(state="disabled", reason="sandbox.enabled is false in the config")
        if not self.support.available:
            return _Status(state="unavailable", reason=self.support.reason)
        return _Status(state="active", reason=self.support.version or "bubblewrap")

    def policy(self) -> SandboxPolicy:
        """What a sandboxed process may touch, as of now."""
        writable = [self.root, *(os.fspath(p) for p in self.settings.allow_write)]
        readonly = [os.path.join(self.root, rel) for rel in PROTECTED]
        hidden = [h for h in dict.fromkeys(self.hidden_paths()) if self._hideable(h, writable)]
        temp = ["/tmp"]
        system_temp = os.path.realpath(tempfile.gettempdir())
        if system_temp not in ("/tmp", "/"):
            temp.append(system_temp)  # the writable binds come after, so a root inside stays
        return SandboxPolicy(
            writable=tuple(writable),
            readonly=tuple(readonly),
            hidden=tuple(hidden),
            temp_dirs=tuple(temp),
            network=self.settings.network,
        )

    def wrap(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        read_only: bool = False,
    ) -> list[str]:
        """The command line that runs ``argv`` (in ``cwd``) inside the sandbox,
        or ``argv`` unchanged when the sandbox is not active. ``read_only``
        (a read-only role): nothing but the private temp dir is writable."""
        if not self.active:
            return list(argv)
        assert self.support.bwrap is not None
        where = os.path.realpath(cwd) if cwd is not None else self.root
        policy = self.policy()
        if read_only:
            policy = dataclasses.replace(policy, read_only=True)
        shown = _named_temp_paths(argv, policy)
        if shown:
            policy = dataclasses.replace(policy, shown=shown)
        return bwrap_argv(self.support.bwrap, policy, argv, cwd=where)

    def notice(self) -> str | None:
        """Once per session: why commands run unsandboxed (``None`` otherwise,
        and when the user turned the sandbox off)."""
        if self._noticed or self.active or not self.settings.enabled:
            return None
        self._noticed = True
        return (
            f"Commands run without the OS sandbox: {self.support.reason}. "
            "Only the permission checks stand between them and your files."
        )

    @staticmethod
    def _holds_writable(path: str, writable: list[str]) -> bool:
        return any(w == path or w.startswith(path.rstrip("/") + "/") for w in writable)

    def _hideable(self, path: str, writable: list[str]) -> bool:
        # hiding an ancestor of a writable directory would hide the project itself
        return os.path.isabs(path) and not self._holds_writable(path, writable)

    def describe(self) -> dict[str, object]:
        """The state, for ``/sandbox``."""
        status = self.status
        policy = self.policy()
        return {
            "state": status.state,
            "reason": status.reason,
            "bwrap": self.support.bwrap,
            "network": self.settings.network,
            "writable": [*policy.writable, *policy.temp_dirs],
            "readonly": [p for p in policy.readonly if os.path.lexists(p)],
            "hidden": list(policy.hidden),
            "ignored": list(self.settings.ignored),
        }


def _named_temp_paths(argv: Sequence[str], policy: SandboxPolicy) -> tuple[str, ...]:
    """What under a private temp dir a command cannot start without: this
    interpreter's environment (a venv made in a clone under /tmp) and the
    absolute paths its command line names (an MCP server's program and
    script). Each is shown read-only as the whole top folder holding it in the
    temp dir (a script imports its neighbours; node looks for node_modules up
    the tree). A ``bash -c`` string names nothing here, so commands keep a
    private /tmp; hidden paths are bound last, so a deny rule still wins."""
    temps = [t.rstrip("/") for t in policy.temp_dirs]
    wanted = [sys.prefix, sys.base_prefix]
    for arg in argv:
        if os.path.isabs(arg) and os.path.lexists(arg):
            wanted += [arg, os.path.realpath(arg)]
    out: list[str] = []
    for path in wanted:
        path = os.path.normpath(path)
        for temp in temps:
            if path.startswith(temp + "/"):
                top = path[len(temp) + 1 :].split("/", 1)[0]
                out.append(f"{temp}/{top}")
    return tuple(dict.fromkeys(out))
