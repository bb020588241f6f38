"""The secret values a notebook holds, collected to be masked by value.

Masking by name (``namespace``) hides a value where its name is shown: a
variable, a dict key, a column, a field. A copy can travel without its
name: ``df.values``, ``df["password"].tolist()``, ``np.asarray(df)``, an
array bound to an innocuous name, an exception's message (``f"bad
{password}"``), a URL in a ``requests`` error. So the values themselves are
collected from wherever a name says they are secret (variables, dict keys,
DataFrame columns, index levels and rows, Series, fields of a structured
array, attributes and fields of objects, the locals of a traceback's
frames, literals a cell sets under a secret name), with the credentials
found in any string, and masked by value in everything the kernel tools
return (``notebook_redactor``: a ``core.redaction.Redactor``, so also
base64, hex, reversed, or a piece of half or more).

Collecting is bounded: at most ``MAX_VALUES`` values, and of a long column
or array its first and last ``EDGE`` values (what reprs show); a value taken
from the middle of a longer one may then be shown by value (its name is
still masked).
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
import types
from collections.abc import Iterable, Iterator
from typing import Any

from mewcode_kernel.core.redaction import MIN_LENGTH, Redactor, credentials_in, looks_secret

from .frames import _pandas_kind, _secret_axis, _secret_columns, _secret_label, _secret_labels
from .masked_repr import _fields
from .masking import mask_keys
from .namespace import _ours, user_variables

__all__ = ["MAX_VALUES", "cell_secrets", "notebook_redactor", "traceback_secrets"]

MAX_VALUES = 2000
EDGE = 500
_DEPTH = 4
_ITEMS = 200  # of a container looked into for secret-named parts
# with few values, every form the redactor knows; with many, the common ones
_EVERY_FORM_UP_TO = 64

Pairs = list[tuple[str, str]]


class _Collector:
    def __init__(self) -> None:
        self.found: dict[str, str] = {}  # value -> name
        self._seen: set[int] = set()

    @property
    def full(self) -> bool:
        return len(self.found) >= MAX_VALUES

    def add(self, name: str, value: Any) -> None:
        text = _text(value)
        if text is not None and len(text.strip()) >= MIN_LENGTH and not self.full:
            self.found.setdefault(text.strip(), name)

    def secret(self, name: str, value: Any, depth: int = 0) -> None:
        """``value`` is secret as a whole (its name says so): every value in it."""
        if self.full or depth > _DEPTH or not self._first_visit(value):
            return
        if _text(value) is not None:
            self.add(name, value)
            return
        parts = _named_parts(value)
        if parts is not None:
            # of {"username": ..., "password": ...} only the password is secret
            secret = [(k, v) for k, v in parts if looks_secret(k)]
            for key, part in secret or parts:
                self.secret(f"{name}.{key}", part, depth + 1)
            return
        for item in _values(value):
            self.secret(name, item, depth + 1)

    def look(self, name: str, value: Any, depth: int = 0) -> None:
        """``value`` is not secret by its name: the secret-named parts of it,
        and the credentials in its strings."""
        if self.full or depth > _DEPTH or not self._first_visit(value):
            return
        text = _text(value)
        if text is not None:
            for credential in credentials_in(text):
                self.add(name, credential)
            return
        kind = _pandas_kind(value)
        if kind is not None:
            self._pandas(name, value, kind)
            return
        fields = _structured_fields(value)
        if fields:
            for field in fields:
                self.secret(field, value[field], depth + 1)
            return
        parts = _named_parts(value)
        if parts is not None:
            for key, part in parts[:_ITEMS]:
                if looks_secret(key):
                    self.secret(key, part, depth + 1)
                else:
                    self.look(f"{name}.{key}", part, depth + 1)
            return
        if isinstance(value, (list, tuple, set, frozenset)):
            for item in itertools.islice(value, _ITEMS):
                self.look(name, item, depth + 1)

    def _pandas(self, name: str, value: Any, kind: str) -> None:
        if kind == "DataFrame":
            for column in _secret_columns(value):
                self.secret(str(column), value[column])
            # a transposed frame's rows are named like columns (a long index is data)
            short = len(value.index) <= _ITEMS
            rows = _secret_labels(value.index, lambda i: value.iloc[i]) if short else None
            for i, secret in enumerate(rows or ()):
                if secret:
                    self.secret(str(value.index[i]), value.iloc[i])
            axes = (value.index, value.columns)
        elif kind == "Series":
            if _secret_label(value.name, value):
                self.secret(str(value.name), value)
            short = len(value.index) <= _ITEMS
            rows = _secret_labels(value.index, lambda i: [value.iloc[i]]) if short else None
            for i, secret in enumerate(rows or ()):
                if secret:
                    self.add(str(value.index[i]), value.iloc[i])
            axes = (value.index,)
        else:
            axes = (value,)
        for axis in axes:
            if _secret_axis(axis):
                self.secret(str(axis.names), list(_edges(list(axis))))

    def _first_visit(self, value: Any) -> bool:
        if isinstance(value, (str, bytes, int, float, type(None))):
            return True
        if id(value) in self._seen:
            return False
        self._seen.add(id(value))
        return True


def notebook_redactor(shell: Any, extra: Iterable[tuple[str, str]] = ()) -> Redactor:
    """A redactor for the secret values of ``shell``'s namespace, with ``extra``."""
    found = _Collector()
    for name, value in extra:
        found.add(name, value)
    for name, value in user_variables(shell):
        if found.full:
            break
        if looks_secret(name):
            found.secret(name, value)
        else:
            found.look(name, value)
    return _cached([(name, value) for value, name in found.found.items()])


def traceback_secrets(error: BaseException) -> Pairs:
    """The secret values the frames of ``error`` (and the errors it came from) held."""
    found = _Collector()
    for exc in _chain(error):
        tb = exc.__traceback__
        while tb is not None and not found.full:
            for name, value in list(tb.tb_frame.f_locals.items()):
                if name.startswith("__") or _ours(value) or isinstance(value, types.ModuleType):
                    continue
                if looks_secret(name):
                    found.secret(name, value)
                else:
                    found.look(name, value, depth=_DEPTH - 1)
            tb = tb.tb_next
    return [(name, value) for value, name in found.found.items()]


def cell_secrets(code: str) -> Pairs:
    """The literals ``code`` sets under secret names, and the credentials in it."""
    found: list[str] = []
    mask_keys(code, unquoted=False, found=found)
    return found_secrets(found)


def found_secrets(found: list[str]) -> Pairs:
    """The values ``mask_keys(..., found=found)`` masked in cells, long enough to redact."""
    return [("cell", value) for value in found if len(value.strip()) >= MIN_LENGTH]


_last: tuple[frozenset[tuple[str, str]], Redactor] | None = None


def _cached(pairs: Pairs) -> Redactor:
    """The redactor of ``pairs`` (the last one is kept: the namespace rarely changes
    between two tool calls, and many values take a while to expand)."""
    global _last
    key = frozenset(pairs)
    if _last is None or _last[0] != key:
        _last = (key, Redactor(pairs, every_form=len(pairs) <= _EVERY_FORM_UP_TO))
    return _last[1]


def _text(value: Any) -> str | None:
    """A scalar as the text it prints as (``None``: not a scalar)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, (np.str_, np.bytes_, np.integer)):
        return _text(value.item())
    return None


def _named_parts(value: Any) -> list[tuple[str, Any]] | None:
    """(name, part) of a mapping, a dataclass, a named tuple, a namespace or
    a plain object's attributes; ``None`` for other values."""
    if isinstance(value, dict):  # a subclass's own methods are the user's code: not run
        return [(str(k), v) for k, v in itertools.islice(dict.items(value), _ITEMS)]
    fields = _fields(value)
    if fields is not None:
        return fields
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [(f.name, getattr(value, f.name, None)) for f in dataclasses.fields(value)]
    if isinstance(value, (type, types.ModuleType, types.FunctionType, types.MethodType)):
        return None
    try:  # not through the class's own __getattr__
        attributes = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return None
    if isinstance(attributes, dict) and not _pandas_kind(value):
        return list(itertools.islice(attributes.items(), _ITEMS))
    return None


def _structured_fields(value: Any) -> tuple[str, ...]:
    """The secret-named fields of a numpy structured array."""
    names = getattr(getattr(value, "dtype", None), "names", None)
    np = sys.modules.get("numpy")
    if not names or np is None or not isinstance(value, np.ndarray):
        return ()
    return tuple(n for n in names if looks_secret(n))


def _values(value: Any) -> Iterator[Any]:
    """The values in a container, a pandas object or an array: its first
    and last ``EDGE`` (a repr shows its ends)."""
    if _pandas_kind(value) == "DataFrame":
        value = value.to_numpy()
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.ndarray):
        yield from _edges(value.ravel())
    elif _pandas_kind(value) is not None:
        yield from _edges(value.to_numpy())
    elif isinstance(value, (list, tuple)):
        yield from _edges(value)
    elif isinstance(value, (set, frozenset)):
        yield from itertools.islice(value, 2 * EDGE)


def _edges(items: Any) -> Any:
    n = len(items)
    if n <= 2 * EDGE:
        return items
    return itertools.chain(items[:EDGE], items[n - EDGE :])


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException] = [error]
    while todo:
        exc = todo.pop()
        if id(exc) in seen:
            continue
        seen.add(id(exc))
        yield exc
        todo += [e for e in (exc.__cause__, exc.__context__) if e is not None]
        todo += list(getattr(exc, "exceptions", ()))  # an ExceptionGroup's
