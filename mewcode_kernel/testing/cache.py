"""How much of a run's input the Anthropic prompt cache could serve, computed
from the serialised request bodies (``to_anthropic_request``) alone.

A model of the cache, not the service: a request *writes* an entry at each
``cache_control`` breakpoint (the whole prefix up to and including that
block: tools, then system, then messages); a later request *reads* the
longest prefix that ends at one of its breakpoints, or at one of the
``lookback`` block boundaries before it, and that an earlier request
wrote. Tokens are characters of the serialised blocks divided by four.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CacheStats", "cache_prefix_share", "cache_segments"]

_CHARS_PER_TOKEN = 4


@dataclass(frozen=True, kw_only=True, slots=True)
class CacheStats:
    """Input tokens in all, those a cache could have served, per request too."""

    input_tokens: int
    cached_tokens: int
    per_request: tuple[tuple[int, int], ...] = field(default=())

    @property
    def share(self) -> float:
        return self.cached_tokens / self.input_tokens if self.input_tokens else 0.0


def _strip(block: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def cache_segments(body: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """The body's content blocks in cache order, serialised without their
    ``cache_control``, each with whether it carries a breakpoint."""
    out: list[tuple[str, bool]] = []
    for tool in body.get("tools", ()):
        out.append((json.dumps(["tool", _strip(tool)], sort_keys=True), "cache_control" in tool))
    for block in body.get("system", ()):
        out.append(
            (json.dumps(["system", _strip(block)], sort_keys=True), "cache_control" in block)
        )
    for message in body.get("messages", ()):
        for i, block in enumerate(message["content"]):
            key = [message["role"] if i == 0 else "+", _strip(block)]
            out.append((json.dumps(key, sort_keys=True), "cache_control" in block))
    return out


def cache_prefix_share(bodies: Iterable[Mapping[str, Any]], *, lookback: int = 20) -> CacheStats:
    """The share of input tokens of ``bodies`` (in the order sent) that were a
    prefix written to the cache by an earlier request."""
    written: set[str] = set()
    total = cached = 0
    per_request: list[tuple[int, int]] = []
    for body in bodies:
        segments = cache_segments(body)
        digests, lengths = _prefixes(segments)
        marks = [i for i, (_, mark) in enumerate(segments) if mark]
        best = 0
        for mark in marks:
            for j in range(mark, max(mark - lookback, 0) - 1, -1):
                if digests[j] in written:
                    best = max(best, lengths[j])
                    break
        size = lengths[-1] if lengths else 0
        total += size
        cached += best
        per_request.append((size // _CHARS_PER_TOKEN, best // _CHARS_PER_TOKEN))
        written.update(digests[i] for i in marks)
    return CacheStats(
        input_tokens=total // _CHARS_PER_TOKEN,
        cached_tokens=cached // _CHARS_PER_TOKEN,
        per_request=tuple(per_request),
    )


def _prefixes(segments: Sequence[tuple[str, bool]]) -> tuple[list[str], list[int]]:
    digest = hashlib.sha256()
    digests: list[str] = []
    lengths: list[int] = []
    size = 0
    for text, _ in segments:
        digest.update(text.encode())
        digest.update(b"\x00")
        digests.append(digest.copy().hexdigest())
        size += len(text)
        lengths.append(size)
    return digests, lengths
