"""``Sandbox``: a session's OS sandbox, and the one function every spawner
calls (``Sandbox.wrap``): the ``bash`` tool, hook commands, stdio MCP
servers, run_python's child processes.

It holds the session's ``sandbox`` settings, what bubblewrap can do here
(``detect``), where the paths to hide come from (the permission rules,
read when a process starts, so a rule added during the session counts), and
the user's MewCode folder, which no sandboxed process may read or change.
What is protected is worked out when each process starts (``protect.py``,
``sockets.py``); a command that needs placeholders or the seccomp filter
is started through the launcher (``launcher.py``).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..config import SandboxSettings
from ..project_paths import PROTECTED_PATHS, WATCHED_PATHS
from ..userdirs import mewcode_home
from .bwrap import SandboxPolicy, bwrap_argv
from .caches import ToolCache, tool_cache
from .detect import SandboxSupport, detect
from .launcher import launcher_argv
from .leases import LeaseError, Leases, Placeholder, default_lease_dir
from .protect import Protection, UserState, inside, project_protection, user_state
from .sockets import SocketPolicy, socket_policy

__all__ = ["PROTECTED", "Sandbox", "SandboxState"]

#: Paths below the root a sandboxed process may read but never create or
#: change: ``project_paths.PROTECTED_PATHS`` (what loaders read and what runs
#: later outside the sandbox), and MewCode's project folder as a whole, so
#: MewCode can rewrite a file in it (an always-allow rule) while a server
#: runs without the file's own read-only mount coming off.
PROTECTED: tuple[str, ...] = (*PROTECTED_PATHS, ".mewcode")

SandboxState = Literal["active", "disabled", "unavailable"]


@dataclass(frozen=True, kw_only=True, slots=True)
class _Status:
    state: SandboxState
    reason: str


@dataclass(frozen=True, kw_only=True, slots=True)
class _Plan:
    """Everything one process start needs: the mounts, the placeholders the
    launcher makes, the socket policy, and what could not be protected."""

    policy: SandboxPolicy
    placeholders: tuple[Placeholder, ...] = ()
    watched: tuple[str, ...] = ()
    sockets: SocketPolicy = field(default_factory=lambda: SocketPolicy(mode="open", seccomp=None))
    protection: Protection = field(default_factory=Protection)
    user: UserState = field(default_factory=UserState)


class Sandbox:
    """The OS sandbox of one session.

    ``wrap(argv)`` returns the command line to spawn: ``argv`` inside
    bubblewrap when the sandbox is ``active``, ``argv`` itself otherwise.
    ``hidden_paths`` (set by the session) lists the paths the ``Read(...)``
    deny rules cover now. ``home`` is the session's home (its MewCode folder
    is ``mewcode_home(home)``); the one ``MEWCODE_HOME`` names is hidden too.
    ``notice()`` says once per session that commands run unsandboxed when
    bubblewrap is missing or cannot start.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        settings: SandboxSettings | None = None,
        *,
        support: SandboxSupport | None = None,
        env: Mapping[str, str] | None = None,
        hidden_paths: Callable[[], Iterable[str]] | None = None,
        home: Path | None = None,
        lease_dir: str | None = None,
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
        self.env: Mapping[str, str] = os.environ if env is None else env
        found = [mewcode_home(home), mewcode_home(env=self.env)]
        self.user_dirs: tuple[str, ...] = tuple(
            dict.fromkeys(os.path.abspath(p) for p in found if p is not None)
        )
        #: where the tool caches of the user's own programs live (``caches.py``)
        self.state_dir = Path(self.user_dirs[0]) if self.user_dirs else None
        self.leases = Leases(lease_dir or default_lease_dir())
        self._noticed = False
        if self.active:
            try:
                self.leases.ensure()  # before any process runs, so every one hides it
                self.leases.sweep()  # placeholders left by a janitor that was killed
            except (OSError, LeaseError):
                pass  # the launcher says why when a command needs it

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

    def policy(self, *, read_only: bool = False) -> SandboxPolicy:
        """What a sandboxed process may touch, as of now."""
        return self._plan(read_only).policy

    def tool_cache(self, owner: str) -> ToolCache | None:
        """The cache folder of one of the user's own programs (``cache_owner``:
        the user's hooks, a project's hooks, an MCP server), made if needed;
        ``None`` when the sandbox is not active (the program runs as it is,
        with the user's own caches) or no folder can be made."""
        if not self.active:
            return None
        return tool_cache(self.state_dir, owner)

    def _plan(self, read_only: bool, cache: ToolCache | None = None) -> _Plan:
        writable = [self.root, *(os.fspath(p) for p in self.settings.allow_write)]
        temp = ["/tmp"]
        system_temp = os.path.realpath(tempfile.gettempdir())
        if system_temp not in ("/tmp", "/"):
            temp.append(system_temp)  # the writable binds come after, so a root inside stays
        standin = self.leases.is_placeholder
        state = user_state(
            [*self.user_dirs, self.leases.directory], [] if read_only else writable, standin
        )
        hidden_dirs = state.hidden
        protection = state.protection
        if not read_only:
            protection = protection + project_protection(
                self.root, entries=PROTECTED, skip=hidden_dirs, standin=standin
            )
        sockets = socket_policy(
            self.settings.network,
            [os.fspath(p) for p in self.settings.allow_unix_sockets],
            env=self.env,
            skip=[*temp, *hidden_dirs],
        )
        hidden = [
            h
            for h in dict.fromkeys(self.hidden_paths())
            if self._hideable(h, writable) and _outside_user_state(h, state)
        ]
        placeholders = () if read_only else protection.placeholders
        watched, existing = ((), ()) if read_only else _watched(self.root)
        policy = SandboxPolicy(
            writable=tuple(writable),
            readonly=protection.readonly + existing,
            pinned=protection.pinned,
            placeholders=tuple(p.path for p in placeholders),
            sockets=sockets.hidden,
            user_state=state.hidden,
            user_shown=state.shown,
            user_writable=(cache.path,) if cache is not None and not read_only else (),
            user_files=state.files,
            hidden=tuple(hidden),
            temp_dirs=tuple(temp),
            network=self.settings.network,
            read_only=read_only,
        )
        return _Plan(
            policy=policy,
            placeholders=placeholders,
            watched=watched,
            sockets=sockets,
            protection=protection,
            user=state,
        )

    def wrap(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        read_only: bool = False,
        cache: ToolCache | None = None,
    ) -> list[str]:
        """The command line that runs ``argv`` (in ``cwd``) inside the sandbox,
        or ``argv`` unchanged when the sandbox is not active. ``read_only``:
        the project root, additional and ``allow_write`` directories are
        mounted read-only too (only the private temp directory is writable).
        ``cache``: the program's own cache folder (``tool_cache``), writable."""
        if not self.active:
            return list(argv)
        assert self.support.bwrap is not None
        where = os.path.realpath(cwd) if cwd is not None else self.root
        plan = self._plan(read_only, cache)
        policy = plan.policy
        shown = _named_temp_paths(argv, policy) + _listed_temp_sockets(plan.sockets, policy)
        if shown:
            policy = dataclasses.replace(policy, shown=shown)
        command = bwrap_argv(self.support.bwrap, policy, argv, cwd=where)
        if not plan.placeholders and not plan.watched and plan.sockets.seccomp is None:
            return command
        return launcher_argv(
            sys.executable or "python3",
            command,
            lease_dir=self.leases.directory,
            placeholders=plan.placeholders,
            seccomp_allow_unix=plan.sockets.seccomp,
            watched=plan.watched,
        )

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
        plan = self._plan(False)
        policy = plan.policy
        root_paths = [p for p in policy.readonly if inside(p, self.root)]
        return {
            "state": status.state,
            "reason": status.reason,
            "bwrap": self.support.bwrap,
            "network": self.settings.network,
            "writable": [*policy.writable, *policy.temp_dirs],
            "readonly": root_paths,
            "placeholders": list(policy.placeholders),
            "watched": list(plan.watched),
            "unprotected": [f"{p} ({why})" for p, why in plan.protection.unprotected],
            "user_state": [d for d in self.user_dirs if d != self.leases.directory],
            "user_state_hidden": [d for d in policy.user_state if d != self.leases.directory],
            "user_state_shown": list(policy.user_shown),
            "unix_sockets": plan.sockets.note,
            "unix_socket_mode": plan.sockets.mode,
            "allow_unix_sockets": list(plan.sockets.allowed),
            "hidden": list(policy.hidden),
            "ignored": list(self.settings.ignored),
        }


def _watched(root: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``WATCHED_PATHS`` under ``root``: those to watch (their folder is a real
    one and they are missing) and those that exist (kept read-only)."""
    watch: list[str] = []
    existing: list[str] = []
    for rel in WATCHED_PATHS:
        path = os.path.join(root, rel)
        folder = os.path.dirname(path)
        if os.path.lexists(path):
            existing.append(path)
        elif os.path.isdir(folder) and not os.path.islink(folder):
            watch.append(path)
    return tuple(watch), tuple(existing)


def _outside_user_state(path: str, state: UserState) -> bool:
    """A deny rule's path inside a hidden MewCode folder is hidden already
    (and no mount point can be made in its read-only stand-in), unless it is
    in a subfolder shown again."""
    if any(inside(path, s) for s in state.shown):
        return True
    return not any(inside(path, d) for d in state.hidden)


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


def _listed_temp_sockets(sockets: SocketPolicy, policy: SandboxPolicy) -> tuple[str, ...]:
    """The user's listed sockets that live in a private temp dir: shown (the
    socket file itself) so they stay reachable."""
    temps = [t.rstrip("/") + "/" for t in policy.temp_dirs]
    return tuple(p for p in sockets.allowed if any(p.startswith(t) for t in temps))
