"""Secret values kept out of tool results: ``Redactor``.

The values of the provider keys and of environment variables whose names
look secret (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ...) are
replaced by ``[REDACTED:NAME]`` wherever a tool result holds them, before
the result is stored, shown or sent (the loop applies it in one place, for
every tool). Short values (under ``MIN_LENGTH`` characters) are left alone:
they would mangle ordinary text and are no secret worth the name.

Values that have the shape of a well-known credential (``KEY_PATTERNS``:
``sk-...``, GitHub and Slack tokens, AWS key ids, private keys) are found by
``looks_like_key`` wherever their name says nothing (a cassette, a notebook
variable).

Streaming output is redacted by ``StreamRedactor``, which holds back the
end of a chunk that could be the start of a secret until the next chunk
says whether it is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

__all__ = [
    "KEY_PATTERNS",
    "MIN_LENGTH",
    "SECRET_NAME",
    "Redactor",
    "StreamRedactor",
    "looks_like_key",
    "looks_secret",
    "mask_credentials",
]

MIN_LENGTH = 8
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL", re.I)
# names matching SECRET_NAME whose values are not secrets (paths, switches)
_NOT_SECRET = re.compile(r"(?:_PATH|_FILE|_DIR|_HOME|_URL|_HOST|_PORT|_SOCK|_TYPE|_ID)$", re.I)


KEY_PATTERNS = tuple(
    re.compile(p)
    for p in (
        r"sk-[A-Za-z0-9][A-Za-z0-9_\-]{10,}",  # OpenAI, Anthropic (sk-ant-...), most compatibles
        r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{12,}=*",
        r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key id
        r"\bgh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
        r"\bgithub_pat_[A-Za-z0-9_]{30,}",
        r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack
        r"\bAIza[0-9A-Za-z_\-]{35}",  # Google API key
        r"\bhf_[A-Za-z0-9]{30,}",  # Hugging Face
        r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe
        r"\bglpat-[A-Za-z0-9_\-]{20,}",  # GitLab
        r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",  # a JWT
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
        # a password in a URL (scheme://user:PASSWORD@host): only the password
        r"(?<=://)[^/\s:@'\"]+:(?P<secret>[^/\s@'\"]+)(?=@)",
        # a credential in a query string (?api_key=VALUE, &token=VALUE): only the value
        r"(?i)[?&](?:api[_\-]?key|apikey|access[_\-]?token|auth|token|secret|password|"
        r"passwd|client[_\-]?secret|sig|signature|key)=(?P<secret>[^&\s'\"#]{6,})",
    )
)
"""The shapes of well-known credentials, found anywhere in a text. A pattern
with a ``secret`` group masks only that group (the name around it stays)."""


def mask_credentials(text: str, placeholder: str) -> str:
    """``text`` with each credential ``KEY_PATTERNS`` finds replaced by ``placeholder``."""

    def one(m: re.Match[str]) -> str:
        if "secret" not in m.re.groupindex:
            return placeholder
        start, end = m.span("secret")
        return m.string[m.start() : start] + placeholder + m.string[end : m.end()]

    for pattern in KEY_PATTERNS:
        text = pattern.sub(one, text)
    return text


def looks_like_key(text: str) -> bool:
    """Whether ``text`` holds something shaped like a well-known credential."""
    return any(p.search(text) for p in KEY_PATTERNS)


def looks_secret(name: str) -> bool:
    """Whether an environment variable's name says its value is a secret."""
    return bool(SECRET_NAME.search(name)) and not _NOT_SECRET.search(name)


class Redactor:
    """Replaces known secret values in text. ``secrets`` maps a name (shown in
    the placeholder) to its value."""

    def __init__(self, secrets: Mapping[str, str] | None = None) -> None:
        by_value: dict[str, str] = {}
        for name, value in (secrets or {}).items():
            if isinstance(value, str) and len(value.strip()) >= MIN_LENGTH:
                by_value.setdefault(value.strip(), name)
        self._names = by_value
        ordered = sorted(by_value, key=len, reverse=True)  # the longest wins an overlap
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self.longest = len(ordered[0]) if ordered else 0

    @classmethod
    def from_environment(
        cls, env: Mapping[str, str] | None = None, extra: Mapping[str, str] | None = None
    ) -> Redactor:
        """Secrets from ``env`` (default ``os.environ``) by name, plus ``extra``
        (e.g. the provider keys of the config, named by provider)."""
        env = os.environ if env is None else env
        found = {name: value for name, value in env.items() if looks_secret(name)}
        found.update(extra or {})
        return cls(found)

    def __bool__(self) -> bool:
        return self._pattern is not None

    def redact(self, text: str) -> str:
        """``text`` with every secret value replaced."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(lambda m: f"[REDACTED:{self._names[m.group(0)]}]", text)

    def values(self) -> Iterable[str]:
        return self._names.keys()

    def stream(self) -> StreamRedactor:
        return StreamRedactor(self)


class StreamRedactor:
    """Redacts a stream of chunks where a secret may be split between two."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._held = ""

    def feed(self, chunk: str) -> str:
        """What can be shown of ``chunk`` now (redacted)."""
        text = self._held + chunk
        if not self._redactor:
            self._held = ""
            return text
        keep = self._tail_to_hold(text)
        self._held = text[len(text) - keep :] if keep else ""
        return self._redactor.redact(text[: len(text) - keep] if keep else text)

    def flush(self) -> str:
        """The rest, at the end of the stream."""
        held, self._held = self._held, ""
        return self._redactor.redact(held)

    def _tail_to_hold(self, text: str) -> int:
        """The length of the longest end of ``text`` that could begin a secret
        (a whole secret at the end is redacted now)."""
        longest = min(self._redactor.longest - 1, len(text))
        for size in range(longest, 0, -1):
            tail = text[len(text) - size :]
            if any(v.startswith(tail) for v in self._redactor.values()):
                # keep the secret whole: also hold what overlaps a secret before it
                return size
        return 0
