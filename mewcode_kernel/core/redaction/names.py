"""Names that say their value is a secret: ``looks_secret``.

An environment variable, a notebook variable, a dict key, a column or a
field is read by its words, so that a count of tokens or a keyboard is not
taken for a secret (see ``looks_secret``).
"""

from __future__ import annotations

import re

__all__ = ["SECRET_NAME", "looks_secret"]

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
