"""The OS sandbox for commands: bubblewrap on Linux.

``Sandbox`` (one per session) wraps a command line so it runs with the file
system read-only except the project root, a private temp directory and
``sandbox.allow_write`` (or nothing at all: ``wrap(read_only=True)``); with
the paths ``Read(...)`` deny rules cover hidden, and the user's MewCode
folder hidden (its ``skills``, ``agents`` and ``hooks`` shown read-only);
with the protected project paths read-only whether or not they exist
(``protect.py``; an empty read-only folder stands in for a missing one while
the process runs, ``leases.py``); in its own PID namespace and ``/proc``;
with the network ``on`` or ``off`` (host unix sockets closed too,
``sockets.py``, ``seccomp.py``). Every spawner calls ``Sandbox.wrap(argv,
cwd=...)``: the ``bash`` tool, hook commands, stdio MCP servers and
run_python's child processes; a command that needs stand-ins or the filter
starts through ``launcher.py``. The user's own programs (hooks, stdio MCP
servers) also get a tool cache folder of their own (``caches.py``). ``detect`` finds bubblewrap
(``MEWCODE_BWRAP`` or ``PATH``) and checks once that it can start.
"""

from __future__ import annotations

from .bwrap import Network, SandboxPolicy, bwrap_argv
from .caches import ToolCache, cache_owner
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
    "ToolCache",
    "bwrap_argv",
    "cache_owner",
    "detect",
    "find_bwrap",
    "probe",
]
