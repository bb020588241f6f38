"""Text shaped like a well-known credential: ``KEY_PATTERNS``.

Found wherever its name says nothing (a cassette, a notebook variable, an
environment variable called ``LLM``): ``sk-...`` keys, GitHub, GitLab,
Slack, Hugging Face and Stripe tokens, AWS key ids, Google API keys, JWTs,
private keys, chat webhooks and bot tokens, the password of a URL, and the
value of a query-string parameter whose name looks secret.
"""

from __future__ import annotations

import re

from .names import looks_secret

__all__ = ["KEY_PATTERNS", "credentials_in", "looks_like_key", "mask_credentials"]

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
        r"\bnpm_[A-Za-z0-9]{36}\b",  # npm
        r"\bpypi-AgE[A-Za-z0-9_\-]{50,}",  # PyPI
        r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b",  # SendGrid
        r"\bdop_v1_[a-f0-9]{64}\b",  # DigitalOcean
        r"\bxapp-[A-Za-z0-9\-]{20,}",  # Slack app-level
        # a chat bot's token: Telegram's bot<digits>:<35 characters>
        r"(?<![A-Za-z0-9])bot\d{6,12}:[A-Za-z0-9_\-]{30,}|\b\d{8,12}:AA[A-Za-z0-9_\-]{30,}",
        # a webhook's secret part: Slack's /services/T../B../<secret>, Discord's /<id>/<secret>
        r"hooks\.slack\.com/services/[A-Za-z0-9]+/[A-Za-z0-9]+/(?P<secret>[A-Za-z0-9]{16,})",
        r"discord(?:app)?\.com/api/webhooks/\d+/(?P<secret>[A-Za-z0-9_\-]{30,})",
        # a password in a URL (scheme://user:PASSWORD@host): only the password
        r"(?<=://)[^/\s:@'\"]+:(?P<secret>[^/\s@'\"]+)(?=@)",
        # a token as a URL's user (https://TOKEN@host): long, one piece
        r"(?<=://)(?P<secret>[A-Za-z0-9_\-]{20,})(?=@)",
        # a credential in a query string (?api_key=VALUE, &token=VALUE): only the value
        r"(?i)[?&](?:api[_\-]?key|apikey|access[_\-]?token|auth|token|secret|password|"
        r"passwd|client[_\-]?secret|sig|signature|key)=(?P<secret>[^&\s'\"#]{6,})",
    )
)
"""The shapes of well-known credentials, found anywhere in a text. A pattern
with a ``secret`` group masks only that group (the name around it stays)."""

# any other parameter of a query string (or a form body) whose name looks
# secret: ?db_pass=..., &sessionid=..., ;private_token=..., X-Amz-Signature=...
_QUERY = re.compile(r"(?<=[?&])(?P<name>[A-Za-z][A-Za-z0-9_.\-]{0,63})=(?P<secret>[^&;\s'\"#]{6,})")
_SIGNATURES = frozenset(
    {"sig", "signature", "x-amz-signature", "x-goog-signature", "x-amz-credential"}
)


def _matches(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` that are credentials (a pattern's ``secret`` group
    when it has one), in order, overlaps joined."""
    spans: list[tuple[int, int]] = []
    for pattern in KEY_PATTERNS:
        group = "secret" if "secret" in pattern.groupindex else 0
        spans += [m.span(group) for m in pattern.finditer(text)]
    for m in _QUERY.finditer(text):
        name = m["name"]
        if looks_secret(name) or name.lower() in _SIGNATURES:
            spans.append(m.span("secret"))
    spans.sort()
    joined: list[tuple[int, int]] = []
    for start, end in spans:
        if joined and start <= joined[-1][1]:
            joined[-1] = (joined[-1][0], max(end, joined[-1][1]))
        else:
            joined.append((start, end))
    return joined


def mask_credentials(text: str, placeholder: str) -> str:
    """``text`` with each credential (``KEY_PATTERNS``, a query parameter
    named like a secret) replaced by ``placeholder``."""
    out: list[str] = []
    done = 0
    for start, end in _matches(text):
        out += [text[done:start], placeholder]
        done = end
    return "".join(out) + text[done:] if out else text


def looks_like_key(text: str) -> bool:
    """Whether ``text`` holds something shaped like a well-known credential."""
    return bool(_matches(text))


def credentials_in(text: str) -> list[str]:
    """The credentials ``text`` holds (each once, in order)."""
    return list(dict.fromkeys(text[start:end] for start, end in _matches(text)))
