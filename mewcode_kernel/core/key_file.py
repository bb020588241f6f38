"""Provider keys kept in a file of the user's own: ``keys.env`` in the
MewCode folder (``MEWCODE_HOME``), for kernels whose environment the user
does not control (a gateway passes a kernel only the variables it is told
to; a JupyterHub image's kernelspec is the admin's).

One ``NAME=value`` a line (``export`` before it, quotes around the value
and ``#`` comments allowed); only names that say they hold a secret
(``ANTHROPIC_API_KEY``, ``MY_PROXY_TOKEN``) are read, so the file cannot
change other settings. They fill variables the environment lacks (the
environment wins) in what config reads (``api_key: ${NAME}`` and the SDKs'
own key variables); they never reach a child process's environment, and
they are secrets the redactor knows by value.

The file is read only when it is the user's alone: a regular file (not a
link), owned by them, readable by nobody else (``chmod 600``). Otherwise
``ConfigError`` says which rule it breaks, as ssh does for a private key
others can read: a key others could read is already exposed.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError
from .ownership import is_mine, owner_name
from .redaction import looks_secret
from .userdirs import mewcode_home

__all__ = ["KEY_FILE", "KeyFile", "read_key_file", "with_key_file"]

KEY_FILE = "keys.env"
_MAX_BYTES = 64 * 1024
_LINE = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")


@dataclass(frozen=True, kw_only=True, slots=True)
class KeyFile:
    """What ``keys.env`` holds: ``values`` by name; ``ignored``: names that
    are no secret's (left out); ``path`` ``None`` when there is no file."""

    path: Path | None = None
    values: Mapping[str, str] = field(default_factory=dict)
    ignored: tuple[str, ...] = ()


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value.split(" #", 1)[0].rstrip()


def _read_private(path: Path) -> bytes | None:
    """The file's bytes when it is the user's alone; ``None`` when missing."""
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(path):
            raise ConfigError(
                f"{path} is a symbolic link: MewCode reads keys only from a regular file of "
                "yours (replace the link with the file, mode 600)"
            ) from None
        raise ConfigError(f"{path} cannot be read: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"{path} is not a regular file: MewCode reads keys only from one")
        if not is_mine(st):
            raise ConfigError(
                f"{path} belongs to {owner_name(st.st_uid)}: MewCode reads keys only from a "
                "file of yours"
            )
        if stat.S_IMODE(st.st_mode) & 0o077:
            raise ConfigError(
                f"{path} can be read or written by other users (mode "
                f"{stat.S_IMODE(st.st_mode):03o}): MewCode does not use keys others can read; "
                f"make it yours alone with `chmod 600 {path}` (and replace the keys if others "
                "could read them)"
            )
        data = os.read(fd, _MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > _MAX_BYTES:
        raise ConfigError(f"{path} is larger than {_MAX_BYTES // 1024} KiB: not a key file")
    return data


def read_key_file(home: Path | None = None, env: Mapping[str, str] | None = None) -> KeyFile:
    """The keys in ``keys.env`` of the user's MewCode folder (empty when there
    is none); ``ConfigError`` when it is not the user's alone."""
    state = mewcode_home(home, env)
    if state is None:
        return KeyFile()
    path = state / KEY_FILE
    data = _read_private(path)
    if data is None:
        return KeyFile()
    values: dict[str, str] = {}
    ignored: list[str] = []
    for line in data.decode("utf-8", "replace").splitlines():
        match = _LINE.match(line.strip())
        if match is None:
            continue
        name, value = match.group(1), _unquote(match.group(2))
        if not looks_secret(name):
            ignored.append(name)
        elif value:
            values[name] = value
    return KeyFile(path=path, values=values, ignored=tuple(dict.fromkeys(ignored)))


class _WithKeys(Mapping[str, str]):
    """``env`` read live, with the key file's values for names it lacks."""

    def __init__(self, env: Mapping[str, str], keys: Mapping[str, str]) -> None:
        self._env = env
        self._keys = keys

    def __getitem__(self, name: str) -> str:
        value = self._env.get(name)
        if value:
            return value
        if name in self._keys:
            return self._keys[name]
        if value is None:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        yield from self._env
        yield from (k for k in self._keys if k not in self._env)

    def __len__(self) -> int:
        return len(self._env) + sum(1 for k in self._keys if k not in self._env)


def with_key_file(env: Mapping[str, str], keys: KeyFile) -> Mapping[str, str]:
    """``env`` (still read live) with the key file's values for the names it
    lacks or has empty; ``env`` itself when the file holds none."""
    return _WithKeys(env, dict(keys.values)) if keys.values else env
