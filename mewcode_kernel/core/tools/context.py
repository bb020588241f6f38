"""What a tool sees when it runs: the ``RunContext``.

It carries the project (root, allowed directories and the one path resolver,
``workspace``), the session's folder, the call being run, the calling
agent's ``ToolServices`` (only what tools use: the agent's tools and active
skills, the OS sandbox, the environment of child processes, and asking a
person), an event sink for progress and nested-agent events, and the
turn's cancellation scope.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..child_env import ChildEnv
from ..events import AgentEvent, ToolProgress
from ..fs import Workspace
from ..messages import ToolUseBlock

if TYPE_CHECKING:
    from ..sandbox import Sandbox

__all__ = [
    "AgentServices",
    "CancelScope",
    "DescribedTool",
    "FileCheckpoints",
    "NamedTool",
    "RunContext",
    "ToolServices",
    "ToolView",
]


class FileCheckpoints(Protocol):
    """Where the file tools report their changes, so a turn can be reverted
    (``core.checkpoints.TurnCheckpoints``): ``before_write`` just before a
    file changes, ``after_write`` with what it now holds; ``note_command``
    for a command whose changes to files are not followed."""

    def before_write(self, path: Path, shown: str) -> None: ...

    def after_write(self, path: Path, data: bytes) -> None: ...

    def note_command(self, summary: str) -> None:
        """Blocking (it may take a git snapshot): call it from a worker thread."""
        ...

    def before_cells(
        self,
        path: Path,
        shown: str,
        order: Sequence[str],
        cells: Mapping[str, tuple[int, dict[str, Any]] | None],
    ) -> None:
        """A notebook's cells are about to change (``notebook_edit``): its
        cell order, and each touched cell's (index, JSON), ``None`` if new."""
        ...

    def after_cells(self, path: Path, sources: Mapping[str, str | None]) -> None:
        """The touched cells' sources after the change (``None``: deleted)."""
        ...


class NamedTool(Protocol):
    """A tool as other tools see it: its name and the names rules give it."""

    @property
    def name(self) -> str: ...

    @property
    def names_for_rules(self) -> frozenset[str]: ...


class DescribedTool(Protocol):
    """A tool as the model is told of it: name, description, input schema."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> dict[str, Any]: ...


class ToolView(Protocol):
    """The calling agent's tools, as tools and the permission check read them."""

    def __iter__(self) -> Iterator[Any]: ...

    def rule_families(self) -> Mapping[str, Any]:
        """Every name a rule may give a tool here, with how its specifiers read."""
        ...


class ToolServices(Protocol):
    """What tools use of the agent running them (``ctx.services``), read when
    the tool runs, so it always sees the agent of the moment."""

    @property
    def tools(self) -> ToolView:
        """The calling agent's tools."""
        ...

    @property
    def active_skills(self) -> MutableMapping[str, str]:
        """The skills this agent's conversation activated (name → rendered
        instructions, in first-activation order; ``load_skill`` fills it)."""
        ...

    @property
    def sandbox(self) -> Sandbox | None:
        """The session's OS sandbox; spawn processes through ``sandbox.wrap``."""
        ...

    def searchable_tools(self) -> Sequence[DescribedTool]:
        """The tools left out of this agent's requests for want of room, which
        ``search_tools`` looks through (empty: every tool is offered)."""
        ...

    def offer_tools(self, names: Sequence[str]) -> None:
        """Offer these searchable tools from the next request on, after the
        tools already offered (``search_tools`` calls it with what it found)."""
        ...

    @property
    def child_env(self) -> ChildEnv:
        """The session's rule for the environment of the processes tools start."""
        ...

    async def ask_person(self, ctx: RunContext, reason: str) -> bool:
        """Ask a person, now, to approve something about the running call
        (``ctx.call``) that no rule or policy may approve: ``False`` when
        nobody can be asked (headless), when they say no, or in ``dontAsk``."""
        ...


#: The former name of ``ToolServices``.
AgentServices = ToolServices


class CancelScope:
    """The turn a call belongs to. ``cancel`` (the turn was interrupted) runs
    the callbacks registered with ``on_cancel``; work a tool hands to the task
    manager is not bound to it and goes on."""

    def __init__(self) -> None:
        self.cancelled = False
        self._callbacks: list[Callable[[], Any]] = []

    def on_cancel(self, callback: Callable[[], Any]) -> None:
        if self.cancelled:
            callback()
        else:
            self._callbacks.append(callback)

    def cancel(self) -> None:
        if self.cancelled:
            return
        self.cancelled = True
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()


def _discard(event: AgentEvent) -> None:
    pass


@dataclass(frozen=True, kw_only=True, slots=True)
class RunContext:
    """Where and how a tool runs.

    ``workspace`` (derived from ``root`` and ``additional_dirs`` when not
    given) resolves every path argument, so a tool and the permission check
    see the same file. ``emit`` must be called on the event loop's thread.
    """

    root: Path
    session_dir: Path | None = None
    additional_dirs: tuple[Path, ...] = ()
    workspace: Workspace = None  # type: ignore[assignment]
    call: ToolUseBlock | None = None
    services: ToolServices | None = None
    emit: Callable[[AgentEvent], None] = _discard
    scope: CancelScope = field(default_factory=CancelScope)
    checkpoints: FileCheckpoints | None = None
    #: the calling role may change nothing (``Explore``, ``Plan``, their forks):
    #: what it starts runs with the file system read-only
    read_only: bool = False

    def __post_init__(self) -> None:
        if self.workspace is None:
            object.__setattr__(self, "workspace", Workspace(self.root, self.additional_dirs))

    def progress(self, *, output: str = "", status: str = "") -> None:
        """Report progress of the running call (no-op outside a call)."""
        if self.call is not None and (output or status):
            self.emit(ToolProgress(call=self.call, output=output, status=status))

    def child_env(self) -> ChildEnv:
        """The environment rule for processes this call starts: the session's
        (its allowlist and known secrets), or, without one, the default rule
        with the secrets read from the environment."""
        found = getattr(self.services, "child_env", None)  # services of any shape
        return found if isinstance(found, ChildEnv) else ChildEnv()

    def require_services(self) -> ToolServices:
        """The session's services; a ``ToolError`` for tools run without a session."""
        if self.services is None:
            from ..errors import ToolError

            raise ToolError("this tool needs a running agent session")
        return self.services
