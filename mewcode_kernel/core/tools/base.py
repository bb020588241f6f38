"""The tool seam: a ``Tool`` the loop can run, described by its own metadata,
and a decorator that builds one from a typed async function (arguments
validated by pydantic).

Everything the rest of the core needs to know about a tool is on the tool:
whether it only reads, the permission rule family and rule names that cover
it, the argument a rule or a row shows, its path arguments, whether it walks
a directory tree, how its files count for context tracking, and whether a
background subagent may use it. No module outside a tool names a tool.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from ..errors import ToolError
from ..messages import ImageBlock, TextBlock
from ..providers.base import ToolSpec

if TYPE_CHECKING:
    from .context import RunContext

__all__ = [
    "FileChange",
    "FileEffect",
    "LargeOutput",
    "RuleFamily",
    "SearchSpec",
    "Tool",
    "ToolKind",
    "ToolOutput",
    "tool",
]

ToolKind = Literal["read", "edit", "exec", "other"]
"""What a call does, for the permission engine: reads, edits files, runs
commands or external tools, or something else."""

RuleFamily = Literal["read", "edit", "command", "python", "agent", "skill", "mcp", "other"]
"""How a permission rule's specifier is read for this tool: as paths
(``read``/``edit``), as a shell command (``command``), as Python code
(``python``), or as text matched against the tool's subject argument (the rest)."""

FileEffect = Literal["read", "edited"]
LargeOutput = Literal["offload", "reread"]


@dataclass(frozen=True, kw_only=True, slots=True)
class SearchSpec:
    """A tool that walks a directory tree: its path argument defaults to the
    root and ``pattern_arg`` may name paths of its own. With
    ``pattern_sets_base`` an absolute pattern is searched from its own base
    (glob); otherwise it narrows the path argument (grep's file filter)."""

    pattern_arg: str
    pattern_sets_base: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class FileChange:
    """What a call would change in one file, worked out before it runs:
    its text ``before`` (``None``: the file does not exist yet) and
    ``after``; ``whole_file`` for a write that replaces it."""

    path: str
    before: str | None
    after: str
    whole_file: bool
    #: what the change is when it is to a part of the file (a notebook cell:
    #: ``new code cell 3``, ``deleted cell 2``, ``moved cell from 2 to 5``)
    label: str | None = None
    #: a file name whose language colours the text (``cell.py``), when not ``path``'s
    syntax: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolOutput:
    """A tool's result when plain text is not enough: text and image parts,
    and whether it is an error the model should hear about."""

    content: list[TextBlock | ImageBlock]
    is_error: bool = False

    @classmethod
    def text(cls, text: str, *, is_error: bool = False) -> ToolOutput:
        return cls(content=[TextBlock(text=text)], is_error=is_error)


ToolRun = Callable[["RunContext", dict[str, Any]], Awaitable["str | ToolOutput"]]
ToolPreview = Callable[["RunContext", dict[str, Any]], "FileChange | None"]
ToolImplied = Callable[[Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True, kw_only=True, slots=True)
class Tool:
    """A tool offered to the model, with what the core needs to know about it.

    * ``read_only``: drives batching (read-only calls run concurrently) and
      plan mode (only read-only tools are offered). ``kind``: the category
      the permission engine judges the call by.
    * ``family`` and ``rule_names``: which permission rules cover the tool
      (its own name always does; ``Read``, ``Bash``, ... as Claude Code
      writes them) and how their specifiers are read. ``aliases``: other
      names the tool answers to in tool lists (a subagent definition's
      ``tools: Read, Grep``). ``subject_arg``: the
      argument a text or command specifier is matched against.
    * ``path_args``: arguments that are file-system paths, resolved and
      checked before the call; ``search``: set for tools that walk a tree.
      ``reads_paths``: a non-read tool that also reads its paths (an edit),
      so Read deny rules apply to it.
    * ``display_key``: the argument a row or card shows; ``file_effect``:
      how the call's ``path`` counts for context tracking; ``large_output``:
      what to do with a result too large for the conversation (``offload``
      it to a file, or tell the model to ``reread`` in parts).
    * ``background_ok``: offered to background subagents; ``system``:
      exempt from tool allowlists (``load_skill``); ``default_allow``:
      allowed unless a rule says otherwise, because what it does is checked
      on its own (a subagent's calls) or cannot change anything outside the
      agent (the task table). ``sandboxed``: the processes it starts run in
      the session's OS sandbox when one is active (``ctx.services.sandbox``),
      which the permission engine counts on.
    * ``preview``: for a tool that changes a file, what a call would change
      (before/after text, for a diff on the approval card), without doing it.
    * ``implied``: what a call leaves implicit, as arguments the permission
      check and the person asked see beside the given ones (the open
      notebook's ``path`` when none is given; the ``code`` of the cell
      ``notebook_run`` would run). A ``ToolError`` from it refuses the call
      before anyone is asked. The tool itself gets the arguments as given.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    kind: ToolKind
    run: ToolRun
    family: RuleFamily = "other"
    rule_names: frozenset[str] = frozenset()
    aliases: frozenset[str] = frozenset()
    subject_arg: str | None = None
    path_args: tuple[str, ...] = ()
    search: SearchSpec | None = None
    reads_paths: bool = False
    display_key: str | None = None
    file_effect: FileEffect | None = None
    large_output: LargeOutput = "offload"
    background_ok: bool = False
    system: bool = False
    default_allow: bool = False
    preview: ToolPreview | None = None
    implied: ToolImplied | None = None
    sandboxed: bool = False
    annotations: dict[str, Any] = field(default_factory=dict)

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name, description=self.description, input_schema=self.input_schema
        )

    @property
    def names_for_rules(self) -> frozenset[str]:
        """Every rule tool name that covers this tool (its own name included)."""
        return self.rule_names | {self.name}

    def subject(self, args: dict[str, Any]) -> str | None:
        """The value a text or command rule specifier is matched against."""
        key = self.subject_arg
        if key is None:
            required = self.input_schema.get("required") or list(
                self.input_schema.get("properties") or {}
            )
            key = required[0] if required else None
        value = args.get(key) if key else None
        return value if isinstance(value, str) else None

    def display(self, args: dict[str, Any]) -> str:
        """The one argument worth showing in a row, first line only (``""`` if none)."""
        value = args.get(self.display_key) if self.display_key else None
        if not isinstance(value, str) or not value:
            value = next((args[k] for k in self.path_args if isinstance(args.get(k), str)), None)
        if not isinstance(value, str) or not value:
            value = next((v for v in args.values() if isinstance(v, str) and v), "")
        return value.strip().splitlines()[0] if value.strip() else ""

    def checked_input(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``args`` with what the call leaves implicit (``implied``) added;
        raises ``ToolError`` when the call cannot be made as it is."""
        if self.implied is None:
            return dict(args)
        return {**args, **self.implied(args)}

    def change(self, ctx: RunContext, args: dict[str, Any]) -> FileChange | None:
        """What ``args`` would change (``None``: not a file change, or it cannot
        be worked out: an unreadable file, edit text not found). Never raises."""
        if self.preview is None:
            return None
        try:
            return self.preview(ctx, args)
        except (OSError, ValueError, TypeError, ToolError):
            return None

    async def call(self, ctx: RunContext, args: dict[str, Any]) -> str | ToolOutput:
        """Run the tool. Raises ``ToolError`` for anything the model should hear about."""
        return await self.run(ctx, args)


def tool(
    *,
    name: str | None = None,
    read_only: bool,
    kind: ToolKind,
    path_args: Iterable[str] = (),
    **meta: Any,
) -> Callable[[Callable[..., Awaitable[str | ToolOutput]]], Tool]:
    """Build a ``Tool`` from ``async def f(ctx: RunContext, arg: T, ...) -> str``.

    The docstring is the description; parameters after ``ctx`` become the JSON
    schema (use ``Annotated[T, Field(description=...)]`` for per-field help).
    ``meta`` sets the other ``Tool`` fields (``family``, ``rule_names``, ...).
    """

    def build(fn: Callable[..., Awaitable[str | ToolOutput]]) -> Tool:
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

        async def run(ctx: RunContext, args: dict[str, Any]) -> str | ToolOutput:
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
            **meta,
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
