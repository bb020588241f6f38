"""Finding known secret values in text, in any of their forms: ``Matcher``.

Each secret is expanded into its forms (``forms.forms_of``), folded as the
text is (``views.fold``). A form counts where the text holds all of it, or,
for the forms that count in pieces, a run of at least half of it (and at
least ``MIN_LENGTH`` characters); such a piece is left alone when it reads
as ordinary words (``_ordinary``: ``horse-battery`` from
``correct-horse-battery-9``), and so is a whole value that only matched
across separators and reads so (``pass word`` for ``password``).

Runs are found from anchors: fixed slices of each form, placed so that any
run long enough to count holds one whole. A text is searched for each
anchor with ``str.find`` (fast for a few secrets and long texts), or, when
there are many secrets (the values of a notebook's password column), by
looking each of its slices up in a table of anchors.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .forms import forms_of
from .views import View, dump_view, fold, main_view

__all__ = ["MIN_LENGTH", "Match", "Matcher"]

MIN_LENGTH = 8
"""Values shorter than this are not secrets worth the name (they would
mangle ordinary text)."""

# above this many forms (about 1.3 anchors each), looking up each slice of
# the text in a table is faster than one str.find per anchor
_MOST_FINDS = 450
_SCAN_ANCHOR = MIN_LENGTH
_LETTERS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
_VOWELS = frozenset("aeiouAEIOU")
_CONSONANTS = re.compile(r"[b-df-hj-np-tv-z]{5}", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Form:
    name: str
    folded: str
    least: int  # the shortest run that counts
    whole_value: bool  # the value itself, as written


@dataclass(frozen=True, slots=True)
class Match:
    """A run of the original text holding (a piece of) the secret ``name``;
    ``rank`` orders matches for naming: 0 the value whole, 1 another form
    whole, 2 a piece."""

    start: int
    end: int
    name: str
    rank: int


class Matcher:
    """The forms of ``secrets`` (name, value pairs; longer values first
    win a tie) and their anchors; ``every=False``: the common forms only."""

    def __init__(self, secrets: Iterable[tuple[str, str]], *, every: bool = True) -> None:
        self.forms: list[_Form] = []
        seen: set[str] = set()
        for name, value in secrets:
            for form in forms_of(value, every=every):
                folded = fold(form.text)
                if len(folded) < MIN_LENGTH or folded in seen:
                    continue
                seen.add(folded)
                half = max(MIN_LENGTH, -(-len(folded) // 2) - form.slack)
                least = half if form.pieces else len(folded)
                self.forms.append(_Form(name, folded, least, form.kind == "value"))
        self._tables: dict[bool, dict[str, list[tuple[int, int]]]] = {}
        #: every form, separated by a character no folded text holds
        self.joined = " ".join(f.folded for f in self.forms)
        self.longest = max((len(f.folded) for f in self.forms), default=0)

    def __bool__(self) -> bool:
        return bool(self.forms)

    def matches(self, text: str) -> list[Match]:
        """Every run of ``text`` that counts, unsorted, overlaps included."""
        if not self.forms or not text:
            return []
        found: list[Match] = []
        views = [main_view(text)]
        dumps = dump_view(text)
        if dumps is not None:
            views.append(dumps)
        for view in views:
            found += self._in_view(text, view)
        return found

    def _in_view(self, text: str, view: View) -> list[Match]:
        runs: set[tuple[int, int, int]] = set()
        hay = view.text
        if len(self.forms) <= _MOST_FINDS:
            for anchor, refs in self._table(scan=False).items():
                at = hay.find(anchor)
                while at >= 0:
                    for index, offset in refs:
                        self._extend(hay, at, len(anchor), index, offset, runs)
                    at = hay.find(anchor, at + 1)
        else:
            table = self._table(scan=True)
            for at in range(len(hay) - _SCAN_ANCHOR + 1):
                refs = table.get(hay[at : at + _SCAN_ANCHOR])
                if refs is not None:
                    for index, offset in refs:
                        self._extend(hay, at, _SCAN_ANCHOR, index, offset, runs)
        found = []
        for start, end, index in runs:
            form = self.forms[index]
            whole = end - start == len(form.folded)
            first, last = view.span(start, end)
            gapped = last - first != end - start
            if (not whole or gapped) and _ordinary(text[first:last]):
                continue
            rank = 2 if not whole else (0 if form.whole_value else 1)
            found.append(Match(first, last, form.name, rank))
        return found

    def _extend(
        self, hay: str, at: int, size: int, index: int, offset: int, runs: set[tuple[int, int, int]]
    ) -> None:
        """The longest run of form ``index`` around its anchor at ``offset``, found at ``at``."""
        folded = self.forms[index].folded
        left = _common_suffix(hay[max(0, at - offset) : at], folded[:offset])
        rest = folded[offset + size :]
        right = _common_prefix(hay[at + size : at + size + len(rest)], rest)
        start, end = at - left, at + size + right
        if end - start >= self.forms[index].least:
            runs.add((start, end, index))

    def _table(self, *, scan: bool) -> dict[str, list[tuple[int, int]]]:
        """The anchors, made on first use (many secrets are only ever scanned for)."""
        table = self._tables.get(scan)
        if table is None:
            table = self._tables[scan] = _anchors(self.forms, scan=scan)
        return table


def _anchors(forms: list[_Form], *, scan: bool) -> dict[str, list[tuple[int, int]]]:
    """anchor -> (form, offset) for every form: slices of ``size`` characters
    at offsets such that every run of ``least`` characters holds one whole
    (``scan``: all of ``_SCAN_ANCHOR`` characters)."""
    table: dict[str, list[tuple[int, int]]] = {}
    for index, form in enumerate(forms):
        n, least = len(form.folded), form.least
        size = _SCAN_ANCHOR if scan else min(least, max(MIN_LENGTH, least // 2))
        offsets = list(range(0, n - least + 1, least - size + 1))
        if offsets[-1] != n - least:
            offsets.append(n - least)
        for offset in offsets:
            table.setdefault(form.folded[offset : offset + size], []).append((index, offset))
    return table


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n - 1  # a[:lo] == b[:lo], a[:hi + 1] != b[:hi + 1]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str) -> int:
    return _common_prefix(a[::-1], b[::-1])


def _ordinary(text: str) -> bool:
    """Whether ``text`` reads as ordinary words: no digit; words (split at
    separators and capitals) none of which is a lone letter (but "a" and
    "I") nor two letters with a capital; a quarter of the letters vowels
    and no five consonants in a row. A random piece of a key or of base64
    does not read so."""
    if any(c.isdigit() for c in text):
        return False
    words = _LETTERS.findall(text)
    letters = "".join(words)
    if not letters:
        return True
    for word in words:
        if (len(word) == 1 and word not in "aAI") or (len(word) == 2 and not word.islower()):
            return False
    vowels = sum(c in _VOWELS for c in letters)
    return vowels * 4 >= len(letters) and not _CONSONANTS.search(letters)
