"""The tool seam: a dataclass the loop can run, and a decorator that builds one
from a typed async function (arguments validated by pydantic)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from ..errors import ToolError
from ..providers.base import ToolSpec

__all__ = ["Tool", "ToolContext", "ToolKind", "ToolRegistry", "tool"]

ToolKind = Literal["read", "edit", "exec", "other"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolContext:
    """What a tool may know about where it runs."""

    root: Path
    session_dir: Path | None = None
    additional_dirs: tuple[Path, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Tool:
    """A tool offered to the model.

    ``read_only`` drives both batching (read-only calls run concurrently) and
    plan mode (only read-only tools are offered). ``kind`` tells the permission
    engine which category the call falls in; ``path_args`` names the arguments
    that are file-system paths, so they can be resolved and sandboxed.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    kind: ToolKind
    run: Callable[[ToolContext, dict[str, Any]], Awaitable[str]]
    path_args: tuple[str, ...] = ()
    annotations: dict[str, Any] = field(default_factory=dict)

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name, description=self.description, input_schema=self.input_schema
        )

    async def call(self, ctx: ToolContext, args: dict[str, Any]) -> str:
        """Run the tool. Raises ``ToolError`` for anything the model should hear about."""
        return await self.run(ctx, args)


def tool(
    *,
    name: str | None = None,
    read_only: bool,
    kind: ToolKind,
    path_args: Iterable[str] = (),
) -> Callable[[Callable[..., Awaitable[str]]], Tool]:
    """Build a ``Tool`` from ``async def f(ctx: ToolContext, arg: T, ...) -> str``.

    The docstring is the description; parameters after ``ctx`` become the JSON
    schema (use ``Annotated[T, Field(description=...)]`` for per-field help).
    """

    def build(fn: Callable[..., Awaitable[str]]) -> Tool:
        sig = inspect.signature(fn)
        hints = get_type_hints(fn, include_extras=True)
        fields: dict[str, Any] = {}
        for pname, param in list(sig.parameters.items())[1:]:
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[pname] = (hints[pname], default)
        model: type[BaseModel] = create_model(  # type: ignore[call-overload]
            f"{fn.__name__}_args", __config__=ConfigDict(extra="forbid"), **fields
        )
        schema = _clean_schema(model.model_json_schema())
        tool_name = name or fn.__name__

        async def run(ctx: ToolContext, args: dict[str, Any]) -> str:
            try:
                parsed = model.model_validate(args)
            except ValidationError as exc:
                raise ToolError(_describe_validation(tool_name, exc)) from None
            return await fn(ctx, **{k: getattr(parsed, k) for k in fields})

        return Tool(
            name=tool_name,
            description=inspect.cleandoc(fn.__doc__ or tool_name),
            input_schema=schema,
            read_only=read_only,
            kind=kind,
            run=run,
            path_args=tuple(path_args),
        )

    return build


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's titles: they cost tokens and tell the model nothing."""
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def _describe_validation(tool_name: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        parts.append(f"{loc}: {err['msg']}")
    return f"invalid arguments for {tool_name}: " + "; ".join(parts)


class ToolRegistry:
    """Tools by name, in a stable order (the order they were added)."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)

    def add(self, t: Tool) -> None:
        if t.name in self._tools:
            raise ValueError(f"tool {t.name!r} is already registered")
        self._tools[t.name] = t

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self, *, read_only_only: bool = False) -> list[ToolSpec]:
        return [t.spec() for t in self._tools.values() if t.read_only or not read_only_only]
