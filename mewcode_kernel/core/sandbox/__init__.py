"""The OS sandbox for commands: bubblewrap on Linux.

``Sandbox`` (one per session) wraps a command line so it runs with the file
system read-only except the project root, a private temp directory and
``sandbox.allow_write``; with the paths ``Read(...)`` deny rules cover
hidden; in its own PID namespace and ``/proc``; with the network ``on`` or
``off``. Every spawner calls ``Sandbox.wrap(argv, cwd=...)``: the ``bash``
tool, hook commands and stdio MCP servers. ``detect`` finds bubblewrap
(``MEWCODE_BWRAP`` or ``PATH``) and checks once that it can start.
"""

from __future__ import annotations

from .bwrap import Network, SandboxPolicy, bwrap_argv
from .detect import BWRAP_ENV, SandboxSupport, detect, find_bwrap, probe
from .sandbox import PROTECTED, Sandbox, SandboxState

__all__ = [
    "BWRAP_ENV",
    "PROTECTED",
    "Network",
    "Sandbox",
    "SandboxPolicy",
    "SandboxState",
    "SandboxSupport",
    "bwrap_argv",
    "detect",
    "find_bwrap",
    "probe",
]
