"""The bubblewrap command line for one sandboxed process.

Mounts, in order (a later mount covers an earlier one):

1. the whole file system read-only, a fresh ``/dev`` and a fresh ``/proc``
   (its own PID namespace: no other process, and no parent's environment,
   is visible);
2. a private, empty temporary directory (``/tmp``, and the system temp dir
   if it lives elsewhere), with what the command line names in it shown
   again read-only;
3. the writable directories (the project root, ``sandbox.allow_write``), or
   the same read-only for a read-only process;
4. the protected paths inside them (``protect.py``): the folders on the way
   bound onto themselves (so they cannot be renamed), the paths themselves
   read-only, and placeholders (read-only) where they do not exist yet;
5. host socket files covered (``sockets.py``, when no seccomp filter closes
   them all);
6. the user's MewCode folder: an empty read-only folder in its place,
   holding only its ``skills``, ``agents`` and ``hooks``, read-only, and
   the process's own tool cache folder (``caches.py``), writable;
7. hidden paths (those ``Read(...)`` deny rules match): a directory becomes
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

    ``writable``: directories it may change (the project root first; mounted
    read-only when ``read_only``); ``pinned``: folders inside them bound onto
    themselves (still writable, never renamed); ``readonly``: paths inside
    them it may only read; ``placeholders``: the same for paths made just
    before it starts (bound whether or not they exist when this is built);
    ``shown``: paths inside the temp dirs shown again, read-only (bound
    before the writable ones, which may lie inside); ``sockets``: socket
    files covered; ``user_state``: folders replaced by an empty read-only
    one, ``user_shown`` their subfolders shown again read-only,
    ``user_writable`` folders in them shown writable (a tool cache), and
    ``user_files`` user-state files hidden; ``hidden``: paths it may not read
    at all; ``temp_dirs``: replaced by a private empty directory;
    ``network``: ``on`` or ``off``.
    """

    writable: tuple[str, ...]
    readonly: tuple[str, ...] = ()
    pinned: tuple[str, ...] = ()
    placeholders: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()
    sockets: tuple[str, ...] = ()
    user_state: tuple[str, ...] = ()
    user_shown: tuple[str, ...] = ()
    user_writable: tuple[str, ...] = ()
    user_files: tuple[str, ...] = ()
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
    if not policy.read_only:
        for path in dict.fromkeys(policy.pinned):
            if os.path.isdir(path) and not os.path.islink(path):
                out += ["--bind", path, path]
    for path in dict.fromkeys(policy.readonly):
        if os.path.lexists(path) and not os.path.islink(path):
            out += ["--ro-bind", path, path]
    if not policy.read_only:
        for path in dict.fromkeys(policy.placeholders):
            out += ["--ro-bind", path, path]  # made by the launcher just before
    for path in dict.fromkeys(policy.sockets):
        out += ["--ro-bind", "/dev/null", path]
    for path in dict.fromkeys(policy.user_state):
        out += ["--perms", "0555", "--tmpfs", path]
        for sub in policy.user_shown:
            if os.path.dirname(sub) == path:
                out += ["--ro-bind", sub, sub]
        for sub in policy.user_writable:
            if sub.startswith(path.rstrip("/") + "/") and os.path.isdir(sub):
                # bubblewrap makes the folders on the way in the empty stand-in;
                # the remount below leaves this mount writable
                out += ["--bind", sub, sub]
        out += ["--remount-ro", path]
    for path in dict.fromkeys(policy.user_files):
        out += ["--ro-bind", "/dev/null", path]
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
