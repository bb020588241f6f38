"""An exit 2 the sandbox caused is a failure, never a block.

Claude Code's hooks block with exit code 2. Programs also exit 2 on their own
errors: ``uv`` when it cannot make its cache, ``sh`` when a redirection
cannot create its file, ``python3`` when it cannot open its script. Inside
the sandbox those errors are the sandbox refusing something (a read-only
folder, a hidden one, no network), and reading them as a block would block
every prompt or call.

A hook's exit 2 is read as the sandbox's doing only when both hold:

* the hook never read the event it was given (its stdin pipe still holds
  every byte, as the kernel counts them): a hook that judged the event read
  it first, and text from the event, which the model shapes, never reached
  a hook that did not read it;
* what it printed names an error the sandbox causes, as programs word it
  (``Read-only file system``, ``[Errno 13]``, ``(os error 30)``, ``EACCES``,
  with the network off ``Network is unreachable`` and failed name lookups,
  and a script that cannot be opened). A plain "Permission denied" is not
  enough: a guard may say that on purpose.

Everything else keeps its meaning: a hook that read the event and exits 2
blocks, whatever it printed.
"""

from __future__ import annotations

import re

__all__ = ["refusal_failure", "sandbox_refusal"]

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


def refusal_failure(line: str, kind: str) -> str:
    """Why the exit 2 is a failure, naming the setting that lets it through."""
    if kind == "network":
        fix = "the sandbox's network is off (sandbox.network: on lets hooks reach it)"
    else:
        fix = (
            "inside the sandbox a hook may write the project, /tmp and its own cache folder "
            "($XDG_CACHE_HOME); add another folder it needs to sandbox.allow_write in "
            "~/.mewcode/config.yaml"
        )
    return (
        f"exit 2 before it read the event, with an error the sandbox causes ({line}): "
        f"not a block; {fix}"
    )
