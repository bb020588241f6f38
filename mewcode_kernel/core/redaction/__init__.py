"""Secrets kept out of what MewCode shows, sends, logs and passes on.

* ``names``: ``looks_secret``, whether a name (a variable, a dict key, a
  column, a field) says its value is a secret.
* ``patterns``: ``KEY_PATTERNS``, text shaped like a well-known credential,
  wherever it is (``mask_credentials``, ``looks_like_key``, ``credentials_in``).
* ``redactor``: ``Redactor``, known secret values replaced by
  ``[REDACTED:NAME]`` wherever a text holds them, also encoded (base64,
  hex, reversed, a dump, a list of its bytes...) or split in two
  (``forms``, ``views``, ``matcher``); ``StreamRedactor`` for output that
  arrives in chunks.
"""

from __future__ import annotations

from .matcher import MIN_LENGTH
from .names import SECRET_NAME, looks_secret
from .patterns import KEY_PATTERNS, credentials_in, looks_like_key, mask_credentials
from .redactor import Redactor, Secrets, StreamRedactor, environment_secrets

__all__ = [
    "KEY_PATTERNS",
    "MIN_LENGTH",
    "SECRET_NAME",
    "Redactor",
    "Secrets",
    "StreamRedactor",
    "credentials_in",
    "environment_secrets",
    "looks_like_key",
    "looks_secret",
    "mask_credentials",
]
