"""Secret values kept out of tool results: ``Redactor``.

The values of the provider keys and of environment variables whose names
look secret (``looks_secret``: ``*_KEY``, ``*_TOKEN``, ``*SECRET*``,
``*PASSWORD*``, ``*_PASS``, ...) are replaced by ``[REDACTED:NAME]`` wherever a tool
result holds them, before the result is stored, shown or sent (the loop
applies it in one place, for every tool). Short values (under
``MIN_LENGTH`` characters) are left alone: they would mangle ordinary text
and are no secret worth the name.

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
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASS|CREDENTIAL|CREDS|PW|AUTH|COOKIE|SESS", re.I)
"""What a secret name contains somewhere: a quick first test (``looks_secret``
decides on the name's words)."""

# a word of a name that says the value is a secret, also at the end of a
# longer word (PGPASSWORD, clientsecret): no ordinary word ends like these
_SECRET_ENDINGS = (
    "password",
    "passwords",
    "passwd",
    "passphrase",
    "secret",
    "secrets",
    "credential",
    "credentials",
    "token",
    "sessionid",  # the session cookie: sessionid, JSESSIONID; not session_id, an id
    "sessid",  # PHPSESSID
)
# a word that says so only on its own: "key" ends monkey and hockey, "auth"
# starts author, "cookie" ends fortunecookie
_SECRET_WORDS = frozenset({"key", "auth", "authorization", "creds", "pwd", "cookie", "cookies"})
# a word that says so only as the name's last word, after a separator or a
# lower case letter: db_pass, userPw (pass_rate, pw_dist, hunter2pw are not),
# and not after a word that makes it one run of a process (first_pass)
_LAST_SECRET_WORDS = frozenset({"pass", "pw"})
_LAST_WORD_ALONE = re.compile(r"(?:^|[^A-Za-z0-9]|(?<=[a-z])(?=P))(?i:pass|pw)$")
_NOT_A_PASSWORD = frozenset(
    {
        "first", "second", "third", "last", "final", "next", "single", "multi", "one",
        "two", "forward", "backward", "fwd", "bwd", "is", "did", "has", "boarding",
    }
)  # fmt: skip
# a kind of key that is a piece of data, not a credential: join_key,
# primary_key, cache_key, partition_key (a lone "key" stays a secret's name)
_DATA_KEYS = frozenset(
    {
        "join", "sort", "sorting", "group", "grouping", "groupby", "partition", "row",
        "primary", "foreign", "cache", "dict", "merge", "index", "lookup", "hash", "range",
        "shard", "composite", "unique", "natural", "surrogate", "business", "match",
        "dedup", "map", "record", "item", "col", "column", "table", "candidate",
        "secondary", "order", "cluster", "idempotency", "dedupe", "bucket",
    }
)  # fmt: skip
# what makes a key or a token (or several) a credential when it comes before:
# api_keys, access_tokens, privatekey; max_tokens, join_keys, monkey are not
_CREDENTIAL_KINDS = frozenset(
    {
        "access", "api", "auth", "bearer", "client", "encryption", "gpg", "master",
        "pass", "pgp", "private", "refresh", "secret", "session", "signing", "ssh",
    }
)  # fmt: skip
# a last word that makes the name about a secret, not the secret itself
# (SSH_KEY_PATH, AWS_ACCESS_KEY_ID, token_count, primary_key_column, KeyError)
_ABOUT = frozenset(
    {
        "col", "cols", "column", "columns", "count", "counts", "dir", "env", "error",
        "errors", "exception", "field", "fields", "file", "filename", "files", "home",
        "host", "id", "ids", "kind", "len", "length", "limit", "name", "names", "path",
        "paths", "port", "size", "sock", "socket", "type", "uri", "url", "var",
        # a cookie's settings and the user's answer to a cookie banner
        "consent", "policy", "domain", "expiry", "expires", "accepted",
    }
)  # fmt: skip
# the words of a name: snake_case, kebab-case, dotted, spaced, camelCase, APIKey
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

KEY_PATTERNS = tuple(
    re.compile(p)
    for p in (
        # OpenAI, Anthropic, most compatibles; not inside a word (task-..., disk-...)
        # unless its prefix is one no word has (sk-ant-..., sk-proj-...)
        r"(?<![A-Za-z0-9])sk-[A-Za-z0-9][A-Za-z0-9_\-]{10,}"
        r"|sk-(?:ant|proj|svcacct|admin)-[A-Za-z0-9_\-]{10,}",
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
    """Whether a name (an environment variable, a notebook variable, a dict
    key, a column) says its value is a secret.

    It is decided on the name's words, so that a count of tokens or a
    keyboard is not taken for one: a word ending in ``password``,
    ``passwd``, ``passphrase``, ``secret``, ``credential(s)``, ``token``
    or ``sessionid`` (the session cookie; ``session_id`` is an id); the word
    ``key``, ``auth``, ``authorization``, ``creds``, ``cookie(s)`` or
    ``pwd`` in a longer name (``PWD`` alone is the working directory), but
    not a key of data (``join_key``, ``primary_key``, ``cache_key``); the
    word ``pass`` or ``pw`` as the last one (``db_pass``, ``user_pw``; not
    ``pass_rate``, ``first_pass``, ``bypass``); ``keys`` or ``tokens`` after
    a kind of credential (``api_keys``, ``refresh_tokens``, ``privatekey``),
    never alone (``max_tokens``, ``keys``). A name whose last word says what
    it is about (``_path``, ``_id``, ``_count``, ``_column``, ``_consent``...)
    is not a secret: ``SSH_KEY_PATH``, ``primary_key_column``.
    """
    if not SECRET_NAME.search(name):
        return False
    words = [w.lower() for w in _WORD.findall(name)]
    if not words or words[-1] in _ABOUT:
        return False
    if words[-1] in _LAST_SECRET_WORDS and _LAST_WORD_ALONE.search(name):
        return (
            len(words) == 1
            or words[-2] not in _NOT_A_PASSWORD
            or any(_secret_word(words, i) for i in range(len(words) - 1))
        )
    return any(_secret_word(words, i) for i in range(len(words)))


def _secret_word(words: list[str], i: int) -> bool:
    word = words[i]
    if word.endswith(_SECRET_ENDINGS):
        return True
    if word in _SECRET_WORDS:
        if word == "key" and i > 0 and words[i - 1] in _DATA_KEYS:
            return False
        return word != "pwd" or len(words) > 1
    for ending in ("keys", "tokens", "key"):  # "key" alone is a _SECRET_WORDS
        if word.endswith(ending):
            kind = word.removesuffix(ending)
            if kind in _CREDENTIAL_KINDS or (
                not kind and i > 0 and words[i - 1] in _CREDENTIAL_KINDS
            ):
                return True
    return False


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
