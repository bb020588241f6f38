"""What the kernel's user namespace holds, described for the model.

The user's variables are the names a person defined: not modules, not
names starting with ``_``, not what IPython put there at start
(``user_ns_hidden``: ``In``, ``Out``, ``exit``...), not MewCode's own
objects. Each is described by its type, shape or length, memory size and
a short repr; a pandas DataFrame by its columns, dtypes, missing values and
head (pandas is never imported here: a frame can only exist if the user
imported it).

Secrets stay out: a name that looks secret (``*key*``, ``*token*``,
``*secret*``, ``*password*``: ``core.redaction.looks_secret``) shows no
value, whether it is a variable, a dict key, an attribute or a DataFrame
column; anything shaped like a credential (``sk-...``, GitHub tokens, a
JWT, a password in a URL...) is masked wherever it appears, in each string
before a repr shortens it (a cut key would no longer look like one) and in
the whole text after.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import re
import reprlib
import sys
import types
from collections.abc import Iterator, Mapping
from typing import Any

from mewcode_kernel.core.redaction import looks_like_key, looks_secret, mask_credentials

__all__ = [
    "MASKED",
    "describe",
    "describe_in_depth",
    "find_variable",
    "mask_keys",
    "user_variables",
]

MASKED = "[masked]"
SHORT_REPR = 120
LONG_REPR = 4000
MAX_COLUMNS = 40
HEAD_ROWS = 5
_OURS = ("magics", "mewcode_kernel")


class _Masked:
    def __repr__(self) -> str:
        return MASKED


_MASK = _Masked()


class _MaskingRepr(reprlib.Repr):
    """``reprlib.Repr`` that masks a string before shortening it, and the value
    under a dict key that looks secret."""

    def repr_str(self, x: str, level: int) -> str:
        return super().repr_str(mask_keys(x), level)

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        if any(isinstance(k, str) and looks_secret(k) for k in x):
            x = {k: _MASK if isinstance(k, str) and looks_secret(k) else v for k, v in x.items()}
        return super().repr_dict(x, level)

    def repr_instance(self, x: Any, level: int) -> str:
        return mask_keys(super().repr_instance(x, level))


def _repr(chars: int, items: int) -> reprlib.Repr:
    r = _MaskingRepr()  # keyword arguments only from Python 3.12
    r.maxstring = r.maxother = chars
    r.maxlist = r.maxdict = r.maxtuple = r.maxset = items
    r.maxlevel = 4
    return r


_SHORT = _repr(SHORT_REPR, 8)
_LONG = _repr(LONG_REPR, 60)


# a quoted value under a name that looks secret, as reprs print it:
# ``api_key='...'`` (a dataclass), ``'token': '...'`` (a dict)
_SECRET_FIELD = re.compile(
    r"""(?i)\b(\w*(?:key|token|secret|passw(?:or)?d|passphrase|credential)\w*)"""
    r"""(['"]?\s*[:=]\s*)(['"])((?:(?!\3)[^\n]){4,})\3"""
)


def mask_keys(text: str) -> str:
    """``text`` with anything shaped like a credential, or quoted under a name
    that looks secret, replaced by ``[masked]``."""
    text = _SECRET_FIELD.sub(
        lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}{MASKED}{m.group(3)}", text
    )
    return mask_credentials(text, MASKED)


def _ours(value: Any) -> bool:
    module = getattr(type(value), "__module__", "") or ""
    return module.split(".")[0] in _OURS


def user_variables(shell: Any) -> Iterator[tuple[str, Any]]:
    """The user's variables, in the order they were defined."""
    hidden: Mapping[str, Any] = getattr(shell, "user_ns_hidden", {}) or {}
    missing = object()
    for name, value in list(shell.user_ns.items()):
        if name.startswith("_") or hidden.get(name, missing) is value:
            continue
        if isinstance(value, types.ModuleType) or _ours(value):
            continue
        yield name, value


def find_variable(shell: Any, name: str) -> Any:
    """The value of ``name`` (``a`` or ``a.b.c``: attributes, never calls).
    Raises ``KeyError`` naming what is missing."""
    head, *attrs = name.strip().split(".")
    if head not in shell.user_ns:
        raise KeyError(f"no variable named {head!r} in the notebook")
    value = shell.user_ns[head]
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


def _is_frame(value: Any) -> bool:
    return type(value).__module__.startswith("pandas") and type(value).__name__ == "DataFrame"


def _is_series(value: Any) -> bool:
    return type(value).__module__.startswith("pandas") and type(value).__name__ == "Series"


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
    if looks_secret(name.rsplit(".", 1)[-1]):
        return True
    return isinstance(value, (str, bytes)) and looks_like_key(
        value if isinstance(value, str) else value.decode("utf-8", "replace")
    )


def _safe_repr(value: Any, r: reprlib.Repr) -> str:
    try:
        text = r.repr(value)
    except Exception as exc:  # a broken __repr__ is the user's; say so, do not fail
        text = f"<repr failed: {type(exc).__name__}: {exc}>"
    return mask_keys(text)


def _signature(value: Any) -> str:
    try:
        return f"{getattr(value, '__name__', '')}{inspect.signature(value)}"
    except (TypeError, ValueError):
        return getattr(value, "__name__", "")


def _secret_columns(df: Any) -> list[Any]:
    return [c for c in df.columns if looks_secret(str(c))]


def _without_secrets(df: Any) -> Any:
    """A copy of (a few rows of) ``df`` whose columns named like secrets hold
    ``[masked]`` and whose text cells are masked before ``to_string`` cuts them."""
    df = df.copy()
    for col in _secret_columns(df):
        df[col] = MASKED
    cells = getattr(df, "map", None) or df.applymap  # DataFrame.map: pandas 2.1 and later
    return cells(lambda v: mask_keys(v) if isinstance(v, str) else v)


def _frame_summary(df: Any, *, rows: int) -> list[str]:
    lines = []
    columns = list(df.columns)
    dtypes = df.dtypes
    nulls = None
    try:
        nulls = df.isna().sum()
    except Exception:  # an exotic frame: leave the counts out
        pass
    shown = columns[:MAX_COLUMNS]
    lines.append("columns (dtype, missing values):")
    for col in shown:
        missing = f", {int(nulls[col])} missing" if nulls is not None else ""
        lines.append(f"  {col!s}: {dtypes[col]}{missing}")
    if len(columns) > len(shown):
        lines.append(f"  … and {len(columns) - len(shown)} more columns")
    try:
        head = _without_secrets(df.head(rows)).to_string(max_cols=20, max_colwidth=40)
    except Exception as exc:
        head = f"<head failed: {type(exc).__name__}: {exc}>"
    lines.append(f"head({rows}):")
    lines += ["  " + ln for ln in head.splitlines()]
    return lines


def describe(name: str, value: Any, *, rows: int = HEAD_ROWS) -> str:
    """One variable in a few lines: type, shape, size, a short repr (or a
    frame's columns and its first ``rows``); a secret's value masked."""
    facts = [f for f in (_type_name(value), _shape(value), _size(value)) if f]
    head = f"{name}: {', '.join(facts)}"
    if _secret_value(name, value):
        return f"{head}\n  value {MASKED} (it looks like a secret)"
    if _is_frame(value):
        text = "\n".join([head, *("  " + ln for ln in _frame_summary(value, rows=rows))])
    elif isinstance(value, (types.FunctionType, type, types.MethodType)):
        text = f"{head}\n  {_signature(value)}"
    else:
        text = f"{head}\n  {_safe_repr(value, _SHORT)}"
    return mask_keys(text)


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
    names = [n for n in dir(value) if not n.startswith("_")]
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
            stats = _without_secrets(shown.describe(include="all"))
            parts.append("describe():\n" + stats.to_string(max_cols=20))
        except Exception as exc:
            parts.append(f"describe() failed: {type(exc).__name__}: {exc}")
    elif not isinstance(value, (types.FunctionType, type)):
        parts.append("repr:\n" + _safe_repr(value, _LONG))
    source = _notebook_source(value) if callable(value) else None
    if source:
        parts.append("source (defined in the notebook):\n" + source.rstrip())
    elif callable(value):
        parts.append(f"signature: {_signature(value)}")
    attrs = _attributes(value)
    if attrs and not _is_frame(value):
        parts.append("attributes: " + attrs)
    return mask_keys("\n\n".join(parts))
