"""Known secret values taken out of text: ``Redactor`` and ``StreamRedactor``.

A ``Redactor`` knows secrets by value (a provider key, the value of a
variable whose name looks secret, a credential found in any variable) and
replaces each run of a text that holds one, in any of its forms
(``matcher``), by ``[REDACTED:NAME]``. Overlapping runs are masked as one,
named after the best of them (the value itself, then another whole form,
then a piece; the longest first).

``StreamRedactor`` redacts output as it streams: it holds back the end of
what it was given that could still become a secret (a piece of any form of
one, or the lines of a dump still being printed) until the next chunk says
whether it does.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote

from .matcher import MIN_LENGTH, Match, Matcher
from .names import looks_secret
from .patterns import credentials_in
from .views import dump_tail, fold, folded_positions

__all__ = ["Redactor", "Secrets", "StreamRedactor", "environment_secrets", "header_values"]

Secrets = Mapping[str, str] | Iterable[tuple[str, str]]
"""Secrets by name: a mapping, or (name, value) pairs when a name has several."""

# how far back the end of a text may still become a secret: a form spread
# over separators (od -c spaces each character), within bounds
_SPREAD = 3
_SLACK = 64
_MOST_HELD = 1 << 13
_DUMP_LINES_PER_SECRET = 8  # a dump line holds 16 bytes at least, a secret's forms 8 at most
# a variable of HTTP headers: OTEL_EXPORTER_OTLP_HEADERS, ..._TRACES_HEADERS, X_HEADERS
_HEADERS = re.compile(r"(?:^|_)HEADERS?$", re.I)


@dataclass(frozen=True, slots=True)
class _Region:
    start: int
    end: int
    name: str


class Redactor:
    """Replaces known secret values (and their forms) in text. ``secrets``
    names each value (the name is shown in the placeholder). ``every_form``
    (default) matches every form ``forms`` knows; without it, the common ones
    (the value whole or in pieces, reversed, hex, base64): for the many
    values of a notebook's data."""

    def __init__(self, secrets: Secrets | None = None, *, every_form: bool = True) -> None:
        self._names: dict[str, str] = {}  # value -> name
        self._every = every_form
        self._matcher = Matcher(())
        self._lock = threading.Lock()
        if secrets:
            self.add(secrets)

    @classmethod
    def from_environment(
        cls, env: Mapping[str, str] | None = None, extra: Secrets | None = None
    ) -> Redactor:
        """Secrets of ``env`` (default ``os.environ``): the values of variables
        whose names look secret and the credentials any value holds
        (``LLM=sk-ant-...``, a password in ``DATABASE_URL``); plus ``extra``
        (e.g. the provider keys of the config, named by provider)."""
        return cls([*environment_secrets(os.environ if env is None else env), *_pairs(extra)])

    def add(self, secrets: Secrets) -> None:
        """Know ``secrets`` too (a provider key that became usable)."""
        with self._lock:
            names = dict(self._names)
            for name, value in _pairs(secrets):
                if isinstance(value, str) and len(value.strip()) >= MIN_LENGTH:
                    names.setdefault(value.strip(), name)
            if names.keys() == self._names.keys():
                return
            longest_first = sorted(names, key=len, reverse=True)  # the longest wins a tie
            # one assignment: a redaction running meanwhile uses the old matcher or the new
            self._matcher = Matcher(((names[v], v) for v in longest_first), every=self._every)
            self._names = names

    def __bool__(self) -> bool:
        return bool(self._matcher)

    def values(self) -> Iterable[str]:
        return self._names.keys()

    @property
    def longest(self) -> int:
        return self._matcher.longest

    def redact(self, text: str) -> str:
        """``text`` with every secret value (in any of its forms) replaced."""
        if not text or not self._matcher:
            return text
        return _apply(text, self.regions(text))

    def finds(self, text: str) -> bool:
        """Whether ``text`` holds a secret value (in any of its forms)."""
        return bool(text) and bool(self._matcher.matches(text))

    def regions(self, text: str) -> list[_Region]:
        """The runs of ``text`` to mask, in order, none overlapping."""
        return _regions(self._matcher.matches(text))

    def hold_from(self, text: str) -> int:
        """Where the end of ``text`` that could still become a secret begins
        (``len(text)``: nothing could)."""
        matcher = self._matcher
        start = max(0, len(text) - min(_SPREAD * matcher.longest + _SLACK, _MOST_HELD))
        folded = fold(text[start:])
        lo, hi = 0, len(folded)  # folded[hi:] is in every form; find the first such
        while lo < hi:
            mid = (lo + hi) // 2
            if folded[mid:] in matcher.joined:
                hi = mid
            else:
                lo = mid + 1
        cut = len(text)
        if lo < len(folded):  # where that character is in the text
            cut = start + folded_positions(text[start:])[1][lo]
        lines = _DUMP_LINES_PER_SECRET * (matcher.longest // 16 + 2)
        dump = dump_tail(text, lines)
        return min(cut, dump) if dump is not None else cut

    def stream(self) -> StreamRedactor:
        return StreamRedactor(self)


def environment_secrets(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """The secrets of an environment: values of variables whose names look
    secret, the credentials in any value, and the header values of a variable
    that holds HTTP headers (``OTEL_EXPORTER_OTLP_HEADERS``: a collector's
    key rides there, under whatever header name the vendor chose)."""
    found: list[tuple[str, str]] = []
    for name, value in env.items():
        if not isinstance(value, str):
            continue
        if looks_secret(name):
            found.append((name, value))
        elif _HEADERS.search(name):
            found += [(name, v) for v in header_values(value)]
        found += [(name, c) for c in credentials_in(value)]
    return found


def header_values(text: str) -> list[str]:
    """The values of ``name=value,name=value`` headers (as the OTLP variables
    write them, URL-encoded or not), and each value's credential after an
    auth scheme (``Basic``, ``Bearer``)."""
    values: list[str] = []
    for item in text.split(","):
        _, sep, raw = item.partition("=")
        if not sep:
            continue
        for value in dict.fromkeys((raw.strip(), unquote(raw).strip())):
            values.append(value)
            scheme, _, credential = value.partition(" ")
            if credential.strip() and scheme.isalpha():
                values.append(credential.strip())
    return [v for v in dict.fromkeys(values) if len(v) >= MIN_LENGTH]


def _pairs(secrets: Secrets | None) -> list[tuple[str, str]]:
    if secrets is None:
        return []
    if isinstance(secrets, Mapping):
        return list(secrets.items())
    return list(secrets)


def _regions(matches: list[Match]) -> list[_Region]:
    """Overlapping matches joined, each region named after its best match."""
    joined: list[tuple[int, int, Match]] = []
    for m in sorted(matches, key=lambda m: m.start):
        if joined and m.start < joined[-1][1]:
            start, end, best = joined[-1]
            if (m.rank, m.start - m.end) < (best.rank, best.start - best.end):
                best = m
            joined[-1] = (start, max(end, m.end), best)
        else:
            joined.append((m.start, m.end, m))
    return [_Region(start, end, best.name) for start, end, best in joined]


def _apply(text: str, regions: Iterable[_Region]) -> str:
    out: list[str] = []
    done = 0
    for region in regions:
        out += [text[done : region.start], f"[REDACTED:{region.name}]"]
        done = region.end
    return "".join(out) + text[done:] if out else text


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
        regions = self._redactor.regions(text)
        cut = self._redactor.hold_from(text)
        for region in reversed(regions):  # never cut a secret found whole in two
            if region.start < cut < region.end:
                cut = region.start
        self._held = text[cut:]
        return _apply(text[:cut], [r for r in regions if r.end <= cut])

    def flush(self) -> str:
        """The rest, at the end of the stream."""
        held, self._held = self._held, ""
        return self._redactor.redact(held)
