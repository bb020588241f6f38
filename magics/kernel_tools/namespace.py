"""What the kernel's user namespace holds, described for the model.

The user's variables are the names a person defined: not modules, not
names starting with ``_``, not what IPython put there at start
(``user_ns_hidden``: ``In``, ``Out``, ``exit``...), not MewCode's own
objects. Each is described by its type, shape or length, memory size and
a short repr; a pandas DataFrame by its columns, dtypes, missing values and
head (pandas is never imported here: a frame can only exist if the user
imported it).

Secrets stay out: a name that looks secret (``api_key``, ``*_token``,
``*secret*``, ``*password*``: ``core.redaction.looks_secret``) shows no
value, whether it is a variable, a dict key (also in a dict's items, its
views, a ``(name, value)`` pair), an attribute, a field of a repr
(``token=...``), a DataFrame column, a Series' name, a row's label or an
index's name; anything shaped like a credential (``sk-...``, GitHub tokens,
a JWT, a password in a URL...) is masked wherever it appears, in each
string before a repr shortens it (a cut key would no longer look like one)
and in the whole text after. A frame, Series or index inside another value
shows only its type and shape: its repr would show its values whatever
their column.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import linecache
import re
import reprlib
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from mewcode_kernel.core.redaction import (
    credentials_in,
    looks_like_key,
    looks_secret,
    mask_credentials,
)

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


# a string literal, as code and reprs write it: a prefix (r, b, f, rb...),
# one quote or three (three may span lines), backslash escapes
_PREFIX = r"(?i:rb|br|fr|rf|[rbuf])?"
_LITERAL = (
    _PREFIX + r"""(?P<q>(?P<tq>\"\"\"|''')|['"])"""
    r"""(?P<quoted>(?(tq)[\s\S]*?|(?:\\.|(?!(?P=q))[^\n\\])+))(?P=q)"""
)
_ANY_LITERAL = (
    _PREFIX + r"""(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')"""
)
# an annotation before a default: api_key: str = "...", token: Optional[str] = "..."
_ANNOTATION = r"[A-Za-z_][\w.]*(?:\[[^\n=]*\])?(?:\s*\|\s*[A-Za-z_][\w.]*(?:\[[^\n=]*\])?)*"


def _field(code: bool) -> re.Pattern[str]:
    """A value under a name, as reprs, logs, settings and code write it:
    quoted (``api_key='...'``, ``'token': '...'``, ``environ["API_KEY"] =
    "..."``, ``password = r\"\"\"...\"\"\"``, ``setdefault("API_KEY", "...")``:
    the name quoted after ``(``), each string of a tuple or list
    (``auth = ("user", "...")``), in code after an annotation
    (``api_key: str = "..."``); or not quoted (``<Client token=...>``,
    ``PASSWORD=...``, ``password: ...``: up to a space, a comma or a closing
    bracket). Whether the name looks secret is ``looks_secret``'s to say."""
    annotated = rf":\s*{_ANNOTATION}\s*=(?!=)|" if code else ""
    return re.compile(
        r"""(?:(?P<call>\(\s*(?P<cq>['"]))|(?<![\w.\-]))(?P<name>[A-Za-z_][\w.\-]*)"""
        r"""(?P<sep>(?(call)(?P=cq)\s*,\s*|['"]?\]?(?:\[[^\]\n]*\])*\s*"""
        rf"""(?:{annotated}:=?|=(?!=))\s*))"""
        rf"""(?:{_LITERAL}"""
        rf"""|(?P<seq>[(\[]\s*{_ANY_LITERAL}(?:\s*,\s*{_ANY_LITERAL})*\s*,?\s*[)\]])"""
        rf"""|(?!{re.escape(MASKED)})(?P<bare>(?:(?i:basic|bearer|digest|token)\s+)?[^\s,)>\]}}'"]+))"""
    )


_FIELD = _field(code=False)
_CODE_FIELD = _field(code=True)
# each string of a tuple or list after a secret name
_SEQ_LITERAL = re.compile(
    rf"""(?P<pre>{_PREFIX}(?P<q>\"\"\"|'''|['"]))(?P<quoted>(?:\\.|(?!(?P=q))[\s\S])*)(?P=q)"""
)
# unquoted words after a secret name that are no secret: an annotation
# (``api_key: str``), a switch, nothing
_NOT_VALUES = frozenset({"None", "True", "False", "null", "true", "false", "str", "bytes"})
# a line that sets environment variables, whose values are not quoted even in
# code: %env NAME=value, %set_env NAME value, export NAME=value (!export, a
# %%bash cell), and IPython's rewriting of them: run_line_magic('env', ...)
_ENV_LINE = re.compile(
    r"""^.*(?:%(?:set_)?env\b|(?<![\w.])export[ \t]|['"](?:set_)?env['"]\s*,).*$""", re.M
)
_ENV_SPACED = re.compile(
    r"""(?:%(?:set_)?env|['"](?:set_)?env['"]\s*,\s*['"])[ \t]*"""
    r"""(?P<name>[A-Za-z_]\w*)[ \t]+(?P<value>"[^"\n]*"|'[^'\n]*'|[^\s'"]+)"""
)


def _mask_env_line(line: str, found: list[str] | None) -> str:
    """A line that sets environment variables, each value of a secret name masked."""

    def spaced(m: re.Match[str]) -> str:
        value = m["value"]
        if not looks_secret(m["name"]) or value == MASKED:
            return m[0]
        quote = value[0] if value[0] in "'\"" else ""
        if found is not None:
            found.append(value.strip("'\""))
        return m[0][: m.start("value") - m.start()] + quote + MASKED + quote

    return _mask_fields(_ENV_SPACED.sub(spaced, line), unquoted=True, found=found)


def _mask_fields(text: str, unquoted: bool, found: list[str] | None = None) -> str:
    out: list[str] = []
    done = pos = 0
    field = _FIELD if unquoted else _CODE_FIELD
    while m := field.search(text, pos):
        if not looks_secret(m["name"]):
            # what follows another name may hold a field: "error: password=...",
            # environ["API_KEY"] = "..."
            pos = m.end("name")
            continue
        pos = m.end()
        if m["q"] is not None:
            out += [text[done : m.start("quoted")], MASKED]
            done = m.end("quoted")
            masked = [m["quoted"]]
        elif m["seq"] is not None:
            masked = [s["quoted"] for s in _SEQ_LITERAL.finditer(m["seq"])]
            seq = _SEQ_LITERAL.sub(lambda s: f"{s['pre']}{MASKED}{s['q']}", m["seq"])
            out += [text[done : m.start("seq")], seq]
            done = m.end("seq")
        elif m["call"] is None and _bare_value(m, text, unquoted):
            out += [text[done : m.start("bare")], MASKED]
            done = m.end()
            masked = [m["bare"]]
        else:
            masked = []
        if found is not None:
            found += masked
    return "".join(out) + text[done:]


def _bare_value(m: re.Match[str], text: str, unquoted: bool) -> bool:
    """Whether an unquoted value after a secret name is one: in text, unless
    it is a word like ``None``; in code, only inside a string (the name
    right after the quote that opens it: ``'API_KEY=...'``), unless it is a
    placeholder (``f"token={token}"``, ``"password=%s"``)."""
    bare = m["bare"]
    if bare in _NOT_VALUES:
        return False
    if unquoted:
        return True
    start = m.start("name")
    in_string = start > 0 and text[start - 1] in "'\"" and m["sep"][:1] not in ("'", '"')
    return in_string and not bare.startswith(("{", "%"))


def mask_keys(text: str, *, unquoted: bool = True, found: list[str] | None = None) -> str:
    """``text`` with anything shaped like a credential, or under a name that
    looks secret, replaced by ``[masked]``. ``unquoted=False`` masks only
    literal values after a name, and what a line setting environment
    variables sets: for code (``token = get_token()``) and for text laid
    out here (``api_key: object, 0 missing``). ``found`` receives the values
    masked."""
    if found is not None:
        found += credentials_in(text)
    # credentials first: a query string's value ends at "&" or "#", a field's at a space
    text = mask_credentials(text, MASKED)
    text = _ENV_LINE.sub(lambda m: _mask_env_line(m[0], found), text)
    return _mask_fields(text, unquoted, found)


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


def _pandas_kind(value: Any) -> str | None:
    """``"DataFrame"``, ``"Series"`` or ``"Index"`` for a pandas object of that
    kind or a subclass (a GeoDataFrame), else ``None``. pandas is imported
    already if the value is one of its objects."""
    pd = sys.modules.get("pandas")
    if pd is None or isinstance(value, type):
        return None
    for kind in ("DataFrame", "Series", "Index"):
        if isinstance(value, getattr(pd, kind, ())):
            return kind
    return None


def _is_frame(value: Any) -> bool:
    return _pandas_kind(value) == "DataFrame"


def _is_series(value: Any) -> bool:
    return _pandas_kind(value) == "Series"


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


# a value shaped like a token: long, one piece, letters and digits
_TOKEN = re.compile(r"(?=[^\d]*\d)(?=[^A-Za-z]*[A-Za-z])[A-Za-z0-9_\-+/=.]{20,}")
_TOKENS_CHECKED = 100_000


def _token_like(value: Any) -> bool:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return isinstance(value, str) and (
        looks_like_key(value) or _TOKEN.fullmatch(value.strip()) is not None
    )


def _secret_label(label: Any, values: Iterable[Any]) -> bool:
    """Whether a column, a row or an index named ``label`` and holding
    ``values`` holds secrets: its name looks secret, except a lone ``key``,
    pandas' name for a column to join on (``pd.merge(left, right,
    on="key")``), whose values are secrets only if one looks like a token."""
    name = str(label)
    if not looks_secret(name):
        return False
    if name.strip().lower() != "key":
        return True
    return any(_token_like(v) for v in itertools.islice(values, _TOKENS_CHECKED))


def _secret_columns(df: Any) -> list[Any]:
    return [c for i, c in enumerate(df.columns) if _secret_label(c, df.iloc[:, i])]


def _secret_labels(index: Any, values_at: Callable[[int], Iterable[Any]]) -> list[bool] | None:
    """For each label of ``index``, whether it names a secret (the rows of a
    transposed frame, the labels of a row taken out of a frame; the values
    under the label ``i`` are ``values_at(i)``); ``None`` when none does."""
    if getattr(index.dtype, "kind", "O") in "biufcmM":  # numbers and dates name nothing
        return None
    found = [_secret_label(label, values_at(i)) for i, label in enumerate(index)]
    return found if any(found) else None


def _row(df: Any) -> Callable[[int], Iterable[Any]]:
    return lambda i: df.iloc[i]


def _secret_axis(index: Any) -> bool:
    """Whether ``index`` is named like a secret: its labels are then the
    secrets (``df.set_index("api_key")``)."""
    return any(
        n is not None and _secret_label(n, index.get_level_values(i))
        for i, n in enumerate(index.names)
    )


def _masked_cell(v: Any) -> Any:
    return mask_keys(v) if isinstance(v, str) else v


def _without_secrets(df: Any, *, source: Any = None) -> Any:
    """A copy of (a few rows of) ``df`` whose columns and rows named like
    secrets hold ``[masked]``, whose labels are masked when their axis is
    named like a secret (in ``source``, the frame ``df`` was computed from),
    and whose text cells are masked before ``to_string`` cuts them."""
    source = df if source is None else source
    df = df.copy()
    for col in _secret_columns(df):
        df[col] = MASKED
    rows = _secret_labels(df.index, _row(df))
    if rows:
        df = df.astype(object)  # a row across columns of any dtype
        df.loc[rows] = MASKED
    cells = getattr(df, "map", None) or df.applymap  # DataFrame.map: pandas 2.1 and later
    df = cells(_masked_cell)
    if _secret_axis(df.index):
        df.index = [MASKED] * len(df.index)
    if _secret_axis(source.columns):
        df.columns = [MASKED] * len(df.columns)
    return df


def _frame_summary(df: Any, *, rows: int) -> list[str]:
    lines = []
    columns = list(df.columns)
    if _secret_axis(df.columns):
        columns = [MASKED] * len(columns)
    dtypes = df.dtypes
    nulls = None
    try:
        nulls = df.isna().sum()
    except Exception:  # an exotic frame: leave the counts out
        pass
    shown = columns[:MAX_COLUMNS]
    lines.append("columns (dtype, missing values):")
    # by position: the labels may repeat, or be masked
    for i, col in enumerate(shown):
        missing = f", {int(nulls.iloc[i])} missing" if nulls is not None else ""
        lines.append(f"  {mask_keys(str(col))}: {dtypes.iloc[i]}{missing}")
    if len(columns) > len(shown):
        lines.append(f"  … and {len(columns) - len(shown)} more columns")
    try:
        head = _without_secrets(df.head(rows)).to_string(max_cols=20, max_colwidth=40)
    except Exception as exc:
        head = f"<head failed: {type(exc).__name__}: {exc}>"
    lines.append(f"head({rows}):")
    lines += ["  " + ln for ln in head.splitlines()]
    return lines


def _cut(text: str, limit: int) -> str:
    """``text`` cut in the middle to ``limit`` characters, as ``reprlib`` does."""
    if len(text) <= limit:
        return text
    i = max(0, (limit - 3) // 2)
    j = max(0, limit - 3 - i)
    return text[:i] + "..." + text[len(text) - j :]


def _pandas_repr(value: Any, r: reprlib.Repr) -> str:
    """The repr of the first values of a Series or an index (their name is
    no secret's: ``_secret_value``), with the values under labels named like
    secrets masked, and the labels when the index is named like a secret."""
    n = r.maxlist
    try:
        if _is_series(value):
            head = value.iloc[:n].astype(object)  # a copy that can hold [masked]
            head = head.map(_masked_cell)
            labels = _secret_labels(head.index, lambda i: [head.iloc[i]])
            if labels:
                head.loc[labels] = MASKED
            if _secret_axis(head.index):
                head.index = [MASKED] * len(head)
        else:
            head = value[:n]
            if head.nlevels == 1:
                head = head.map(_masked_cell)
        text = repr(head)
        if len(value) > n:
            text += f"\n… and {len(value) - n} more"
    except Exception as exc:
        text = f"<repr failed: {type(exc).__name__}: {exc}>"
    return mask_keys(_cut(text, r.maxother))


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
