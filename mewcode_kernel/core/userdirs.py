"""Where the user's own MewCode state lives: ``mewcode_home``.

One folder holds it all (the trust store, the checkpoint key, the user's
config, hooks, skills, agents, instructions and memory): ``MEWCODE_HOME``
when set, else ``~/.mewcode``. Every reader and writer asks here, so the
sandbox can hide exactly this folder and a deployment can move it (a
JupyterHub user's persistent volume, say) with one variable.

A caller that passes ``home`` explicitly (tests, an offline replay standing
for an empty home) gets ``home/.mewcode``: the variable only moves the
default, never a home chosen on purpose.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["MEWCODE_HOME_ENV", "STATE_DIR", "display_path", "mewcode_home", "user_home"]

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
