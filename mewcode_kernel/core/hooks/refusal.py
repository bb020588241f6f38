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

from ..sandbox.refusals import sandbox_refusal

__all__ = ["refusal_failure", "sandbox_refusal"]


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
