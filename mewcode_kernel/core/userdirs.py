"""Where the user's own MewCode state lives: ``mewcode_home``.

One folder holds it all (the trust store, the checkpoint key, the user's
config, hooks, skills, agents, instructions and memory): ``MEWCODE_HOME``
when set, else ``~/.mewcode``. Every reader and writer asks here, so the
sandbox can hide exactly this folder and a deployment can move it (a
JupyterHub user's persistent volume, say) with one variable.

A caller that passes ``home`` explicitly (tests, an offline replay standing
for an empty home) gets ``home/.mewcode``: the variable only moves the
default, never a home chosen on purpose.

The folder is the user's alone (``prepare_home``): created ``0700`` and
narrowed to that if it was wider; refused when another user owns it, owns
anything directly in it (planted while it was open to them), or could swap
it (a folder on the way to it that others may write without the sticky
bit): it holds what MewCode trusts and runs (the trust store, hooks, keys).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from .errors import ConfigError
from .ownership import ensure_private_dir, is_mine, owner_name

__all__ = [
    "MEWCODE_HOME_ENV",
    "STATE_DIR",
    "display_path",
    "home_problems",
    "mewcode_home",
    "prepare_home",
    "user_home",
]

MEWCODE_HOME_ENV = "MEWCODE_HOME"
#: The folder's name under a home directory.
STATE_DIR = ".mewcode"


def user_home(home: Path | None = None) -> Path | None:
    """``home``, else the user's home directory (``None`` if there is none)."""
    if home is not None:
        return home
    try:
        return Path.home()
    except RuntimeError:
        return None


def mewcode_home(home: Path | None = None, env: Mapping[str, str] | None = None) -> Path | None:
    """The user's MewCode folder (see the module docstring); ``None`` only when
    neither ``MEWCODE_HOME`` nor a home directory is known."""
    if home is not None:
        return home / STATE_DIR
    chosen = (os.environ if env is None else env).get(MEWCODE_HOME_ENV, "").strip()
    if chosen:
        return Path(os.path.abspath(os.path.expanduser(chosen)))
    found = user_home()
    return found / STATE_DIR if found is not None else None


def display_path(path: Path, home: Path | None = None) -> str:
    """``path`` as a person reads it: ``~/...`` under the home directory."""
    base = user_home(home)
    if base is not None and path.is_relative_to(base):
        return "~/" + str(path.relative_to(base))
    return str(path)


def _trusted_owner(st: os.stat_result) -> bool:
    return is_mine(st) or st.st_uid == 0


def _chain_problems(path: Path) -> list[str]:
    """Folders on the way to ``path`` that another user could use to swap it."""
    problems = []
    for folder in [*reversed(path.parents)]:
        try:
            st = os.stat(folder)
        except OSError:
            break
        mode = stat.S_IMODE(st.st_mode)
        if not _trusted_owner(st):
            problems.append(f"{folder} (on the way to it) belongs to {owner_name(st.st_uid)}")
        elif mode & (stat.S_IWGRP | stat.S_IWOTH) and not mode & stat.S_ISVTX:
            problems.append(
                f"{folder} (on the way to it) is writable by others without the sticky bit"
            )
    return problems


def home_problems(home: Path | None = None, env: Mapping[str, str] | None = None) -> list[str]:
    """Why the user's MewCode folder cannot be trusted to be theirs alone
    (empty: it can, or there is none yet). A folder of theirs that is merely
    readable or writable by others is no problem: ``prepare_home`` narrows it."""
    state = mewcode_home(home, env)
    if state is None:
        return []
    real = Path(os.path.realpath(state))
    problems = _chain_problems(real)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return problems
    except OSError as exc:
        return [*problems, f"{state} cannot be read: {exc.strerror}"]
    if not stat.S_ISDIR(st.st_mode):
        return [*problems, f"{state} is not a folder"]
    if not is_mine(st):
        return [*problems, f"{state} belongs to {owner_name(st.st_uid)}, not to you"]
    try:
        entries = list(os.scandir(real))
    except OSError as exc:
        return [*problems, f"{state} cannot be read: {exc.strerror}"]
    for entry in entries:
        try:
            owner = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not _trusted_owner(owner):
            problems.append(
                f"{Path(state) / entry.name} was put there by {owner_name(owner.st_uid)}"
            )
    return problems


def prepare_home(home: Path | None = None, env: Mapping[str, str] | None = None) -> Path | None:
    """The user's MewCode folder, made private (``0700``) and created if
    missing; ``ConfigError`` listing why when it is not the user's alone."""
    state = mewcode_home(home, env)
    if state is None:
        return None
    problems = home_problems(home, env)
    if problems:
        raise ConfigError(
            f"your MewCode folder {state} is not yours alone: " + "; ".join(problems) + ". "
            "It holds what MewCode trusts and runs (trust store, hooks, keys), so MewCode does "
            f"not use it: remove what others put there, or set {MEWCODE_HOME_ENV} to a folder "
            "only you can write"
        )
    try:
        ensure_private_dir(state)
    except OSError as exc:
        raise ConfigError(f"your MewCode folder {state} cannot be made private: {exc}") from None
    return state
