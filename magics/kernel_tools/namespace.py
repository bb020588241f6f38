"""What the kernel's user namespace holds, described for the model.

The user's variables are the names a person defined: not modules, not
names starting with ``_``, not what IPython put there at start
(``user_ns_hidden``: ``In``, ``Out``, ``exit``...), not MewCode's own
objects. Each is described by its type, shape or length, memory size and
a short repr; a pandas DataFrame by its columns, dtypes, missing values and
head (``frames``).

Secrets stay out: a name that looks secret (``api_key``, ``*_token``,
``*secret*``, ``*password*``: ``core.redaction.looks_secret``) shows no
value, whether it is a variable, a dict key (also in a dict's items, its
views, a ``(name, value)`` pair), an attribute, a field of a repr
(``token=...``), a DataFrame column, a Series' name, a row's label or an
index's name; anything shaped like a credential is masked wherever it
appears (``masking``, ``masked_repr``).
"""

from __future__ import annotations

import ast
import inspect
import linecache
import sys
import types
from collections.abc import Iterator, Mapping
from typing import Any

from mewcode_kernel.core.redaction import looks_like_key, looks_secret, mask_credentials

from .frames import (
    _frame_summary,
    _is_frame,
    _is_series,
    _pandas_kind,
    _pandas_repr,
    _row,
    _secret_axis,
    _secret_columns,
    _secret_label,
    _secret_labels,
    _without_secrets,
)
from .masked_repr import _LONG, _SHORT, _safe_repr, _signature
from .masking import MASKED, mask_keys

__all__ = [
    "MASKED",
    "describe",
    "describe_in_depth",
    "find_variable",
    "mask_keys",
    "user_variables",
]

HEAD_ROWS = 5
_OURS = ("magics", "mewcode_kernel")


def _ours(value: Any) -> bool:
    module = getattr(type(value), "__module__", "") or ""
    return module.split(".")[0] in _OURS


_MISSING = object()


def _not_the_users(shell: Any, name: str, value: Any) -> bool:
    """Whether ``name`` is IPython's or MewCode's, not the user's: a name
    starting with ``_`` (``_``, ``_i3``, ``_oh``), one IPython put there at
    start and still bound to the same object (``In``, ``Out``, ``exit``:
    ``user_ns_hidden``), or an object of MewCode. Cell history among them
    holds what the user typed: a key set with ``os.environ[...] = "..."``."""
    hidden: Mapping[str, Any] = getattr(shell, "user_ns_hidden", {}) or {}
    return name.startswith("_") or hidden.get(name, _MISSING) is value or _ours(value)


def user_variables(shell: Any) -> Iterator[tuple[str, Any]]:
    """The user's variables, in the order they were defined."""
    for name, value in list(shell.user_ns.items()):
        if _not_the_users(shell, name, value) or isinstance(value, types.ModuleType):
            continue
        yield name, value


def find_variable(shell: Any, name: str) -> Any:
    """The value of ``name`` (``a`` or ``a.b.c``: attributes, never calls),
    a variable ``user_variables`` would list or a module. Raises ``KeyError``
    naming what is missing or refused."""
    head, *attrs = name.strip().split(".")
    if head not in shell.user_ns:
        raise KeyError(f"no variable named {head!r} in the notebook")
    value = shell.user_ns[head]
    if _not_the_users(shell, head, value):
        raise KeyError(
            f"{head!r} is not a notebook variable (names starting with _, IPython's "
            "In, Out and the like, and MewCode's own objects are left out)"
        )
    for i, attr in enumerate(attrs):
        if not attr.isidentifier():
            raise KeyError(f"{name!r} is not a name or a dotted attribute path")
        try:
            value = getattr(value, attr)
        except Exception as exc:
            raise KeyError(f"{'.'.join([head, *attrs[: i + 1]])}: {exc}") from None
    return value


def _type_name(value: Any) -> str:
    t = type(value)
    module = t.__module__
    return t.__qualname__ if module in ("builtins", "__main__") else f"{module}.{t.__qualname__}"


def _shape(value: Any) -> str:
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and not isinstance(value, type):
        return "shape " + "×".join(str(n) for n in shape)
    if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)) or (
        hasattr(type(value), "__len__") and not isinstance(value, type)
    ):
        try:
            return f"len {len(value)}"
        except Exception:  # a __len__ that fails says nothing worth showing
            return ""
    return ""


def _size(value: Any) -> str:
    try:
        if _is_frame(value) or _is_series(value):
            n = int(
                value.memory_usage(deep=True).sum()
                if _is_frame(value)
                else value.memory_usage(deep=True)
            )
        elif isinstance(getattr(value, "nbytes", None), int):
            n = value.nbytes
        else:
            n = sys.getsizeof(value)
    except Exception:
        return ""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return ""


def _secret_value(name: str, value: Any) -> bool:
    # any step of a path: df.password.values is the password column's values
    if any(looks_secret(part) for part in name.split(".")):
        return True
    kind = _pandas_kind(value)
    # a column taken out of a frame keeps its name: df["api_key"]; an index its own
    if kind == "Series" and _secret_label(value.name, value):
        return True
    if kind == "Index" and _secret_axis(value):
        return True
    return isinstance(value, (str, bytes)) and looks_like_key(
        value if isinstance(value, str) else value.decode("utf-8", "replace")
    )


def describe(name: str, value: Any, *, rows: int = HEAD_ROWS) -> str:
    """One variable in a few lines: type, shape, size, a short repr (or a
    frame's columns and its first ``rows``); a secret's value masked."""
    facts = [f for f in (_type_name(value), _shape(value), _size(value)) if f]
    head = f"{name}: {', '.join(facts)}"
    if _secret_value(name, value):
        return f"{head}\n  value {MASKED} (it looks like a secret)"
    kind = _pandas_kind(value)
    if kind == "DataFrame":
        text = "\n".join([head, *("  " + ln for ln in _frame_summary(value, rows=rows))])
    elif kind is not None:
        text = f"{head}\n  {_pandas_repr(value, _SHORT)}"
    elif isinstance(value, (types.FunctionType, type, types.MethodType)):
        return mask_credentials(f"{head}\n  {_signature(value)}", MASKED)
    else:
        text = f"{head}\n  {_safe_repr(value, _SHORT)}"
    # the reprs are masked already; what is laid out around them holds no
    # unquoted value ("api_key: object, 0 missing" is a column's dtype)
    return mask_keys(text, unquoted=False)


def _notebook_source(value: Any) -> str | None:
    """The source of a function or class defined in a notebook cell (IPython
    keeps cell sources in ``linecache`` under ``ipykernel_*`` file names;
    ``run_python`` under ``<run_python-N>``), else ``None``: a library's or
    a project file's source is read with the file tools."""
    target = inspect.unwrap(value) if callable(value) else value
    try:
        filename = inspect.getsourcefile(target) or inspect.getfile(target)
    except (TypeError, OSError):
        # a class of a cell: __main__ has no file (before Python 3.13), its methods do
        return _cell_class_source(target) if isinstance(target, type) else None
    in_cell = "ipykernel_" in filename or filename.startswith("<")
    if not in_cell and getattr(target, "__module__", None) != "__main__":
        return None
    try:
        return inspect.getsource(target)
    except (OSError, TypeError):
        return None


def _cell_class_source(cls: type) -> str | None:
    """A cell-defined class's source, found through the file of one of its methods."""
    for member in vars(cls).values():
        if isinstance(member, (classmethod, staticmethod)):
            member = member.__func__
        code = getattr(inspect.unwrap(member), "__code__", None) if callable(member) else None
        if code is None or "ipykernel_" not in code.co_filename:
            continue
        lines = linecache.getlines(code.co_filename)
        try:
            tree = ast.parse("".join(lines))
        except SyntaxError:  # a cell IPython transformed: nothing to find it in
            return None
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ClassDef)
                and node.name == cls.__name__
                and node.lineno <= code.co_firstlineno <= (node.end_lineno or 0)
            ):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                return "".join(lines[start - 1 : node.end_lineno])
    return None


def _attributes(value: Any) -> str:
    # a pandas object lists its string labels as attributes: the values of an index named api_key
    names = [n for n in dir(type(value) if _pandas_kind(value) else value) if not n.startswith("_")]
    if not names:
        return ""
    shown = names[:60]
    more = f" … and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
    return ", ".join(shown) + more


def describe_in_depth(name: str, value: Any) -> str:
    """One variable in depth: the summary, a longer repr (or a frame's
    statistics and a longer head), its public attributes, and the source of
    a function or class defined in the notebook."""
    parts = [describe(name, value, rows=10)]
    if _secret_value(name, value):
        return parts[0]
    if _is_frame(value):
        try:
            # include="all" shows each text column's most frequent value: not a secret one's
            shown = value.drop(columns=_secret_columns(value))
            rows = _secret_labels(shown.index, _row(shown))
            if rows:
                shown = shown.loc[[not secret for secret in rows]]
            stats = _without_secrets(shown.describe(include="all"), source=value)
            parts.append("describe():\n" + mask_keys(stats.to_string(max_cols=20), unquoted=False))
        except Exception as exc:
            parts.append(f"describe() failed: {type(exc).__name__}: {exc}")
    elif _pandas_kind(value) is not None:
        parts.append("repr:\n" + _pandas_repr(value, _LONG))
    elif not isinstance(value, (types.FunctionType, type)):
        parts.append("repr:\n" + _safe_repr(value, _LONG))
    source = _notebook_source(value) if callable(value) else None
    if source:
        # code: a literal is quoted; ``token = get_token()`` names no value
        code = mask_keys(source.rstrip(), unquoted=False)
        parts.append("source (defined in the notebook):\n" + code)
    elif callable(value):
        parts.append(f"signature: {_signature(value)}")
    attrs = _attributes(value)
    if attrs and not _is_frame(value):
        parts.append("attributes: " + attrs)
    # each part is masked already, the way its text needs
    return mask_credentials("\n\n".join(parts), MASKED)
