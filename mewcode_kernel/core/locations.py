"""Where a kernel works, read once from the environment Jupyter gives it:
the project root, the notebook it serves, and whether a gateway started it.

The project root is ``MEWCODE_ROOT``, else ``KERNEL_WORKING_DIR`` (what
Jupyter Server sends a gateway as the notebook's folder, and Enterprise
Gateway passes on; its kernels start in the gateway's own folder, not
there), else the working directory. A variable that names no folder here
(a remote kernel whose image lacks the notebook server's path) is passed
over, and ``problems`` says why and how to fix it.

The notebook is ``JPY_SESSION_NAME`` (set by Jupyter Server for the kernels
it starts; a gateway passes it only when told to). A kernel runs under a
gateway when Enterprise Gateway's or Kernel Gateway's markers are in its
environment (``KERNEL_GATEWAY``, ``EG_IMPERSONATION_ENABLED``); a gateway
passes a kernel only ``KERNEL_*`` variables and those it is told to, so
messages about a missing variable name the settings that forward it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError
from .redaction import looks_secret

__all__ = [
    "GATEWAY_MARKERS",
    "KERNEL_WORKING_DIR",
    "NOTEBOOK_ENV",
    "ROOT_ENV",
    "Located",
    "forwarding_hint",
    "gateway_evidence",
    "locate_root",
    "notebook_path",
]

ROOT_ENV = "MEWCODE_ROOT"
KERNEL_WORKING_DIR = "KERNEL_WORKING_DIR"
NOTEBOOK_ENV = "JPY_SESSION_NAME"
#: variables only a gateway sets in a kernel's environment, and what they say
GATEWAY_MARKERS: tuple[tuple[str, str], ...] = (
    ("EG_IMPERSONATION_ENABLED", "Jupyter Enterprise Gateway"),
    ("KERNEL_GATEWAY", "a Jupyter kernel gateway"),
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Located:
    """A folder and how it was chosen (``source``: the variable, ``argument``
    or ``working directory``); ``problems``: variables passed over, each with
    its fix."""

    path: Path
    source: str
    problems: tuple[str, ...] = field(default=())


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def _usable_dir(raw: str, name: str, *, relative_ok: bool) -> tuple[Path | None, str | None]:
    """``raw`` as a folder (resolved, links followed), or why not."""
    text = os.path.expanduser(raw) if relative_ok else raw
    if "\x00" in text or not (relative_ok or os.path.isabs(text)):
        return None, f"{name}={raw!r} is not an absolute path"
    path = Path(os.path.realpath(text))
    if not path.is_dir():
        return None, f"{name}={raw!r} names no folder on this machine"
    return path, None


def locate_root(
    explicit: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    *,
    cwd: Path | None = None,
) -> Located:
    """The project root: ``MEWCODE_ROOT``, else ``explicit`` (a caller's own
    choice), else ``KERNEL_WORKING_DIR``, else the working directory
    (``cwd``, default the process's).

    ``ConfigError`` when ``MEWCODE_ROOT`` names no folder: the person chose a
    project, and working anywhere else would be a silent surprise. A
    ``KERNEL_WORKING_DIR`` that names none (set by the infrastructure; a
    remote kernel may not see the notebook server's folders) is passed over,
    and ``problems`` says so with the fix."""
    env = _env(env)
    chosen = env.get(ROOT_ENV, "").strip()
    if chosen:
        path, why = _usable_dir(chosen, ROOT_ENV, relative_ok=True)
        if path is None:
            raise ConfigError(f"{why}: set it to the project's folder, or unset it")
        return Located(path=path, source=ROOT_ENV)
    if explicit is not None:
        return Located(path=Path(os.path.realpath(explicit)), source="argument")
    problems: list[str] = []
    working = env.get(KERNEL_WORKING_DIR, "").strip()
    if working:
        path, why = _usable_dir(working, KERNEL_WORKING_DIR, relative_ok=False)
        if path is not None:
            return Located(path=path, source=KERNEL_WORKING_DIR)
        problems.append(
            f"{why} (a remote kernel sees its own file system), so the project is the "
            f"working directory: mount the project at that path in the kernel's image, or set "
            f"{ROOT_ENV} in the kernelspec's env"
        )
    return Located(
        path=Path(os.path.realpath(cwd or os.getcwd())),
        source="working directory",
        problems=tuple(problems),
    )


def notebook_path(root: Path | None = None, env: Mapping[str, str] | None = None) -> Path | None:
    """The notebook this kernel serves (``JPY_SESSION_NAME``), or ``None``.
    A relative name is taken relative to ``root`` (default: the working
    directory); the file need not exist here (a gateway's kernel may not see it)."""
    raw = _env(env).get(NOTEBOOK_ENV, "").strip()
    if not raw or "\x00" in raw:
        return None
    path = Path(raw)
    if not path.is_absolute():
        path = (root or Path.cwd()) / path
    return Path(os.path.normpath(path))


def gateway_evidence(env: Mapping[str, str] | None = None) -> str | None:
    """Which gateway started this kernel (``None``: none did)."""
    env = _env(env)
    for name, what in GATEWAY_MARKERS:
        if env.get(name, "").strip():
            return f"{what} ({name} is set)"
    return None


def forwarding_hint(names: Iterable[str], env: Mapping[str, str] | None = None) -> str:
    """How to get ``names`` into a kernel a gateway started ("" when no gateway
    did): the settings that forward a variable, the kernelspec's ``env`` for
    what is the same for every notebook, and for keys the key file."""
    names = [n for n in dict.fromkeys(names) if n]
    if not names or gateway_evidence(env) is None:
        return ""
    listed = ",".join(names)
    hint = (
        f"this kernel runs under a gateway, which passes a kernel only KERNEL_* variables and "
        f"those it is told to: add {listed} to the gateway's EG_CLIENT_ENVS "
        f"(c.EnterpriseGatewayApp.client_envs) and to Jupyter Server's "
        f"c.GatewayClient.allowed_envs"
    )
    if NOTEBOOK_ENV not in names:
        hint += ", or set it in the kernelspec's env"
    if all(looks_secret(n) for n in names):
        hint += ", or put it in keys.env in your MewCode folder (mode 600)"
    return hint
