"""The cassette: recorded HTTP exchanges with a model API, as one JSON file.

The format is documented in ``docs/cassettes.md``. This module holds the
value types, loading and atomic saving, the secret scrubber applied to every
stored body, and the readable diff used when a replayed request differs.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from ...errors import ConfigError
from ...prompt.environment import mask_environment
from ...redaction import mask_credentials

__all__ = [
    "CASSETTE_VERSION",
    "SAFE_RESPONSE_HEADERS",
    "Cassette",
    "Interaction",
    "Protocol",
    "RecordedRequest",
    "RecordedResponse",
    "json_diff",
    "mask_volatile",
    "scrub",
]

CASSETTE_VERSION = 1

Protocol = Literal["anthropic", "openai", "openai-responses"]

SAFE_RESPONSE_HEADERS = frozenset(
    {"content-type", "retry-after", "retry-after-ms", "x-should-retry"}
)
"""The only response headers a cassette keeps; request headers are never kept."""

REDACTED = "[REDACTED]"

_SECRET_KEYS = frozenset(
    {
        "api_key",
        "apikey",
        "api-key",
        "x-api-key",
        "authorization",
        "password",
        "secret",
        "client_secret",
        "access_token",
        "refresh_token",
    }
)


def scrub(value: Any, secrets: tuple[str, ...] = ()) -> Any:
    """Return ``value`` (JSON data or text) with anything that looks like a key replaced.

    Exact ``secrets`` (e.g. the API key taken from the request headers) are
    replaced first, then well-known key shapes, then the values of keys named
    like credentials. The same function runs on recorded and replayed request
    bodies, so scrubbing never causes a mismatch by itself.
    """
    if isinstance(value, str):
        for secret in secrets:
            if len(secret) >= 8:
                value = value.replace(secret, REDACTED)
        return mask_credentials(value, REDACTED)
    if isinstance(value, dict):
        return {
            k: (
                REDACTED
                if k.lower() in _SECRET_KEYS and isinstance(v, str) and v
                else scrub(v, secrets)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [scrub(v, secrets) for v in value]
    return value


@dataclass(kw_only=True, slots=True)
class RecordedRequest:
    """What was sent: method, path with query, and the parsed JSON body (scrubbed)."""

    method: str
    path: str
    body: Any = None


@dataclass(kw_only=True, slots=True)
class RecordedResponse:
    """What came back. ``body`` is the raw text (an SSE transcript for streams);
    ``error`` is set when the connection broke before the body ended."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    error: str | None = None


@dataclass(kw_only=True, slots=True)
class Interaction:
    request: RecordedRequest
    response: RecordedResponse

    def describe(self) -> str:
        """One line for error messages: method, path and the last user text."""
        return f"{self.request.method} {self.request.path}{_last_user_text(self.request.body)}"


@dataclass(kw_only=True, slots=True)
class Cassette:
    """A recording: the wire protocol, the model, when, and the exchanges in order."""

    protocol: Protocol
    model: str
    recorded_at: str = field(
        default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds")
    )
    interactions: list[Interaction] = field(default_factory=list)
    version: int = CASSETTE_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "protocol": self.protocol,
            "model": self.model,
            "recorded_at": self.recorded_at,
            "interactions": [
                {
                    "request": {
                        "method": i.request.method,
                        "path": i.request.path,
                        "body": i.request.body,
                    },
                    "response": {
                        "status": i.response.status,
                        "headers": i.response.headers,
                        "body": i.response.body,
                        **({"error": i.response.error} if i.response.error else {}),
                    },
                }
                for i in self.interactions
            ],
        }

    @classmethod
    def from_json(cls, data: Any, *, source: str = "<cassette>") -> Cassette:
        """Validate and build a cassette; a bad file raises ``ConfigError``."""

        def bad(message: str, where: str | None = None) -> ConfigError:
            return ConfigError(message, path=source, field=where)

        if not isinstance(data, dict):
            raise bad("a cassette is a JSON object")
        if data.get("version") != CASSETTE_VERSION:
            raise bad(f"unsupported version {data.get('version')!r}", "version")
        if data.get("protocol") not in ("anthropic", "openai", "openai-responses"):
            raise bad(f"unknown protocol {data.get('protocol')!r}", "protocol")
        raw = data.get("interactions")
        if not isinstance(raw, list):
            raise bad("must be a list", "interactions")
        interactions = []
        for n, item in enumerate(raw):
            try:
                req, resp = item["request"], item["response"]
                headers = {str(k).lower(): str(v) for k, v in resp.get("headers", {}).items()}
                interactions.append(
                    Interaction(
                        request=RecordedRequest(
                            method=str(req["method"]).upper(),
                            path=str(req["path"]),
                            body=req.get("body"),
                        ),
                        response=RecordedResponse(
                            status=int(resp["status"]),
                            headers=headers,
                            body=str(resp.get("body", "")),
                            error=resp.get("error"),
                        ),
                    )
                )
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise bad(f"malformed interaction ({exc!r})", f"interactions[{n}]") from exc
        return cls(
            protocol=data["protocol"],
            model=str(data.get("model", "")),
            recorded_at=str(data.get("recorded_at", "")),
            interactions=interactions,
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Cassette:
        """Read a cassette file; a missing or malformed file raises ``ConfigError``."""
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError("no such cassette", path=str(p)) from exc
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"unreadable cassette: {exc}", path=str(p)) from exc
        return cls.from_json(data, source=str(p))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write atomically (temp file, fsync, rename): a crash leaves the old file or the new one."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, p)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


# --- readable differences ---------------------------------------------------------


_TASK_ID = re.compile(r"\btask_[0-9a-f]{16}\b")


def mask_volatile(value: Any) -> Any:
    """JSON ``value`` with what legitimately differs between a recording and
    its replay blanked: the contents of ``<environment>`` blocks (root, date,
    platform, git state) and background task ids (random on every run).
    Applied to both sides before they are compared."""
    if isinstance(value, str):
        return _TASK_ID.sub("task_…", mask_environment(value))
    if isinstance(value, dict):
        return {k: mask_volatile(v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_volatile(v) for v in value]
    return value


def json_diff(recorded: Any, actual: Any, path: str = "body", *, limit: int = 6) -> list[str]:
    """Where two JSON values differ, one line per difference (at most ``limit``,
    then a count of the rest). Equality is parsed-JSON equality: key order and
    whitespace never matter, but ``1`` and ``true`` differ."""
    out: list[str] = []
    _diff(recorded, actual, path, out)
    if len(out) > limit:
        out = [*out[:limit], f"... and {len(out) - limit} more difference(s)"]
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def _diff(rec: Any, act: Any, path: str, out: list[str]) -> None:
    if isinstance(rec, dict) and isinstance(act, dict):
        for key in sorted(rec.keys() | act.keys()):
            sub = f"{path}.{key}" if key.isidentifier() else f"{path}[{key!r}]"
            if key not in act:
                out.append(f"{sub}: recorded {_show(rec[key])}, missing in the actual request")
            elif key not in rec:
                out.append(f"{sub}: not recorded, actual {_show(act[key])}")
            else:
                _diff(rec[key], act[key], sub, out)
    elif isinstance(rec, list) and isinstance(act, list):
        for n in range(min(len(rec), len(act))):
            _diff(rec[n], act[n], f"{path}[{n}]", out)
        if len(rec) != len(act):
            extra = rec[len(act) :] if len(rec) > len(act) else act[len(rec) :]
            which = "recorded" if len(rec) > len(act) else "actual"
            out.append(
                f"{path}: recorded {len(rec)} items, actual {len(act)}; "
                f"extra {which}: {_show(extra)}"
            )
    elif isinstance(rec, str) and isinstance(act, str) and rec != act:
        at = next((i for i, (x, y) in enumerate(zip(rec, act, strict=False)) if x != y), None)
        at = min(len(rec), len(act)) if at is None else at
        out.append(
            f"{path}: strings differ at char {at}: recorded {_show(rec, at)} != actual {_show(act, at)}"
        )
    elif not _same(rec, act):
        out.append(f"{path}: recorded {_show(rec)} != actual {_show(act)}")


def _show(value: Any, at: int | None = None, width: int = 60) -> str:
    if isinstance(value, str) and at is not None and len(value) > width:
        start = max(0, at - width // 2)
        piece = value[start : start + width]
        return ("…" if start else "") + repr(piece) + ("…" if start + width < len(value) else "")
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= width * 2 else text[: width * 2] + "…"


def _last_user_text(body: Any) -> str:
    """`` (last message: '...')`` for the last text in the request's messages, if any."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return ""
    for message in reversed(body["messages"]):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str) and content:
            return f" (last message: {_show(content[:80])})"
        if isinstance(content, list):
            for block in reversed(content):
                if isinstance(block, dict):
                    text = block.get("text") or block.get("content")
                    if isinstance(text, str) and text:
                        return f" (last message: {_show(text[:80])})"
    return ""
