"""The errors the sandbox causes, as programs word them: a read-only folder
(``Read-only file system``, ``EROFS``, ``(os error 30)``, ``[Errno 30]``),
a hidden one (``[Errno 13]``, ``EACCES``, a script that cannot be opened, a
folder that is not there in an empty stand-in), and with the network off a
host that cannot be reached or named. A plain "Permission denied" is not
one: a program may say that of its own accord.

Used to say why a hook or an MCP server failed in the sandbox, and which
setting lets it through; never, alone, to decide anything (``hooks.refusal``).
"""

from __future__ import annotations

import re

__all__ = ["sandbox_refusal"]

_FILES = re.compile(
    r"Read-only file system|\bEROFS\b|\(os error (?:30|13|1)\)|\[Errno (?:30|13|1)\]"
    r"|\bEACCES\b|\bEPERM\b|can't open file"
    r"|cannot create [^\n]*: (?:Permission denied|Directory nonexistent)"
)
_NETWORK = re.compile(
    r"Network is unreachable|\bENETUNREACH\b|\(os error 101\)|\[Errno 101\]"
    r"|Temporary failure in name resolution|\bEAI_AGAIN\b|dns error|\bENOTFOUND\b"
    r"|Name or service not known|\[Errno -[23]\]|\(os error -[23]\)"
)
_LINE_LIMIT = 300


def sandbox_refusal(text: str, *, network_off: bool) -> tuple[str, str] | None:
    """The first line of ``text`` naming an error the sandbox causes, and its
    kind (``files`` or ``network``); ``None`` if there is none."""
    for line in text.splitlines():
        if _FILES.search(line):
            return line.strip()[:_LINE_LIMIT], "files"
        if network_off and _NETWORK.search(line):
            return line.strip()[:_LINE_LIMIT], "network"
    return None
