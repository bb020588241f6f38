"""Finding bubblewrap and checking, once per executable, that it can start.

``MEWCODE_BWRAP`` names the executable to use (empty: none, so commands run
unsandboxed); otherwise ``bwrap`` is looked up on ``PATH``. An executable
that is found is started once with the sandbox's own flags (``/bin/true``
inside); a kernel without user namespaces, or a container that forbids
mounts, makes it fail, and the answer says why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["BWRAP_ENV", "SandboxSupport", "detect", "find_bwrap", "probe", "user_namespaces"]

BWRAP_ENV = "MEWCODE_BWRAP"
_PROBE_TIMEOUT = 10.0
_probed: dict[str, SandboxSupport] = {}
_lock = threading.Lock()


@dataclass(frozen=True, kw_only=True, slots=True)
class SandboxSupport:
    """Whether commands can run under bubblewrap here: the executable, its
    version, or why not."""

    available: bool
    bwrap: str | None = None
    version: str = ""
    reason: str = ""


def find_bwrap(env: Mapping[str, str] | None = None) -> str | None:
    """The bubblewrap executable to use, or ``None``."""
    env = os.environ if env is None else env
    chosen = env.get(BWRAP_ENV)
    if chosen is not None:
        chosen = chosen.strip()
        return chosen if chosen and os.access(chosen, os.X_OK) else None
    return shutil.which("bwrap", path=env.get("PATH", os.defpath))


def probe(bwrap: str) -> SandboxSupport:
    """Start ``bwrap`` once with the sandbox's flags; cached per executable."""
    with _lock:
        known = _probed.get(bwrap)
        if known is None:
            known = _probed[bwrap] = _probe(bwrap)
        return known


def detect(env: Mapping[str, str] | None = None) -> SandboxSupport:
    """Find bubblewrap (``find_bwrap``) and check that it can start (``probe``)."""
    env = os.environ if env is None else env
    bwrap = find_bwrap(env)
    if bwrap is None:
        if env.get(BWRAP_ENV) is not None:
            why = f"{BWRAP_ENV}={env.get(BWRAP_ENV)!r} names no executable"
        else:
            why = "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
        return SandboxSupport(available=False, reason=why)
    return probe(bwrap)


def _probe(bwrap: str) -> SandboxSupport:
    from .bwrap import BASE_FLAGS

    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *BASE_FLAGS]
    try:
        done = subprocess.run(
            [*argv, "--", "/bin/true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxSupport(available=False, bwrap=bwrap, reason=f"{bwrap} cannot run: {exc}")
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = detail[-1] if detail else f"exit code {done.returncode}"
        return SandboxSupport(
            available=False,
            bwrap=bwrap,
            reason=f"bubblewrap cannot start a sandbox here ({why}); user namespaces may be off",
        )
    return SandboxSupport(available=True, bwrap=bwrap, version=_version(bwrap))


def _version(bwrap: str) -> str:
    try:
        out = subprocess.run(
            [bwrap, "--version"], capture_output=True, timeout=_PROBE_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.decode("utf-8", "replace").strip()


def _sysctl(name: str) -> str | None:
    try:
        with open(f"/proc/sys/{name}", encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return None


def user_namespaces() -> tuple[bool | None, str]:
    """Whether this kernel lets this user make user namespaces (bubblewrap
    needs them), as the kernel's settings say: ``(allowed, why)``, with the
    setting to change when they are off (``None``: nothing says)."""
    limit = _sysctl("user/max_user_namespaces")
    if limit == "0":
        return (
            False,
            "user.max_user_namespaces is 0 (fix: sysctl -w user.max_user_namespaces=15000)",
        )
    clone = _sysctl("kernel/unprivileged_userns_clone")
    if clone == "0" and os.geteuid() != 0:
        return False, (
            "kernel.unprivileged_userns_clone is 0 (fix: sysctl -w "
            "kernel.unprivileged_userns_clone=1)"
        )
    if _sysctl("kernel/apparmor_restrict_unprivileged_userns") == "1" and os.geteuid() != 0:
        return False, (
            "AppArmor restricts unprivileged user namespaces (fix: an AppArmor profile for "
            "bwrap, as Ubuntu's bwrap-userns-restrict, or sysctl -w "
            "kernel.apparmor_restrict_unprivileged_userns=0)"
        )
    if limit is None:
        return None, "this system does not say (no /proc/sys/user/max_user_namespaces)"
    return True, f"allowed (user.max_user_namespaces is {limit})"
