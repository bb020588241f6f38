"""Checkpoint records are signed with a key only the user has.

A record tells ``/rewind`` what to write where. Records live in the
project (``.mewcode/sessions/...``), which a cloned repository can ship:
one forged with the digest of a file as committed would make ``/rewind``
write the attacker's content over it. So each record carries an HMAC
made with ``~/.mewcode/checkpoint.key`` (32 random bytes, created on first
use, mode 0600), and a record whose HMAC does not verify is not a
checkpoint. Blobs need no signature: they are named by their digest,
which the signed record holds.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

from ..ownership import ensure_private_dir
from ..userdirs import mewcode_home

__all__ = ["KEY_FILE", "MAC_FIELD", "sign", "user_key", "verify"]

KEY_FILE = Path(".mewcode") / "checkpoint.key"
MAC_FIELD = "mac"
_KEY_BYTES = 32
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# one key per process when the home folder cannot hold one: this kernel's own
# records still verify; a restart cannot revert them (nothing else could vouch)
_EPHEMERAL = secrets.token_bytes(_KEY_BYTES)


def _canonical(record: dict[str, Any]) -> bytes:
    body = {k: v for k, v in record.items() if k != MAC_FIELD}
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def sign(record: dict[str, Any], key: bytes) -> dict[str, Any]:
    """``record`` with its ``mac``."""
    mac = hmac.new(key, _canonical(record), hashlib.sha256).hexdigest()
    return {**record, MAC_FIELD: mac}


def verify(record: dict[str, Any], key: bytes) -> bool:
    mac = record.get(MAC_FIELD)
    if not isinstance(mac, str):
        return False
    expected = hmac.new(key, _canonical(record), hashlib.sha256).hexdigest()
    return hmac.compare_digest(mac, expected)


def _read_key(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        data = os.read(fd, _KEY_BYTES + 1)
    finally:
        os.close(fd)
    return data if len(data) == _KEY_BYTES else None


def user_key(home: Path | None = None) -> bytes:
    """The user's checkpoint key, created (atomically: two kernels starting
    at once agree on one) when there is none."""
    state = mewcode_home(home)
    if state is None:
        return _EPHEMERAL
    path = state / KEY_FILE.name
    key = _read_key(path)
    if key is not None:
        return key
    try:
        ensure_private_dir(path.parent)
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, secrets.token_bytes(_KEY_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # fails if another process made one first: use theirs
        except FileExistsError:
            pass
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    except OSError:
        return _EPHEMERAL
    return _read_key(path) or _EPHEMERAL
