"""Host sockets under ``sandbox.network: off``.

The empty network namespace already cuts TCP/UDP and abstract unix sockets
(those live in a network namespace); socket *files* (the Docker socket,
D-Bus, an ssh agent, any socket a host process binds in the project) stay
reachable through the file system. Three ways to close them:

* ``blocked`` (the default on x86_64 and aarch64): the seccomp filter
  (``seccomp.py``) makes ``socket(AF_UNIX, ...)`` fail, so no socket file
  anywhere can be reached, whenever it was made;
* ``listed`` (the user set ``sandbox.allow_unix_sockets``): the filter lets
  ``AF_UNIX`` through, the listed sockets stay reachable, and every other
  socket file MewCode can find is covered: those the host's kernel lists as
  bound (``/proc/net/unix``) and those in ``$XDG_RUNTIME_DIR``, ``/run`` and
  ``/var/run``. The trade-off: a socket bound after the command started, or
  bound in another network namespace outside those folders, is not covered;
* ``hidden`` (no filter for this architecture): the same file covering,
  without the filter; ``/sandbox`` says so.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from .seccomp import native_arch

__all__ = ["SocketPolicy", "find_socket_files", "socket_policy"]

SocketMode = Literal["open", "blocked", "listed", "hidden"]
_SEARCHED = ("/run", "/var/run")
_MAX_DEPTH = 5
_MAX_ENTRIES = 20_000


@dataclass(frozen=True, kw_only=True, slots=True)
class SocketPolicy:
    """``seccomp``: ``None`` for no filter, else whether it lets ``AF_UNIX``
    through; ``hidden``: socket files covered; ``allowed``: the listed
    sockets; ``note``: what ``/sandbox`` says."""

    mode: SocketMode
    seccomp: bool | None
    hidden: tuple[str, ...] = ()
    allowed: tuple[str, ...] = ()
    note: str = ""


def socket_policy(
    network: str,
    allowed: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    skip: Sequence[str] = (),
    machine: str | None = None,
) -> SocketPolicy:
    """The policy for ``network`` with the user's listed sockets ``allowed``
    (absolute); socket files under ``skip`` (private temp dirs) need no cover."""
    listed = tuple(dict.fromkeys(os.path.realpath(p) for p in allowed))
    if network != "off":
        return SocketPolicy(mode="open", seccomp=None, note="reachable (network on)")
    arch = native_arch(machine)
    if arch is not None and not listed:
        return SocketPolicy(
            mode="blocked",
            seccomp=False,
            note="blocked: a seccomp filter makes socket(AF_UNIX) fail (and io_uring, vsock)",
        )
    found = find_socket_files(env)
    hidden = tuple(
        p
        for p in found
        if p not in listed and not any(p.startswith(s.rstrip("/") + "/") for s in skip)
    )
    shown = ", ".join(listed) or "none"
    if arch is not None:
        return SocketPolicy(
            mode="listed",
            seccomp=True,
            hidden=hidden,
            allowed=listed,
            note=f"only the listed ones reachable ({shown}); {len(hidden)} other socket "
            "files hidden; one bound after a command started, outside the usual folders, "
            "is not",
        )
    machine_name = machine or os.uname().machine
    return SocketPolicy(
        mode="hidden",
        seccomp=None,
        hidden=hidden,
        allowed=listed,
        note=f"no seccomp filter for this architecture ({machine_name}): {len(hidden)} "
        "socket files found in $XDG_RUNTIME_DIR, /run, /var/run and the kernel's list are "
        f"hidden, others stay reachable; allowed: {shown}",
    )


def find_socket_files(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The socket files the host has: bound ones the kernel lists, and those
    in ``$XDG_RUNTIME_DIR``, ``/run`` and ``/var/run``."""
    env = os.environ if env is None else env
    found = list(_bound_sockets())
    roots = [env.get("XDG_RUNTIME_DIR", ""), *_SEARCHED]
    budget = [_MAX_ENTRIES]
    for top in dict.fromkeys(os.path.realpath(r) for r in roots if r):
        found += _walk(top, 0, budget)
    return tuple(dict.fromkeys(p for p in found if _is_socket(p)))


def _bound_sockets() -> Iterable[str]:
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="replace") as fh:
            next(fh, None)
            for line in fh:
                fields = line.split(None, 7)
                if len(fields) == 8 and fields[7].startswith("/"):
                    yield os.path.realpath(fields[7].rstrip("\n"))
    except OSError:
        return


def _walk(folder: str, depth: int, budget: list[int]) -> list[str]:
    out: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return out
    for entry in entries:
        budget[0] -= 1
        if budget[0] < 0:
            return out
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        if stat.S_ISSOCK(mode):
            out.append(entry.path)
        elif stat.S_ISDIR(mode) and depth < _MAX_DEPTH:
            out += _walk(entry.path, depth + 1, budget)
    return out


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except OSError:
        return False
