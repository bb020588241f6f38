"""The bubblewrap command line for one sandboxed process.

Mounts, in order (a later mount covers an earlier one):

1. the whole file system read-only, a fresh ``/dev`` and a fresh ``/proc``
   (its own PID namespace: no other process, and no parent's environment,
   is visible);
2. a private, empty temporary directory (``/tmp``, and the system temp dir
   if it lives elsewhere);
3. the writable directories (the project root, ``sandbox.allow_write``);
4. settings inside them read-only again (``.git/hooks``, ``.git/config``,
   MewCode's and Claude's settings), so a command cannot plant what runs
   later outside the sandbox;
5. hidden paths (those ``Read(...)`` deny rules match): a directory becomes
   an empty one nobody may open, a file a device nobody may read.

All capabilities are dropped (a root user keeps none that could undo a
mount), and the network is unshared when the policy says ``off``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["BASE_FLAGS", "Network", "SandboxPolicy", "bwrap_argv"]

Network = Literal["on", "off"]

BASE_FLAGS: tuple[str, ...] = (
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--die-with-parent",
    # the confined process leads a session of its own: it cannot push input into
    # the kernel's terminal (TIOCSTI), and killing the outer bwrap's process group
    # (how the MCP SDK stops a server) never waits on processes inside the
    # namespace, which --die-with-parent ends with it
    "--new-session",
    "--cap-drop",
    "ALL",
)


@dataclass(frozen=True, kw_only=True, slots=True)
class SandboxPolicy:
    """What one sandboxed process may touch (absolute, resolved paths).

    ``writable``: directories it may change (the project root first);
    ``readonly``: paths inside them it may only read; ``hidden``: paths it
    may not read at all; ``temp_dirs``: replaced by a private empty
    directory; ``shown``: paths inside the temp dirs shown again, read-only
    (bound before the writable ones, which may lie inside); ``network``:
    ``on`` or ``off``.
    """

    writable: tuple[str, ...]
    readonly: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    temp_dirs: tuple[str, ...] = ("/tmp",)
    network: Network = "on"
    #: a read-only role: the writable directories are shown read-only
    read_only: bool = False


def bwrap_argv(
    bwrap: str, policy: SandboxPolicy, argv: Sequence[str], *, cwd: str | None = None
) -> list[str]:
    """``argv`` run by ``bwrap`` under ``policy`` (in ``cwd``, default the first
    writable directory)."""
    out = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for tmp in dict.fromkeys(policy.temp_dirs):
        out += ["--tmpfs", tmp]
    for path in dict.fromkeys(policy.shown):
        if os.path.lexists(path) and not os.path.islink(path):
            out += ["--ro-bind", path, path]
    bind = "--ro-bind" if policy.read_only else "--bind"
    for path in dict.fromkeys(policy.writable):
        if os.path.isdir(path):
            out += [bind, path, path]
    for path in dict.fromkeys(policy.readonly):
        if os.path.lexists(path) and not os.path.islink(path):
            out += ["--ro-bind", path, path]
    for path in dict.fromkeys(policy.hidden):
        if os.path.islink(path) or not os.path.lexists(path):
            continue
        if os.path.isdir(path):
            out += ["--perms", "0000", "--tmpfs", path, "--remount-ro", path]
        else:
            out += ["--ro-bind", "/dev/null", path]
    out += list(BASE_FLAGS)
    if policy.network == "off":
        out.append("--unshare-net")
    where = cwd or (policy.writable[0] if policy.writable else "/")
    out += ["--chdir", where, "--", *argv]
    return out
