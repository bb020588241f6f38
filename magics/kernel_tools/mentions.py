"""``@var`` in an agent cell's body: the variable's summary joins the prompt.

``@name`` (or ``@name.attr``) counts where it starts a word (after a space,
a line start or an opening bracket or quote) and names a variable of the
notebook; anything else (``user@example.com``, a decorator of a pasted
snippet, a name the notebook does not define) is left as written. The
prompt keeps its text; the summaries (``namespace.describe``: type, shape,
size, a short repr, a DataFrame's columns, dtypes and head) travel as
context of that turn only, read when the cell runs. The secret values of
the namespace are masked in them by value (``secret_values``).
"""

from __future__ import annotations

import re
from typing import Any

from .namespace import describe, find_variable
from .secret_values import notebook_redactor

__all__ = ["MAX_MENTIONS", "mention_context", "mentioned"]

MAX_MENTIONS = 10
_MENTION = re.compile(
    r"(?:(?<=^)|(?<=[\s(\[{'\"`]))@([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)", re.M
)


def mentioned(shell: Any, prompt: str) -> list[str]:
    """The variable names ``prompt`` mentions with ``@``, in order, each once."""
    found: list[str] = []
    for match in _MENTION.finditer(prompt):
        name = match.group(1).rstrip(".")
        try:
            find_variable(shell, name)
        except KeyError:
            continue
        if name not in found:
            found.append(name)
    return found[:MAX_MENTIONS]


def mention_context(shell: Any, prompt: str) -> str | None:
    """The context block for the variables ``prompt`` mentions (``None``: none)."""
    names = mentioned(shell, prompt)
    if not names:
        return None
    summaries = [describe(name, find_variable(shell, name)) for name in names]
    return notebook_redactor(shell).redact(
        "The user attached these notebook variables to the prompt with @name "
        "(their state when the cell ran):\n" + "\n".join(summaries)
    )
