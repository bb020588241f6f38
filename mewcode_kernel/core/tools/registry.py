"""Toolsets and the registry that combines them.

A ``Toolset`` is a group of tools with a lifecycle (``async with``: connect,
close) whose tools may change between turns (an MCP server's list changed).
The ``ToolRegistry`` holds toolsets in the order they were added and shows
the loop one snapshot of their tools, taken by ``refresh`` between turns and
never in the middle of one: the tools a turn starts with are the tools it
ends with, and their order is deterministic (toolset order, then each
toolset's own order), so the cached prompt prefix holds.

A toolset offers a tool only while it can be used (``load_skill`` once there
are skills, the task tools once a task exists), so the set grows over a
session. A tool that joins goes after every tool already offered, which keep
their place: the definitions sent before stay byte-identical. A toolset whose
tools may be needed in the very turn that made them usable (a task the model
launched, a skill it installed) says so with ``joins_within_turn``; ``admit_joining`` then adds
them between two requests of a turn, and only adds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from types import TracebackType
from typing import Protocol, runtime_checkable

from .base import RuleFamily, Tool

__all__ = ["FunctionToolset", "ToolRegistry", "Toolset"]


@runtime_checkable
class Toolset(Protocol):
    """Tools that come and go together. ``tools()`` is read between turns;
    ``version`` changes whenever the list does."""

    name: str

    def tools(self) -> Sequence[Tool]: ...

    @property
    def version(self) -> int: ...

    async def __aenter__(self) -> Toolset: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None: ...


class FunctionToolset:
    """A fixed list of tools with nothing to open or close (the built-ins)."""

    def __init__(self, tools: Iterable[Tool], *, name: str = "tools") -> None:
        self.name = name
        self.version = 0
        self._tools = list(tools)

    def tools(self) -> Sequence[Tool]:
        return list(self._tools)

    async def __aenter__(self) -> FunctionToolset:
        return self

    async def __aexit__(self, *_: object) -> None:
        return None


class ToolRegistry:
    """The session's tools: toolsets in order, seen through a snapshot.

    ``ToolRegistry([tool, ...])`` wraps plain tools in one toolset; more
    ``toolsets`` follow it (entered with the registry). Entering
    the registry (``async with``) enters its toolsets; a toolset added while
    it is open is entered at once, and one removed is closed. ``conflicts``
    lists tools skipped because an earlier toolset had the name.
    """

    def __init__(self, tools: Iterable[Tool] = (), *, toolsets: Iterable[Toolset] = ()) -> None:
        self._toolsets: list[Toolset] = []
        self._base = FunctionToolset(tools, name="tools")
        self._toolsets.append(self._base)
        self._toolsets += [ts for ts in toolsets if ts is not self._base]
        self._snapshot: dict[str, Tool] = {}
        self._versions: tuple[tuple[int, int], ...] = ()
        self._open = False
        self._entered: dict[int, contextlib.AsyncExitStack] = {}
        self.conflicts: list[str] = []
        self.refresh()

    # --- the snapshot ----------------------------------------------------------

    def get(self, name: str) -> Tool | None:
        return self._snapshot.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._snapshot

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._snapshot.values()))

    def __len__(self) -> int:
        return len(self._snapshot)

    @property
    def names(self) -> list[str]:
        return list(self._snapshot)

    def rule_families(self) -> dict[str, RuleFamily]:
        """Every name a rule may give a tool here (its own or an alias), with
        the family its specifiers are read in."""
        found: dict[str, RuleFamily] = {}
        for t in self._snapshot.values():
            for name in t.names_for_rules:
                found.setdefault(name, t.family)
        return found

    def refresh(self) -> bool:
        """Take a new snapshot if a toolset changed; ``True`` if it did. Call
        between turns only."""
        versions = tuple((id(ts), ts.version) for ts in self._toolsets)
        if versions == self._versions:
            return False
        found: dict[str, Tool] = {}
        conflicts: list[str] = []
        for ts in self._toolsets:
            for t in ts.tools():
                if t.name in found:
                    conflicts.append(f"{t.name} (from {ts.name})")
                    continue
                found[t.name] = t
        # tools already offered keep their place; a tool that joins goes last
        snapshot = {name: found[name] for name in self._snapshot if name in found}
        snapshot.update((name, t) for name, t in found.items() if name not in snapshot)
        changed = list(snapshot.items()) != list(self._snapshot.items())
        self._snapshot, self._versions, self.conflicts = snapshot, versions, conflicts
        return changed

    def admit_joining(self) -> bool:
        """Within a turn: add, at the end, the tools that toolsets marked
        ``joins_within_turn`` offer now and the snapshot lacks (never removes
        or replaces one); ``True`` if any joined."""
        joined = False
        for ts in self._toolsets:
            if not getattr(ts, "joins_within_turn", False):
                continue
            for t in ts.tools():
                if t.name not in self._snapshot:
                    self._snapshot[t.name] = t
                    joined = True
        return joined

    # --- toolsets --------------------------------------------------------------

    @property
    def toolsets(self) -> list[Toolset]:
        return list(self._toolsets)

    def add(self, t: Tool) -> None:
        """Add one tool to the registry's own toolset (seen after ``refresh``;
        at once when nothing else changed)."""
        if t.name in self._snapshot or any(x.name == t.name for x in self._base.tools()):
            raise ValueError(f"tool {t.name!r} is already registered")
        self._base._tools.append(t)
        self._base.version += 1
        self.refresh()

    def add_toolset_now(self, toolset: Toolset) -> None:
        """Add a toolset with nothing to open (before the registry is entered)
        and take a snapshot that includes it."""
        if self._open:
            raise RuntimeError("the registry is open: use add_toolset")
        if toolset not in self._toolsets:
            self._toolsets.append(toolset)
        self.refresh()

    async def add_toolset(self, toolset: Toolset) -> None:
        """Add ``toolset`` (entered now if the registry is open); its tools
        join at the next ``refresh``."""
        if toolset in self._toolsets:
            return
        if self._open:
            await self._enter(toolset)
        self._toolsets.append(toolset)

    async def remove_toolset(self, toolset: Toolset) -> None:
        """Remove ``toolset`` and close it; its tools leave at the next ``refresh``."""
        if toolset not in self._toolsets or toolset is self._base:
            return
        self._toolsets.remove(toolset)
        stack = self._entered.pop(id(toolset), None)
        if stack is not None:
            await stack.aclose()

    async def _enter(self, toolset: Toolset) -> None:
        stack = contextlib.AsyncExitStack()
        await stack.enter_async_context(toolset)
        self._entered[id(toolset)] = stack

    async def __aenter__(self) -> ToolRegistry:
        self._open = True
        for ts in self._toolsets:
            if id(ts) not in self._entered:
                await self._enter(ts)
        return self

    async def __aexit__(self, *_: object) -> None:
        self._open = False
        entered, self._entered = self._entered, {}
        errors: list[BaseException] = []
        for stack in reversed(list(entered.values())):
            try:
                await stack.aclose()
            except Exception as exc:  # one toolset failing to close must not keep the others open
                errors.append(exc)
        if errors:
            raise errors[0]
