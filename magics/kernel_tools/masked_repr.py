"""Reprs with secrets masked: ``reprlib`` with every string masked before it
is shortened, the value under a dict key, a field or a pair's name that
looks secret replaced, a pandas object inside another value shown only by
its type and shape (its repr would show its values whatever their column),
and signatures whose secret parameters' defaults are masked."""

from __future__ import annotations

import dataclasses
import inspect
import reprlib
import types
from collections.abc import Iterable, Mapping
from typing import Any

from mewcode_kernel.core.redaction import looks_secret

from .frames import _pandas_kind
from .masking import MASKED, mask_keys

SHORT_REPR = 120
LONG_REPR = 4000


class _Shown:
    """A value whose repr is ``text``: stands in for one in a repr built here."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


_MASK = _Shown(MASKED)


def _secret_key(key: Any) -> bool:
    return isinstance(key, str) and looks_secret(key)


def _masked_items(items: Iterable[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    return [(k, _MASK if _secret_key(k) else v) for k, v in items]


_DICT_VIEWS = (type({}.items()), type({}.values()))


class _MaskingRepr(reprlib.Repr):
    """``reprlib.Repr`` that masks a string before shortening it, the value
    under a dict key, a field or a pair's name that looks secret, and shows
    a pandas object inside another value as its type and shape."""

    def repr_str(self, x: str, level: int) -> str:
        return super().repr_str(mask_keys(x), level)

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        if any(_secret_key(k) for k in x):
            x = dict(_masked_items(x.items()))
        return super().repr_dict(x, level)

    def repr_tuple(self, x: tuple[Any, ...], level: int) -> str:
        # list(d.items()) and the like: ("password", "hunter2")
        if len(x) == 2 and _secret_key(x[0]):
            x = (x[0], _MASK)
        return super().repr_tuple(x, level)

    def repr_instance(self, x: Any, level: int) -> str:
        if _pandas_kind(x):
            shape = getattr(x, "shape", ())
            return f"<{type(x).__name__} {'x'.join(str(n) for n in shape)}>"
        # dict.items and the like: a subclass's own methods are the user's code, not run here
        if isinstance(x, dict):
            inner = self.repr_dict(dict(_masked_items(dict.items(x))), level)
            return f"{type(x).__name__}({inner})"
        if isinstance(x, _DICT_VIEWS) and isinstance(getattr(x, "mapping", None), Mapping):
            pairs = _masked_items(dict(x.mapping).items())
            shown: list[Any] = pairs if isinstance(x, _DICT_VIEWS[0]) else [v for _, v in pairs]
            return f"{type(x).__name__}({self.repr_list(shown, level)})"
        fields = _fields(x)
        if fields is not None:
            inner = ", ".join(
                f"{k}={self.repr1(_secret_like(v) if looks_secret(k) else v, level - 1)}"
                for k, v in fields
            )
            return f"{type(x).__name__}({inner})"
        return mask_keys(super().repr_instance(x, level))


def _secret_like(value: Any) -> Any:
    """What stands for a secret ``value``: ``'[masked]'`` for a string, as its repr would be."""
    return MASKED if isinstance(value, str) else _MASK


def _fields(x: Any) -> list[tuple[str, Any]] | None:
    """The fields of a dataclass, a named tuple or a ``SimpleNamespace``, for
    a repr built field by field (so that a frame in one is shown by its
    shape); ``None`` for other values and for a class with its own
    ``__repr__``, which may leave out what its author meant to hide."""
    t = type(x)
    if isinstance(x, types.SimpleNamespace) and t.__repr__ is types.SimpleNamespace.__repr__:
        return list(vars(x).items())
    if isinstance(x, tuple) and hasattr(t, "_fields"):
        # namedtuple writes its __repr__ in the collections module
        if getattr(t.__repr__, "__module__", None) != "collections":
            return None
        return list(zip(t._fields, x, strict=False))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        generated = getattr(inspect.unwrap(t.__repr__), "__code__", None)
        # dataclass writes its __repr__ from text (exec): its code has no file
        if generated is None or generated.co_filename != "<string>":
            return None
        return [(f.name, getattr(x, f.name, None)) for f in dataclasses.fields(x) if f.repr]
    return None


def _repr(chars: int, items: int) -> reprlib.Repr:
    r = _MaskingRepr()  # keyword arguments only from Python 3.12
    r.maxstring = r.maxother = chars
    r.maxlist = r.maxdict = r.maxtuple = r.maxset = items
    r.maxlevel = 4
    return r


_SHORT = _repr(SHORT_REPR, 8)
_LONG = _repr(LONG_REPR, 60)


def _safe_repr(value: Any, r: reprlib.Repr) -> str:
    try:
        text = r.repr(value)
    except Exception as exc:  # a broken __repr__ is the user's; say so, do not fail
        text = f"<repr failed: {type(exc).__name__}: {exc}>"
    return mask_keys(text)


def _signature(value: Any) -> str:
    """``name(parameters)`` with each default's repr masked, and a secret
    parameter's default replaced: the text needs no masking after, which
    would take an annotation (``api_key: 'str'``) for a value."""
    name = getattr(value, "__name__", "")
    try:
        sig = inspect.signature(value)
    except (TypeError, ValueError):
        return name
    params = [
        p
        if p.default is p.empty
        else p.replace(
            default=_MASK if looks_secret(p.name) else _Shown(_safe_repr(p.default, _SHORT))
        )
        for p in sig.parameters.values()
    ]
    return f"{name}{sig.replace(parameters=params)}"
