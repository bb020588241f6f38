"""pandas objects with their secrets left out: a column, a row or an index
named like a secret (``api_key``; a lone ``key`` only when a value looks
like a token), shown ``[masked]`` in a frame's head and statistics and in a
Series' or an index's repr. pandas is never imported here: a frame can only
exist if the user imported it."""

from __future__ import annotations

import itertools
import re
import reprlib
import sys
from collections.abc import Callable, Iterable
from typing import Any

from mewcode_kernel.core.redaction import looks_like_key, looks_secret

from .masking import MASKED, mask_keys

MAX_COLUMNS = 40


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
