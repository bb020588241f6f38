"""A server asks the person for input (MCP elicitation, form mode).

The request becomes an ``ElicitationRequest`` (the server, its message and
the form's fields, read from its JSON schema) handed to whoever answers the
session's approvals for the running cell (``ApprovalFlow.elicit``: the
notebook's form card); with nobody to ask (a headless run, a background
task) it is declined. The protocol allows only a flat object of strings,
numbers, integers, booleans and string enums: any other schema is refused
with a sentence saying why (the server gets an error, the person a notice),
and so is URL mode, which would send the person to a page MewCode cannot
vouch for. An accepted answer is checked against the fields again before
it goes back: a front end cannot send what the form does not allow.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..events import Notice

__all__ = [
    "ElicitField",
    "ElicitationAnswer",
    "ElicitationHandler",
    "ElicitationRequest",
    "Elicitations",
    "InvalidSchema",
    "check_answer",
    "parse_schema",
]

FieldKind = Literal["string", "number", "integer", "boolean", "array"]
_KINDS = ("string", "number", "integer", "boolean", "array")  # array: several choices
_FORMATS = ("email", "uri", "date", "date-time")
_MAX_FIELDS = 50
_MAX_TEXT = 2000  # characters of a message, a title or a description shown


class InvalidSchema(ValueError):
    """A schema elicitation does not allow (the message says what)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ElicitField:
    name: str
    kind: FieldKind
    title: str = ""
    description: str = ""
    required: bool = False
    enum: tuple[str, ...] = ()
    enum_names: tuple[str, ...] = ()
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ElicitationRequest:
    """What a server asks the person: shown as a form."""

    server: str
    message: str
    fields: tuple[ElicitField, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class ElicitationAnswer:
    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] | None = None


ElicitationHandler = Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]]


def _text(value: Any) -> str:
    return str(value)[:_MAX_TEXT] if isinstance(value, str) else ""


def parse_schema(schema: Any) -> tuple[ElicitField, ...]:
    """The fields of a requested schema; ``InvalidSchema`` for anything else."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise InvalidSchema("the schema is not an object")
    props = schema.get("properties")
    if not isinstance(props, Mapping) or not props:
        raise InvalidSchema("the schema has no properties")
    if len(props) > _MAX_FIELDS:
        raise InvalidSchema(f"the schema has {len(props)} fields (at most {_MAX_FIELDS})")
    required = schema.get("required") or []
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise InvalidSchema("`required` is not a list of names")
    unknown = [r for r in required if r not in props]
    if unknown:
        raise InvalidSchema(f"`required` names fields it does not define: {', '.join(unknown)}")
    return tuple(_field(str(name), spec, name in required) for name, spec in props.items())


def _field(name: str, spec: Any, required: bool) -> ElicitField:
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name):
        raise InvalidSchema(f"field name {name[:40]!r} is not a plain name")
    if not isinstance(spec, Mapping):
        raise InvalidSchema(f"field {name!r} has no schema")
    kind = spec.get("type")
    if kind not in _KINDS:
        raise InvalidSchema(
            f"field {name!r} is of type {kind!r}; a form takes only strings, numbers, "
            "integers, booleans and choices of strings (no nested objects)"
        )
    choices = spec
    if kind == "array":  # a multiple choice: its items are string choices, nothing else
        items = spec.get("items")
        if not isinstance(items, Mapping) or not (items.get("enum") or items.get("anyOf")):
            raise InvalidSchema(
                f"field {name!r} is a list that is not a choice of strings; a form takes "
                "only strings, numbers, integers, booleans and choices of strings"
            )
        if items.get("type", "string") != "string":
            raise InvalidSchema(f"field {name!r} has choices that are not strings")
        choices = {"enum": items.get("enum") or items.get("anyOf"), **items}
    enum = choices.get("enum") or choices.get("oneOf")
    values: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    if enum is not None:
        if kind not in ("string", "array") or not isinstance(enum, list) or not enum:
            raise InvalidSchema(f"field {name!r} has choices that are not a list of strings")
        if all(isinstance(v, Mapping) for v in enum):  # oneOf: [{const, title}]
            values = tuple(str(v.get("const")) for v in enum)
            names = tuple(_text(v.get("title")) or str(v.get("const")) for v in enum)
        elif all(isinstance(v, str) for v in enum):
            values = tuple(enum)
            raw = choices.get("enumNames")
            names = tuple(str(n) for n in raw) if isinstance(raw, list) else values
        else:
            raise InvalidSchema(f"field {name!r} has choices that are not strings")
        if len(names) != len(values):
            raise InvalidSchema(f"field {name!r} names {len(names)} of {len(values)} choices")
    fmt = spec.get("format")
    if fmt is not None and (kind != "string" or fmt not in _FORMATS):
        raise InvalidSchema(f"field {name!r} has a format forms do not know ({fmt!r})")

    def number(key: str) -> float | None:
        value = spec.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidSchema(f"field {name!r}: {key} is not a number")
        return float(value)

    lengths = [number("minLength"), number("maxLength")]
    if kind == "array":  # how many may be chosen
        lengths = [number("minItems"), number("maxItems")]
    return ElicitField(
        name=name,
        kind=kind,
        title=_text(spec.get("title")),
        description=_text(spec.get("description")),
        required=required,
        enum=values,
        enum_names=names,
        default=spec.get("default"),
        minimum=number("minimum"),
        maximum=number("maximum"),
        min_length=int(lengths[0]) if lengths[0] is not None else None,
        max_length=int(lengths[1]) if lengths[1] is not None else None,
        format=fmt,
    )


def check_answer(
    fields: tuple[ElicitField, ...], content: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``content`` as the fields allow it (numbers from text, no unknown
    keys); ``ValueError`` saying which field is wrong."""
    given = dict(content or {})
    extra = set(given) - {f.name for f in fields}
    if extra:
        raise ValueError(f"unknown field(s): {', '.join(sorted(extra))}")
    out: dict[str, Any] = {}
    for f in fields:
        value = given.get(f.name)
        if value is None or value == "":
            if f.required:
                raise ValueError(f"{f.title or f.name} is required")
            continue
        out[f.name] = _value(f, value)
    return out


def _value(f: ElicitField, value: Any) -> Any:
    label = f.title or f.name
    if f.kind == "array":
        picked = [value] if isinstance(value, str) else value
        if not isinstance(picked, list | tuple) or not all(isinstance(v, str) for v in picked):
            raise ValueError(f"{label} must be a list of choices")
        if any(v not in f.enum for v in picked) or len(set(picked)) != len(picked):
            raise ValueError(f"{label} must be chosen from {', '.join(f.enum)}, each once")
        if f.min_length is not None and len(picked) < f.min_length:
            raise ValueError(f"{label} needs at least {f.min_length} choice(s)")
        if f.max_length is not None and len(picked) > f.max_length:
            raise ValueError(f"{label} takes at most {f.max_length} choice(s)")
        return list(picked)
    if f.kind == "boolean":
        if not isinstance(value, bool):
            raise ValueError(f"{label} must be yes or no")
        return value
    if f.kind in ("number", "integer"):
        try:
            number = float(value) if not isinstance(value, bool) else None
        except (TypeError, ValueError):
            number = None
        if number is None or number != number or number in (float("inf"), float("-inf")):
            raise ValueError(f"{label} must be a number")
        if f.kind == "integer":
            if number != int(number):
                raise ValueError(f"{label} must be a whole number")
            number = int(number)
        if f.minimum is not None and number < f.minimum:
            raise ValueError(f"{label} must be at least {f.minimum:g}")
        if f.maximum is not None and number > f.maximum:
            raise ValueError(f"{label} must be at most {f.maximum:g}")
        return number
    text = str(value)
    if f.enum and text not in f.enum:
        raise ValueError(f"{label} must be one of {', '.join(f.enum)}")
    if f.min_length is not None and len(text) < f.min_length:
        raise ValueError(f"{label} must have at least {f.min_length} characters")
    if f.max_length is not None and len(text) > f.max_length:
        raise ValueError(f"{label} must have at most {f.max_length} characters")
    if f.format == "email" and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", text):
        raise ValueError(f"{label} must be an e-mail address")
    return text


class Elicitations:
    """The session's side of elicitation: ``current()`` is who answers now
    (the running cell's form card; ``None``: nobody, so requests are
    declined); ``notify`` leaves the person a notice."""

    def __init__(self, notify: Callable[[Notice], None]) -> None:
        self.current: Callable[[], ElicitationHandler | None] = lambda: None
        self._notify = notify

    def callback(self, server: str) -> _Answerer:
        """The SDK's ``elicitation_callback`` for ``server``."""
        return _Answerer(self, server)


class _Answerer:
    """One server's elicitation callback. ``emit``: the sink of the call in
    progress (set by the connection), so what it says shows in that turn;
    else the notice waits for the next one."""

    def __init__(self, owner: Elicitations, server: str) -> None:
        self._owner = owner
        self.server = server
        self.emit: Callable[[Any], None] | None = None

    def _say(self, level: Literal["info", "warning"], message: str) -> None:
        notice = Notice(level=level, message=message)
        if self.emit is not None:
            self.emit(notice)
        else:
            self._owner._notify(notice)

    async def __call__(self, _context: Any, params: Any) -> Any:
        from mcp import types

        server = self.server
        if getattr(params, "mode", None) == "url":
            self._say(
                "warning",
                f"MCP server {server!r} asked to send you to a web page; MewCode declined "
                "(it shows forms only).",
            )
            return types.ElicitResult(action="decline")
        try:
            fields = parse_schema(getattr(params, "requested_schema", None))
        except InvalidSchema as exc:
            self._say(
                "warning",
                f"MCP server {server!r} asked for input with a form MewCode cannot show "
                f"({exc}); it was refused.",
            )
            return types.ErrorData(
                code=types.INVALID_PARAMS, message=f"invalid elicitation schema: {exc}"
            )
        handler = self._owner.current()
        if handler is None:
            self._say(
                "info",
                f"MCP server {server!r} asked for input; nobody can answer here (a headless "
                "run), so it was declined.",
            )
            return types.ElicitResult(action="decline")
        request = ElicitationRequest(server=server, message=_text(params.message), fields=fields)
        reply = await handler(request)
        if reply.action != "accept":
            return types.ElicitResult(action=reply.action)
        try:
            content = check_answer(fields, reply.content)
        except ValueError as exc:
            self._say("warning", f"The answer was not sent: {exc}.")
            return types.ElicitResult(action="cancel")
        return types.ElicitResult(action="accept", content=content)
