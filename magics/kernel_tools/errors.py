"""The last exception a notebook cell raised, kept for ``last_error``.

IPython's ``post_run_cell`` event gives each cell's result: its exception
and its source. Agent cells run in the same shell and are left out (their
own failures, ``AgentCellError`` and the like, are not the user's error),
so the error an agent sees is the one the person just hit. ``fresh`` says
the cell right before the agent cell raised, for the one line the turn's
context gets about it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..transformer import rewrite, rewrite_slash

__all__ = ["MAX_TRACEBACK", "CellNamer", "ErrorRecord", "ErrorTracker", "cell_namer"]

MAX_TRACEBACK = 8000
"""Characters of a traceback the model gets (its end is kept: where it raised)."""

CellNamer = Callable[[str], "str | None"]
"""The name of the notebook cell a code file holds (``In[3]``), or ``None``."""


def _no_name(filename: str) -> str | None:
    return None


@dataclass(frozen=True, slots=True)
class ErrorRecord:
    """One exception, the cell that raised it and that cell's number."""

    error: BaseException
    cell: str
    execution_count: int | None

    @property
    def headline(self) -> str:
        from .masking import mask_keys  # before the cut: a key cut in two is no longer found

        message = str(self.error).strip().splitlines()
        first = f": {mask_keys(message[0])[:160]}" if message else ""
        return f"{type(self.error).__name__}{first}"

    def secrets(self) -> list[tuple[str, str]]:
        """The secret values the error's frames held and the cell set (to be
        masked by value, wherever the message or traceback shows them)."""
        from .secret_values import cell_secrets, traceback_secrets

        return [*traceback_secrets(self.error), *cell_secrets(self.cell)]

    def report(
        self,
        *,
        root: Path | None = None,
        cell_name: CellNamer = _no_name,
        redact: Callable[[str], str] = lambda text: text,
    ) -> str:
        """The headline, the cell's source and the traceback as the model reads
        it: cells named ``In[N]``, files under ``root`` relative to it, runs
        of library frames (site-packages, the standard library) folded into
        one line each; credential-shaped text masked, and secret values by
        ``redact`` (before the traceback is cut)."""
        from .masking import mask_keys  # the core's patterns: loaded with the first turn

        tb = redact(_traceback(self.error, root, cell_name))
        if len(tb) > MAX_TRACEBACK:
            tb = "[… the start of the traceback is cut]\n" + tb[-MAX_TRACEBACK:]
        # code masks only quoted values: ``token = get_token()`` names none, and
        # the model reads the cell to fix it; the message is masked in full
        cell = mask_keys(self.cell.rstrip(), unquoted=False)
        return redact(
            mask_keys(
                f"{self.headline}\n\nThe cell that raised it:\n{cell}\n\n{tb}", unquoted=False
            )
        )


def _redact_with(secrets: list[tuple[str, str]], text: str) -> str:
    from mewcode_kernel.core.redaction import Redactor

    return Redactor(secrets).redact(text)


def _library(filename: str) -> str | None:
    """The package a library file belongs to (``None``: not library code)."""
    parts = Path(filename).parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            rest = parts[parts.index(marker) + 1 :]
            return rest[0].removesuffix(".py") if rest else marker
    for prefix in {sys.base_prefix, sys.prefix}:
        if filename.startswith(os.path.join(prefix, "lib")):
            return "the standard library"
    return None


def _where(filename: str, root: Path | None, cell_name: CellNamer, raising: str | None) -> str:
    name = cell_name(filename)
    if name:
        # the raising cell's number changes from run to run (nbval counts from 1
        # again): it is "the cell", the source shown above; others keep In[N]
        return "the cell" if filename == raising else name
    if root is not None:
        with contextlib.suppress(ValueError):
            return str(Path(filename).relative_to(root))
    return filename


def _traceback(error: BaseException, root: Path | None, cell_name: CellNamer) -> str:
    """The traceback, masked before it is cut: its source lines as code, its
    message in full."""
    from .masking import mask_keys

    te = traceback.TracebackException.from_exception(error)
    lines = ["Traceback (most recent call last):"]
    folded: list[str] = []

    def fold() -> None:
        if folded:
            packages = ", ".join(dict.fromkeys(folded))
            lines.append(f"  … {len(folded)} frame(s) in {packages}")
            folded.clear()

    raising = next((f.filename for f in te.stack if cell_name(f.filename)), None)
    for frame in te.stack:
        package = _library(frame.filename)
        if package is not None:
            folded.append(package)
            continue
        fold()
        lines.append(
            f'  File "{_where(frame.filename, root, cell_name, raising)}", line {frame.lineno}, in {frame.name}'
        )
        if frame.line:
            lines.append(f"    {mask_keys(frame.line.strip(), unquoted=False)}")
    fold()
    lines += [mask_keys(ln.rstrip("\n")) for ln in te.format_exception_only()]
    return "\n".join(lines)


def _is_agent_cell(raw: str) -> bool:
    stripped = raw.lstrip()
    return rewrite(stripped) is not None or rewrite_slash(stripped) is not None


def cell_namer(shell: Any) -> CellNamer:
    """``In[N]`` for the files IPython compiled cells into (``shell.compile``)."""

    def name(filename: str) -> str | None:
        formatted = getattr(getattr(shell, "compile", None), "format_code_name", None)
        found = formatted(filename) if formatted is not None else None
        return found[1] if found else None

    return name


class ErrorTracker:
    """Follows one shell's cells (``post_run_cell``)."""

    def __init__(self) -> None:
        self.last: ErrorRecord | None = None
        self.fresh = False

    def post_run_cell(self, result: Any) -> None:
        info = getattr(result, "info", None)
        raw = getattr(info, "raw_cell", None) or ""
        if _is_agent_cell(raw):
            return
        error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
        if error is None:
            self.fresh = False
            return
        self.last = ErrorRecord(
            error=error, cell=raw, execution_count=getattr(result, "execution_count", None)
        )
        self.fresh = True

    def take_fresh(self) -> ErrorRecord | None:
        """The error of the cell just before, once (the next turn is offered it)."""
        if not self.fresh:
            return None
        self.fresh = False
        return self.last

    def context_line(self, shell: Any = None) -> str | None:
        """The one line a turn right after a failed cell gets (``None``: none);
        the secret values of ``shell``'s namespace and of the error masked."""
        record = self.take_fresh()
        if record is None:
            return None
        from .masking import mask_keys
        from .secret_values import notebook_redactor

        line = mask_keys(
            f"The user's last notebook cell raised {record.headline}; "
            "call last_error for its traceback and the cell's source."
        )
        extra = record.secrets()
        redactor = notebook_redactor(shell, extra) if shell is not None else None
        return redactor.redact(line) if redactor is not None else _redact_with(extra, line)
